// cli/cmd_convert.cpp — `nexttok convert llama2c MODEL.bin TOKENIZER.bin -o OUT.gguf`: a llama2.c
// checkpoint (legacy header or the v1 "ak42" export, float32) and its tokenizer.bin to a GGUF of
// the llama architecture with the Llama 2 SentencePiece vocab.
// Owns: the llama2.c formats and the mapping of their pieces back to GGUF's (see
// ../shared/models/README.md). Tensors are written unchanged, in the checkpoint's order.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/mapped_file.h"
#include "core/strings.h"
#include "gguf/gguf_writer.h"
#include "model/arch_table.h"

namespace nt::cli {

namespace {

struct Llama2cConfig {
  int32_t dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0, seq_len = 0;
  bool shared_classifier = true;
};

struct PlannedTensor {
  std::string name;
  std::vector<uint64_t> ne;
  const uint8_t* data;
};

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Reads the header and lays out every tensor of the checkpoint (validated against the file size).
Result<std::vector<PlannedTensor>> plan_checkpoint(const MappedFile& m, Llama2cConfig& c) {
  const uint8_t* d = m.data();
  const uint64_t size = m.size();
  uint64_t pos = 0;
  bool v1 = false;
  if (size >= 8 && load<uint32_t>(d) == 0x616b3432u) {  // "ak42": llama2.c export v1+
    const int32_t version = load<int32_t>(d + 4);
    if (version != 1)
      return make_error("%s: llama2.c export version %d is not supported (only the legacy format and "
                        "version 1, float32)", m.path().c_str(), version);
    v1 = true;
    pos = 8;
  }
  if (size < pos + 28) return make_error("%s: too small for a llama2.c checkpoint header (%llu bytes)", m.path().c_str(), static_cast<unsigned long long>(size));
  int32_t h[7];
  std::memcpy(h, d + pos, sizeof(h));
  c.dim = h[0]; c.hidden_dim = h[1]; c.n_layers = h[2]; c.n_heads = h[3]; c.n_kv_heads = h[4];
  c.vocab_size = h[5]; c.seq_len = h[6];
  if (v1) {
    if (size < pos + 29) return make_error("%s: truncated llama2.c v1 header", m.path().c_str());
    c.shared_classifier = d[pos + 28] != 0;
    pos = 256;  // the v1 header is padded to 256 bytes
  } else {
    // legacy: a negative vocab size means the classifier is stored separately
    c.shared_classifier = c.vocab_size > 0;
    if (c.vocab_size < 0) c.vocab_size = -c.vocab_size;
    pos = 28;
  }
  auto bad = [&](const char* what) {
    return make_error("%s: not a llama2.c checkpoint: %s (dim %d, hidden_dim %d, n_layers %d, n_heads %d, "
                      "n_kv_heads %d, vocab_size %d, seq_len %d)", m.path().c_str(), what, c.dim, c.hidden_dim,
                      c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len);
  };
  if (c.dim <= 0 || c.hidden_dim <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 ||
      c.vocab_size <= 0 || c.seq_len <= 0)
    return bad("a header value is zero or negative");
  if (c.dim > (1 << 20) || c.hidden_dim > (1 << 22) || c.n_layers > 4096 || c.vocab_size > (1 << 24) || c.seq_len > (1 << 24))
    return bad("a header value is implausibly large");
  if (c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0) return bad("heads do not divide dim / each other");
  const uint64_t dim = static_cast<uint64_t>(c.dim), hid = static_cast<uint64_t>(c.hidden_dim);
  const uint64_t L = static_cast<uint64_t>(c.n_layers), V = static_cast<uint64_t>(c.vocab_size);
  const uint64_t head = dim / static_cast<uint64_t>(c.n_heads), kv_dim = head * static_cast<uint64_t>(c.n_kv_heads);

  std::vector<PlannedTensor> out;
  Status err;
  auto take = [&](const std::string& name, std::vector<uint64_t> ne) -> const uint8_t* {
    uint64_t n = 4;
    for (uint64_t x : ne) n *= x;
    if (!err.ok()) return nullptr;
    if (pos > size || n > size - pos) {
      err = make_error("%s: truncated llama2.c checkpoint: %s needs %llu bytes at offset %llu but the file has %llu",
                       m.path().c_str(), name.c_str(), static_cast<unsigned long long>(n),
                       static_cast<unsigned long long>(pos), static_cast<unsigned long long>(size));
      return nullptr;
    }
    const uint8_t* p = d + pos;
    pos += n;
    if (!name.empty()) out.push_back({name, std::move(ne), p});
    return p;
  };
  auto per_layer = [&](const char* kind, std::vector<uint64_t> ne) {
    for (uint64_t i = 0; i < L; ++i) take(str_printf("blk.%llu.%s", static_cast<unsigned long long>(i), kind), ne);
  };
  if (v1) {
    per_layer("attn_norm.weight", {dim});
    per_layer("ffn_norm.weight", {dim});
    take("output_norm.weight", {dim});
    take("token_embd.weight", {dim, V});
  } else {
    take("token_embd.weight", {dim, V});
    per_layer("attn_norm.weight", {dim});
  }
  per_layer("attn_q.weight", {dim, dim});
  per_layer("attn_k.weight", {dim, kv_dim});
  per_layer("attn_v.weight", {dim, kv_dim});
  per_layer("attn_output.weight", {dim, dim});
  if (!v1) per_layer("ffn_norm.weight", {dim});
  per_layer("ffn_gate.weight", {dim, hid});
  per_layer("ffn_down.weight", {hid, dim});
  per_layer("ffn_up.weight", {dim, hid});
  if (!v1) {
    take("output_norm.weight", {dim});
    take("", {static_cast<uint64_t>(c.seq_len), head});  // freq_cis_real + freq_cis_imag (unused)
  }
  if (!c.shared_classifier) take("output.weight", {dim, V});
  if (!err.ok()) return err.error();
  return out;
}

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
};

// Decodes one UTF-8 code point at s (returns bytes used, 0 if invalid).
int utf8_decode(const std::string& s, uint32_t& cp) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  if (s.empty()) return 0;
  if (p[0] < 0x80) { cp = p[0]; return 1; }
  if ((p[0] & 0xE0) == 0xC0 && s.size() >= 2 && (p[1] & 0xC0) == 0x80) {
    cp = static_cast<uint32_t>(((p[0] & 0x1F) << 6) | (p[1] & 0x3F));
    return 2;
  }
  return 0;
}

