// Damaged GGUF files through the real executable (issue 27, item 8): a corpus generated at run time
// from stories15M-q8_0 (truncations inside the header, the metadata, the tensor directory and the
// data; flipped bytes; huge counts, lengths and offsets; unknown and wrong types; dimension
// overflow; duplicate names; data past the end). `inspect`, `run` and `serve` must each refuse
// every file with exit 1 and a message naming the fault, within 2 s; a hang is killed and reported.
// A second group is valid GGUF with impossible model values: `run` and `serve` refuse them, and
// `inspect` (a viewer: it shows what the file declares) answers within 2 s without crashing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/strings.h"
#include "support/child_process.h"
#include "support/test_support.h"

namespace nt {
namespace {

using Bytes = std::string;

// Byte positions of the parts of a GGUF file, found by walking it (independent of src/gguf).
struct Layout {
  struct Kv {
    std::string key;
    size_t start = 0, type_pos = 0, value_pos = 0, end = 0;
  };
  struct TensorInfo {
    std::string name;
    size_t start = 0, dims_pos = 0, type_pos = 0, offset_pos = 0, end = 0;
    uint32_t n_dims = 0;
  };
  std::vector<Kv> kvs;
  std::vector<TensorInfo> tensors;
  size_t header_end = 0, data_offset = 0;

