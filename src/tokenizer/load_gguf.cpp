// Building a Vocab from the tokenizer.ggml.* keys of a GGUF file.
#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/strings.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace nt {

struct TokenizerBuilder {
  static std::unique_ptr<Tokenizer> make(std::unique_ptr<Vocab> v) {
    return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(v)));
  }
};

Result<std::unique_ptr<Tokenizer>> make_tokenizer(std::unique_ptr<Vocab> v) { return TokenizerBuilder::make(std::move(v)); }
Result<std::unique_ptr<Tokenizer>> load_hf_json(std::string_view json);  // load_hf_json.cpp

namespace {

int32_t id_key(const GgufFile& f, const char* key, int32_t n_vocab, int32_t dflt) {
  auto v = f.get_i64(key);
  if (!v) return dflt;
  if (*v < 0 || *v >= n_vocab) return -1;
  return static_cast<int32_t>(*v);
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const GgufFile& f) {
  auto model = f.get_str("tokenizer.ggml.model");
  if (!model) return make_error("%s: no tokenizer in this GGUF (tokenizer.ggml.model is missing)", f.path().c_str());
  auto v = std::make_unique<Vocab>();
  v->model_name = std::string(*model);
  if (auto pre = f.get_str("tokenizer.ggml.pre")) v->pre = std::string(*pre);

  const GgufValue* tokens = f.get_array("tokenizer.ggml.tokens");
  if (!tokens || tokens->elem_type != GgufType::STRING || tokens->n == 0)
    return make_error("%s: tokenizer.ggml.tokens is missing or not a string array", f.path().c_str());
  const int32_t n = static_cast<int32_t>(tokens->strs.size());
  size_t n_bytes = 0;
  for (auto s : tokens->strs) n_bytes += s.size();
  v->text.reserve(static_cast<size_t>(n), n_bytes);
  for (auto s : tokens->strs) v->text.push_back(s);

  if (const GgufValue* sc = f.get_array("tokenizer.ggml.scores")) {
    if (sc->n != static_cast<uint64_t>(n) || !(sc->elem_type == GgufType::FLOAT32 || sc->elem_type == GgufType::FLOAT64))
      return make_error("%s: tokenizer.ggml.scores has %llu entries for %d tokens", f.path().c_str(),
                        static_cast<unsigned long long>(sc->n), n);
    v->score.resize(n);
    for (int32_t i = 0; i < n; ++i) v->score[i] = static_cast<float>(sc->num_at(i));
  }
  if (const GgufValue* ty = f.get_array("tokenizer.ggml.token_type")) {
    if (ty->n != static_cast<uint64_t>(n) || ty->elem_type == GgufType::STRING || ty->elem_type == GgufType::ARRAY)
      return make_error("%s: tokenizer.ggml.token_type has %llu entries for %d tokens", f.path().c_str(),
                        static_cast<unsigned long long>(ty->n), n);
    v->type.resize(n);
    for (int32_t i = 0; i < n; ++i) {
      int64_t t = ty->int_at(i);
      v->type[i] = t >= 0 && t <= 6 ? static_cast<TokenType>(t) : TokenType::Normal;
    }
  }

  const std::string& m = v->model_name;
  if (m == "llama") {
    v->kind = VocabKind::Spm;
    v->add_space_prefix = true;
    v->escape_spaces = true;
    v->add_bos = true;
    v->bos = id_key(f, "tokenizer.ggml.bos_token_id", n, 1 < n ? 1 : -1);
    v->eos = id_key(f, "tokenizer.ggml.eos_token_id", n, 2 < n ? 2 : -1);
    v->unk = id_key(f, "tokenizer.ggml.unknown_token_id", n, 0);
  } else if (m == "gpt2") {
    v->kind = VocabKind::Bpe;
    v->byte_level = true;
    const std::string& p = v->pre;
    if (p == "llama-bpe" || p == "llama3" || p == "llama-v3" || p == "falcon3" || p == "pixtral" ||
        p == "tekken" || p == "falcon-h1" || p == "midm-2.0" || p == "lfm2") {
      v->ignore_merges = true;
      v->add_bos = true;
    }
    auto res = PreTokenizer::regexes_for(p);
    if (!res.ok()) return Error{f.path() + ": " + res.error().message};
    NT_TRY(v->pretok.compile(res.value()));
    v->bos = id_key(f, "tokenizer.ggml.bos_token_id", n, -1);
    v->eos = id_key(f, "tokenizer.ggml.eos_token_id", n, -1);
    v->unk = id_key(f, "tokenizer.ggml.unknown_token_id", n, -1);
  } else if (m == "bert") {
    v->kind = VocabKind::Wpm;
    v->add_bos = true;
    v->add_sep = true;
    v->unk = id_key(f, "tokenizer.ggml.unknown_token_id", n, 100 < n ? 100 : -1);
    v->bos = id_key(f, "tokenizer.ggml.bos_token_id", n, -1);
    v->eos = id_key(f, "tokenizer.ggml.eos_token_id", n, -1);
    v->cls = id_key(f, "tokenizer.ggml.cls_token_id", n, v->bos >= 0 ? v->bos : (101 < n ? 101 : -1));
    v->sep = id_key(f, "tokenizer.ggml.seperator_token_id", n, v->eos >= 0 ? v->eos : (102 < n ? 102 : -1));
  } else {
    return make_error("%s: tokenizer model '%s' is not supported (supported: llama, gpt2, bert)", f.path().c_str(),
                      m.c_str());
  }
  v->eot = id_key(f, "tokenizer.ggml.eot_token_id", n, -1);
  v->eom = id_key(f, "tokenizer.ggml.eom_token_id", n, -1);
  v->pad = id_key(f, "tokenizer.ggml.padding_token_id", n, -1);
  v->mask = id_key(f, "tokenizer.ggml.mask_token_id", n, -1);
  if (v->kind != VocabKind::Wpm) {
    v->sep = id_key(f, "tokenizer.ggml.seperator_token_id", n, -1);
    v->cls = id_key(f, "tokenizer.ggml.cls_token_id", n, -1);
  }
  if (auto b = f.get_bool("tokenizer.ggml.add_bos_token")) v->add_bos = *b;
  if (auto b = f.get_bool("tokenizer.ggml.add_eos_token")) v->add_eos = *b;
  if (auto b = f.get_bool("tokenizer.ggml.add_sep_token")) v->add_sep = *b;
  if (v->kind == VocabKind::Spm)
    if (auto b = f.get_bool("tokenizer.ggml.add_space_prefix")) v->add_space_prefix = *b;

  v->finalize_tokens();

  if (v->kind == VocabKind::Bpe) {
    const GgufValue* merges = f.get_array("tokenizer.ggml.merges");
    if (!merges || merges->elem_type != GgufType::STRING)
      return make_error("%s: tokenizer.ggml.merges is missing (needed by gpt2 tokenizers)", f.path().c_str());
    v->merges.reserve(merges->strs.size());
    int32_t rank = 0;
    for (auto s : merges->strs) {
      size_t sp = s.find(' ', 1);
      if (sp == std::string_view::npos) return make_error("%s: bad merge '%.*s' (expected 'left right')",
                                                          f.path().c_str(), static_cast<int>(s.size()), s.data());
      v->add_merge(s.substr(0, sp), s.substr(sp + 1), rank++);
    }
    // Byte symbols must exist before merging; finalize_tokens interned them already.
  }
  return TokenizerBuilder::make(std::move(v));
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_file(const std::string& path) {
  char magic[4] = {0, 0, 0, 0};
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error("%s: cannot open", path.c_str());
    in.read(magic, 4);
  }
  if (std::memcmp(magic, "GGUF", 4) == 0) {
    auto f = GgufFile::open(path);
    if (!f.ok()) return f.error();
    return from_gguf(f.value());
  }
  auto text = read_file(path);
  if (!text.ok()) return text.error();
  auto r = load_hf_json(text.value());
  if (!r.ok()) return Error{path + ": " + r.error().message};
  return r;
}

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_hf_json(std::string_view json) { return load_hf_json(json); }

}  // namespace nt