// tokenizer.bin: int32 max_token_length, then per token float32 score, int32 length, bytes.
// Pieces are mapped back to GGUF's SentencePiece rendering (see the file comment).
Result<Vocab> read_tokenizer(const std::string& path, int32_t n_vocab) {
  auto m = MappedFile::open(path);
  if (!m) return m.error();
  const uint8_t* d = m->data();
  const uint64_t size = m->size();
  uint64_t pos = 4;
  if (size < 4) return make_error("%s: too small for a llama2.c tokenizer", path.c_str());
  Vocab v;
  v.tokens.reserve(static_cast<size_t>(n_vocab));
  for (int32_t id = 0; id < n_vocab; ++id) {
    if (size - pos < 8)
      return make_error("%s: truncated at byte %llu: token %d of the %d the checkpoint's vocab_size needs",
                        path.c_str(), static_cast<unsigned long long>(pos), id, n_vocab);
    const float score = load<float>(d + pos);
    const int32_t len = load<int32_t>(d + pos + 4);
    pos += 8;
    if (len < 0 || static_cast<uint64_t>(len) > size - pos)
      return make_error("%s: token %d at byte %llu has length %d beyond the end of the file", path.c_str(), id,
                        static_cast<unsigned long long>(pos - 4), len);
    std::string piece(reinterpret_cast<const char*>(d + pos), static_cast<size_t>(len));
    pos += static_cast<uint64_t>(len);
    int32_t type = 1;  // normal
    uint32_t cp = 0;
    if (piece == "\n<s>\n" || piece == "\n</s>\n") {
      piece = piece.substr(1, piece.size() - 2);
      type = 3;  // control
    } else if (id == 0 && piece == "<unk>") {
      type = 2;  // unknown
    } else if (id >= 3 && id < 259 && utf8_decode(piece, cp) == static_cast<int>(piece.size()) &&
               cp == static_cast<uint32_t>(id - 3)) {
      piece = str_printf("<0x%02X>", cp);  // byte token, stored as the character U+00XX
      type = 6;
    } else {
      std::string out;
      for (char ch : piece) out += ch == ' ' ? std::string("\xE2\x96\x81") : std::string(1, ch);  // ' ' -> U+2581
      piece = std::move(out);
    }
    v.tokens.push_back(std::move(piece));
    v.scores.push_back(score);
    v.types.push_back(type);
  }
  if (pos != size)
    std::fprintf(stderr, "nexttok convert: note: %s has %llu bytes after token %d (ignored)\n", path.c_str(),
                 static_cast<unsigned long long>(size - pos), n_vocab - 1);
  return v;
}