  const Kv& kv(const std::string& k) const {
    for (const Kv& x : kvs)
      if (x.key == k) return x;
    ADD_FAILURE() << "no key " << k;
    return kvs.front();
  }
  const TensorInfo& tensor(const std::string& n) const {
    for (const TensorInfo& x : tensors)
      if (x.name == n) return x;
    ADD_FAILURE() << "no tensor " << n;
    return tensors.front();
  }
};

template <class T>
T get(const Bytes& b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}
template <class T>
Bytes put(Bytes b, size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof(T));
  return b;
}

size_t scalar_bytes(uint32_t t) {
  switch (t) {
    case 0: case 1: case 7: return 1;
    case 2: case 3: return 2;
    case 4: case 5: case 6: return 4;
    case 10: case 11: case 12: return 8;
    default: return 0;
  }
}

size_t skip_value(const Bytes& b, uint32_t t, size_t p) {
  if (size_t n = scalar_bytes(t)) return p + n;
  if (t == 8) return p + 8 + get<uint64_t>(b, p);
  const uint32_t et = get<uint32_t>(b, p);
  const uint64_t n = get<uint64_t>(b, p + 4);
  p += 12;
  if (size_t es = scalar_bytes(et)) return p + es * n;
  for (uint64_t i = 0; i < n; ++i) p = skip_value(b, et, p);
  return p;
}

Layout walk(const Bytes& b) {
  Layout L;
  const uint64_t n_tensors = get<uint64_t>(b, 8), n_kv = get<uint64_t>(b, 16);
  size_t p = 24;
  auto str = [&](size_t& q) {
    const uint64_t n = get<uint64_t>(b, q);
    std::string s = b.substr(q + 8, n);
    q += 8 + n;
    return s;
  };
  for (uint64_t i = 0; i < n_kv; ++i) {
    Layout::Kv kv;
    kv.start = p;
    kv.key = str(p);
    kv.type_pos = p;
    kv.value_pos = p + 4;
    p = kv.end = skip_value(b, get<uint32_t>(b, p), p + 4);
    L.kvs.push_back(kv);
  }
  for (uint64_t i = 0; i < n_tensors; ++i) {
    Layout::TensorInfo t;
    t.start = p;
    t.name = str(p);
    t.n_dims = get<uint32_t>(b, p);
    t.dims_pos = p + 4;
    t.type_pos = t.dims_pos + 8 * t.n_dims;
    t.offset_pos = t.type_pos + 4;
    p = t.end = t.offset_pos + 8;
    L.tensors.push_back(t);
  }
  L.header_end = p;
  L.data_offset = (p + 31) / 32 * 32;
  return L;
}

struct Case {
  std::string name;
  Bytes bytes;
  std::string expect;  // in every command's stderr
};

// The structural corpus: every file is refused by the GGUF reader itself.
std::vector<Case> structural_cases(const Bytes& src, const Layout& L) {
  std::vector<Case> c;
  const auto& tokens = L.kv("tokenizer.ggml.tokens");
  const auto& scores = L.kv("tokenizer.ggml.scores");
  const auto& name = L.kv("general.name");
  const auto& t0 = L.tensors.front();
  const auto& tq = L.tensor("blk.0.attn_q.weight");
  const auto& tk = L.tensor("blk.0.attn_k.weight");
  const auto& tl = L.tensors.back();
  auto trunc = [&](const std::string& where, size_t n, const std::string& expect) {
    c.push_back({"truncated_" + where + "_at_" + std::to_string(n), src.substr(0, n), expect});
  };
  trunc("empty", 0, "no magic");
  trunc("magic", 3, "no magic");
  trunc("version", 6, "truncated version");
  trunc("tensor_count", 12, "truncated tensor count");
  trunc("kv_count", 20, "truncated metadata count");
  trunc("header_end", 24, "larger than the file can hold");
  trunc("first_key", L.kvs[0].start + 12, "larger than the file can hold");
  trunc("string_value", name.value_pos + 10, "larger than the file can hold");
  trunc("u32_value", L.kv("llama.context_length").value_pos + 2, "larger than the file can hold");
  trunc("token_strings", tokens.value_pos + 300000, "array string");
  trunc("f32_array", scores.value_pos + 40000, "array of 32000 f32 elements exceeds");
  trunc("bool_value", L.kv("tokenizer.ggml.add_bos_token").value_pos, "truncated bool value");
  trunc("first_tensor_name", t0.start + 12, "tensor count");
  trunc("tensor_dims", tq.dims_pos + 4, "tensor count");
  trunc("last_tensor_offset", tl.offset_pos + 4, "truncated tensor offset");
  trunc("before_data", L.header_end, "before the tensor data section");
  trunc("data_start", L.data_offset + 1000, "lies beyond the end of the file");
  trunc("data_middle", src.size() / 2, "lies beyond the end of the file");
  trunc("last_byte", src.size() - 1, "lies beyond the end of the file");

  auto add = [&](const std::string& n, Bytes b, const std::string& expect) { c.push_back({n, std::move(b), expect}); };
  add("flipped_magic", put<uint8_t>(src, 0, uint8_t(src[0] ^ 0x20)), "bad magic");
  add("version_1", put<uint32_t>(src, 4, 1), "unsupported GGUF version 1");
  add("flipped_version_byte", put<uint8_t>(src, 7, 0x01), "unsupported GGUF version 16777219");
  add("tensor_count_2e63", put<uint64_t>(src, 8, uint64_t(1) << 63), "tensor count 9223372036854775808");
  add("tensor_count_plus_1", put<uint64_t>(src, 8, L.tensors.size() + 1), "invalid GGUF");
  add("kv_count_max", put<uint64_t>(src, 16, ~uint64_t(0)), "metadata count 18446744073709551615");
  add("kv_count_plus_1", put<uint64_t>(src, 16, L.kvs.size() + 1), "invalid GGUF");
  add("key_length_2e62", put<uint64_t>(src, L.kvs[0].start, uint64_t(1) << 62), "metadata key length");
  add("string_length_2e40", put<uint64_t>(src, name.value_pos, uint64_t(1) << 40), "string value length");
  add("array_count_2e61", put<uint64_t>(src, tokens.value_pos + 4, uint64_t(1) << 61), "array count");
  add("array_string_length_max", put<uint64_t>(src, tokens.value_pos + 12, ~uint64_t(1)), "array string length");
  add("f32_array_count_2e62", put<uint64_t>(src, scores.value_pos + 4, uint64_t(1) << 62), "f32 elements exceeds");
  add("unknown_value_type", put<uint32_t>(src, name.type_pos, 13), "unknown metadata value type 13");
  add("flipped_value_type_byte", put<uint8_t>(src, L.kv("llama.block_count").type_pos, 0x44),
      "unknown metadata value type 68");
  add("unknown_array_type", put<uint32_t>(src, tokens.value_pos, 99), "unknown array element type 99");
  add("bool_value_7", put<uint8_t>(src, L.kv("tokenizer.ggml.add_bos_token").value_pos, 7), "neither 0 nor 1");
  {  // tokenizer.ggml.add_eos_token -> a second tokenizer.ggml.add_bos_token
    const auto& eos = L.kv("tokenizer.ggml.add_eos_token");
    add("duplicate_key", put<char>(src, eos.start + 8 + std::strlen("tokenizer.ggml.add_"), 'b'),
        "duplicate metadata key 'tokenizer.ggml.add_bos_token'");
  }
  add("alignment_3", put<uint32_t>(src, L.kv("general.alignment").value_pos, 3), "power of two");
  add("alignment_0", put<uint32_t>(src, L.kv("general.alignment").value_pos, 0), "power of two");
  add("tensor_dims_0", put<uint32_t>(src, t0.dims_pos - 4, 0), "has 0 dimensions");
  add("tensor_dims_5", put<uint32_t>(src, t0.dims_pos - 4, 5), "has 5 dimensions");
  add("tensor_dim_zero", put<uint64_t>(src, tq.dims_pos, 0), "dimension 0 is 0");
  add("tensor_dims_overflow", put<uint64_t>(put<uint64_t>(src, tq.dims_pos, uint64_t(1) << 40), tq.dims_pos + 8,
                                            uint64_t(1) << 40),
      "zero or too large");
  add("tensor_type_99", put<uint32_t>(src, tq.type_pos, 99), "unknown type 99");
  // Q8_0 -> F32 makes the last tensor 3.8x larger: its data would run past the end of the file
  add("tensor_type_f32_data_past_eof", put<uint32_t>(src, tl.type_pos, 0), "lies beyond the end of the file");
  add("tensor_offset_2e63", put<uint64_t>(src, tq.offset_pos, uint64_t(1) << 63), "lies beyond the end of the file");
  add("tensor_offset_max_aligned", put<uint64_t>(src, tq.offset_pos, ~uint64_t(31)), "lies beyond the end of the file");
  add("tensor_offset_misaligned", put<uint64_t>(src, tq.offset_pos, get<uint64_t>(src, tq.offset_pos) + 1),
      "is not aligned to 32");
  add("tensor_offset_past_eof",
      put<uint64_t>(src, tl.offset_pos, (src.size() - L.data_offset + 31) / 32 * 32), "lies beyond the end of the file");
  {  // blk.0.attn_k.weight -> a second blk.0.attn_q.weight (same length)
    Bytes b = src;
    std::memcpy(b.data() + tk.start + 8, tq.name.data(), tq.name.size());
    add("duplicate_tensor_name", b, "duplicate tensor name 'blk.0.attn_q.weight'");
  }
  add("flipped_tensor_name_length", put<uint8_t>(src, t0.start + 7, 0x80), "tensor name length");
  return c;
}

// Valid GGUF, impossible model: run and serve refuse; inspect shows or refuses, quickly.
std::vector<Case> model_cases(const Bytes& src, const Layout& L) {
  std::vector<Case> c;
  const auto& ctx = L.kv("llama.context_length");
  auto u32 = [&](const std::string& key, uint32_t v) { return put<uint32_t>(src, L.kv(key).value_pos, v); };
  // context_length as a u64 (4 more header bytes, which the padding before the data absorbs)
  auto ctx_u64 = [&](uint64_t v) {
    Bytes b = src.substr(0, ctx.type_pos);
    b += put<uint32_t>(Bytes(4, '\0'), 0, 10);
    b += put<uint64_t>(Bytes(8, '\0'), 0, v);
    b += src.substr(ctx.end, L.header_end - ctx.end);
    EXPECT_EQ((b.size() + 31) / 32 * 32, L.data_offset) << "the padding no longer absorbs the wider value";
    b.resize(L.data_offset, '\0');
    return b + src.substr(L.data_offset);
  };
  c.push_back({"context_length_u64_max", ctx_u64(~uint64_t(0)), "context_length"});
  c.push_back({"context_length_2e62", ctx_u64(uint64_t(1) << 62), "context_length"});
  c.push_back({"context_length_u32_max", u32("llama.context_length", 0xffffffffu), "context_length"});
  c.push_back({"block_count_2e31", u32("llama.block_count", 0x7fffffffu), "block_count"});
  c.push_back({"head_count_0", u32("llama.attention.head_count", 0), "head_count is 0"});
  c.push_back({"block_count_typed_f32", put<uint32_t>(src, L.kv("llama.block_count").type_pos, 6), "block_count"});
  c.push_back({"embedding_length_289", u32("llama.embedding_length", 289), "n_embd 289"});
  c.push_back({"feed_forward_length_wrong", u32("llama.feed_forward_length", 1024), "ffn"});
  c.push_back({"unknown_architecture", put<char>(src, L.kv("general.architecture").value_pos + 8, 'x'),
               "architecture 'xlama' is not supported"});
  {  // ffn_up [288, 768] declared as [768, 288]: same bytes, wrong shape
    const auto& up = L.tensor("blk.0.ffn_up.weight");
    Bytes b = put<uint64_t>(src, up.dims_pos, get<uint64_t>(src, up.dims_pos + 8));
    c.push_back({"tensor_shape_transposed", put<uint64_t>(b, up.dims_pos + 8, get<uint64_t>(src, up.dims_pos)),
                 "blk.0.ffn_up.weight"});
  }
  {  // a required tensor renamed away
    const auto& on = L.tensor("output_norm.weight");
    c.push_back({"missing_tensor", put<char>(src, on.start + 8, 'X'), "output_norm.weight"});
  }
  return c;
}

struct Outcome {
  int rc = -1;
  double seconds = 0;
  std::string err;
  double first_seconds = -1;  // when retried: the time of the first (parallel) try
};

// Runs one command on `model`; a child still running after `limit_s` is killed (rc 137).
Outcome run_command(const std::string& cmd, const std::string& model, const std::string& out_prefix, double limit_s) {
  std::vector<std::string> argv{test::nexttok_bin(), cmd};
  if (cmd == "inspect") argv.push_back(model);
  if (cmd == "run") argv.insert(argv.end(), {"-m", model, "-p", "hi", "-n", "2", "-t", "1"});
  if (cmd == "serve")
    argv.insert(argv.end(), {"-m", model, "--host", "127.0.0.1", "--port", "0", "-t", "1", "--parallel", "1", "--max-queue", "0"});
  test::Child child(argv, out_prefix);
  if (!child.wait_for(limit_s)) child.kill_now();
  return {child.rc(), child.seconds(), child.err()};
}

std::string last_line(const std::string& s) {
  std::string t = s;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  return t.substr(t.rfind('\n') == std::string::npos ? 0 : t.rfind('\n') + 1);
}

constexpr const char* kCommands[] = {"inspect", "run", "serve"};
const double kLimitS = 2.0 * test::kChildSlowFactor;  // each command's bound
const double kKillS = kLimitS + 8;                     // a child still running then is hung

// Writes each case, runs the three commands on it (cases spread over threads), and returns every
// outcome by case and command; the table is printed for the closing note.
std::map<std::string, std::map<std::string, Outcome>> run_corpus(const std::vector<Case>& cases) {
  const std::string dir = test::temp_dir();
  std::map<std::string, std::map<std::string, Outcome>> results;
  std::mutex mu;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < cases.size();) {
      const Case& c = cases[i];
      const std::string path = dir + "/" + c.name + ".gguf";
      test::write_text(path, c.bytes);
      for (const char* cmd : kCommands) {
        Outcome o = run_command(cmd, path, dir + "/" + c.name + "." + cmd, kKillS);
        std::lock_guard<std::mutex> lock(mu);
        results[c.name][cmd] = std::move(o);
      }
      std::remove(path.c_str());
    }
  };
  const unsigned n_threads = std::max(2u, std::min(4u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < n_threads; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  // On a busy machine a run beside the others can pass the bound while doing nothing wrong: one
  // over it runs again alone, up to three times, and the best time counts (a real hang or slow
  // path repeats every time).
  for (const Case& c : cases)
    for (const char* cmd : kCommands) {
      Outcome& o = results[c.name][cmd];
      if (o.seconds < kLimitS) continue;
      const std::string path = dir + "/" + c.name + ".gguf";
      test::write_text(path, c.bytes);
      const double first = o.seconds;
      for (int attempt = 0; attempt < 3 && o.seconds >= kLimitS; ++attempt) {
        Outcome again = run_command(cmd, path, dir + "/" + c.name + "." + cmd + ".again", kKillS);
        if (again.seconds < o.seconds) o = std::move(again);
      }
      o.first_seconds = first;
      std::remove(path.c_str());
    }
  for (const Case& c : cases)
    for (const char* cmd : kCommands) {
      const Outcome& o = results[c.name][cmd];
      std::printf("| %-34s | %-7s | %3d | %5.2f s%s | %s\n", c.name.c_str(), cmd, o.rc, o.seconds,
                  o.first_seconds >= 0 ? str_printf(" (retried alone; %.2f s beside the others)", o.first_seconds).c_str()
                                       : "",
                  last_line(o.err).substr(0, 160).c_str());
    }
  return results;
}

Bytes load_source() {
  Bytes src = test::read_text(test::shared_path("models/stories15M-q8_0.gguf"));
  EXPECT_GT(src.size(), 1000000u);
  return src;
}

TEST(CorruptModels, EveryDamagedFileIsRefusedByInspectRunAndServe) {
  NT_REQUIRE_SHARED();
  const Bytes src = load_source();
  const Layout L = walk(src);
  ASSERT_EQ(L.kvs.size(), 24u);
  ASSERT_EQ(L.tensors.size(), 56u);
  const std::vector<Case> cases = structural_cases(src, L);
  ASSERT_GE(cases.size(), 36u);
  auto results = run_corpus(cases);
  for (const Case& c : cases)
    for (const char* cmd : kCommands) {
      const Outcome& o = results[c.name][cmd];
      EXPECT_EQ(o.rc, 1) << c.name << " / " << cmd << " (137 = still running after " << kKillS << " s, killed): "
                         << o.err;
      EXPECT_LT(o.seconds, kLimitS) << c.name << " / " << cmd;
      EXPECT_NE(o.err.find(c.expect), std::string::npos) << c.name << " / " << cmd << ": expected '" << c.expect
                                                          << "' in: " << o.err;
      EXPECT_EQ(o.err.find("serve: ready"), std::string::npos) << c.name << " was served: " << o.err;
    }
}

TEST(CorruptModels, ImpossibleModelValuesAreRefusedByRunAndServe) {
  NT_REQUIRE_SHARED();
  const Bytes src = load_source();
  const Layout L = walk(src);
  const std::vector<Case> cases = model_cases(src, L);
  auto results = run_corpus(cases);
  for (const Case& c : cases)
    for (const char* cmd : kCommands) {
      const Outcome& o = results[c.name][cmd];
      EXPECT_LT(o.seconds, kLimitS) << c.name << " / " << cmd << " (rc " << o.rc << "): " << o.err;
      if (std::string(cmd) == "inspect") {
        EXPECT_TRUE(o.rc == 0 || o.rc == 1) << c.name << " / inspect: rc " << o.rc << ": " << o.err;
        continue;
      }
      EXPECT_EQ(o.rc, 1) << c.name << " / " << cmd << ": " << o.err;
      EXPECT_NE(o.err.find(c.expect), std::string::npos) << c.name << " / " << cmd << ": expected '" << c.expect
                                                          << "' in: " << o.err;
    }
}

}  // namespace
}  // namespace nt