std::string stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  const size_t dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

}  // namespace

int cmd_convert(int argc, char** argv) {
  CLI::App app{"Convert a model to GGUF. Formats:\n"
               "  llama2c MODEL.bin TOKENIZER.bin  a llama2.c checkpoint (legacy or v1 float32 export) and\n"
               "                                   its tokenizer.bin -> llama architecture, Llama 2 vocab",
               "nexttok convert"};
  std::string format, model_path, tok_path, out, name;
  float rms_eps = 1e-5f;
  app.add_option("format", format, "source format (llama2c)")->required();
  app.add_option("model", model_path, "llama2.c checkpoint (.bin)")->required();
  app.add_option("tokenizer", tok_path, "llama2.c tokenizer.bin")->required();
  app.add_option("-o,--output", out, "output GGUF")->required();
  app.add_option("--name", name, "general.name (default: the checkpoint's file name without extension)");
  app.add_option("--rms-eps", rms_eps, "RMSNorm epsilon recorded in the file (llama2.c uses 1e-5)");
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (format != "llama2c") {
    std::fprintf(stderr, "nexttok convert: unknown format '%s' (supported: llama2c)\n", format.c_str());
    return kExitUsage;
  }

  if (auto s = GgufWriter::check_destination(out, {model_path, tok_path}); !s) return fail("convert", s.error().message);
  auto m = MappedFile::open(model_path);
  if (!m) return fail("convert", m.error().message);
  Llama2cConfig c;
  auto tensors = plan_checkpoint(*m, c);
  if (!tensors) return fail("convert", tensors.error().message);
  auto vocab = read_tokenizer(tok_path, c.vocab_size);
  if (!vocab) return fail("convert", vocab.error().message);
  std::fprintf(stderr, "convert: %s: dim %d, hidden_dim %d, %d layers, %d heads, %d KV heads, vocab %d, seq_len %d, %s classifier\n",
               model_path.c_str(), c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size,
               c.seq_len, c.shared_classifier ? "shared" : "separate");

  GgufWriter w;
  const std::string arch = arch_info(Arch::Llama).name, a = arch + ".";  // llama2.c models are llama
  w.set_str("general.architecture", arch);
  w.set_str("general.name", name.empty() ? stem(model_path) : name);
  w.set_u32("general.file_type", 0);  // all F32
  w.set_u32(a + "context_length", static_cast<uint32_t>(c.seq_len));
  w.set_u32(a + "embedding_length", static_cast<uint32_t>(c.dim));
  w.set_u32(a + "feed_forward_length", static_cast<uint32_t>(c.hidden_dim));
  w.set_u32(a + "block_count", static_cast<uint32_t>(c.n_layers));
  w.set_u32(a + "attention.head_count", static_cast<uint32_t>(c.n_heads));
  w.set_u32(a + "attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  w.set_u32(a + "rope.dimension_count", static_cast<uint32_t>(c.dim / c.n_heads));
  w.set_f32(a + "attention.layer_norm_rms_epsilon", rms_eps);
  w.set_u32(a + "vocab_size", static_cast<uint32_t>(c.vocab_size));
  w.set_u32("general.alignment", 32);
  w.set_str("tokenizer.ggml.model", "llama");
  w.set_str("tokenizer.ggml.pre", "default");
  w.set_str_array("tokenizer.ggml.tokens", vocab->tokens);
  w.set_f32_array("tokenizer.ggml.scores", vocab->scores);
  w.set_i32_array("tokenizer.ggml.token_type", vocab->types);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_eos_token", false);
  for (const auto& t : *tensors) w.add_tensor(t.name, DType::F32, t.ne);
  if (auto s = w.begin(out, {model_path, tok_path}); !s) return fail("convert", s.error().message);
  for (size_t i = 0; i < tensors->size(); ++i)
    if (auto s = w.write_tensor_data((*tensors)[i].data, w.tensor_bytes(i)); !s) return fail("convert", s.error().message);
  if (auto s = w.finish(); !s) return fail("convert", s.error().message);
  std::fprintf(stderr, "convert: wrote %s (%zu tensors, %s)\n", out.c_str(), tensors->size(),
               format_bytes(w.total_bytes()).c_str());
  return kExitOk;
}

}  // namespace nt::cli
