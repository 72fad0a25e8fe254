// Tests of `nexttok convert llama2c`: a llama2.c checkpoint + tokenizer.bin written here FROM
// ../shared/models/stories15M-f32.gguf (the inverse mapping of the README) must convert back to
// the same GGUF: same tensors bit for bit, same tokens, scores and types (in fact the same bytes).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "support/leftover_temps.h"
#include "support/test_support.h"

namespace nt {
namespace {

struct Out {
  std::string b;
  template <class T> void put(T v) { b.append(reinterpret_cast<const char*>(&v), sizeof(T)); }
  void raw(const void* p, size_t n) { b.append(static_cast<const char*>(p), n); }
};

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) s += static_cast<char>(cp);
  else { s += static_cast<char>(0xC0 | (cp >> 6)); s += static_cast<char>(0x80 | (cp & 0x3F)); }
  return s;
}

// GGUF piece -> llama2.c tokenizer.bin piece (README: spaces for U+2581, \n<s>\n, U+00XX bytes).
std::string to_llama2c_piece(std::string_view tok, int32_t type) {
  if (type == 6) return utf8(static_cast<uint32_t>(std::stoul(std::string(tok.substr(3, 2)), nullptr, 16)));
  if (tok == "<s>" || tok == "</s>") return "\n" + std::string(tok) + "\n";
  std::string s;
  for (size_t i = 0; i < tok.size(); ++i) {
    if (tok.compare(i, 3, "\xE2\x96\x81") == 0) { s += ' '; i += 2; }
    else s += tok[i];
  }
  return s;
}

// Writes stories15M as a legacy llama2.c checkpoint (negative vocab = separate classifier when
// `separate_output`, then token_embd is written again as wcls).
void write_llama2c(const GgufFile& g, const std::string& model, const std::string& tok, bool separate_output) {
  const int32_t dim = 288, hid = 768, L = 6, heads = 6, kvh = 6, V = 32000, seq = 256;
  Out m;
  for (int32_t v : {dim, hid, L, heads, kvh, separate_output ? -V : V, seq}) m.put(v);
  auto put_t = [&](const std::string& name) {
    const GgufTensor* t = g.find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    m.raw(t->data, t->n_bytes);
  };
  auto per_layer = [&](const char* kind) {
    for (int i = 0; i < L; ++i) put_t("blk." + std::to_string(i) + "." + kind);
  };
  put_t("token_embd.weight");
  per_layer("attn_norm.weight");
  per_layer("attn_q.weight");
  per_layer("attn_k.weight");
  per_layer("attn_v.weight");
  per_layer("attn_output.weight");
  per_layer("ffn_norm.weight");
  per_layer("ffn_gate.weight");
  per_layer("ffn_down.weight");
  per_layer("ffn_up.weight");
  put_t("output_norm.weight");
  for (int i = 0; i < seq * (dim / heads); ++i) m.put(static_cast<float>(i));  // freq_cis (ignored)
  if (separate_output) put_t("token_embd.weight");
  test::write_text(model, m.b);

  const GgufValue* toks = g.get_array("tokenizer.ggml.tokens");
  const GgufValue* scores = g.get_array("tokenizer.ggml.scores");
  const GgufValue* types = g.get_array("tokenizer.ggml.token_type");
  Out t;
  t.put<int32_t>(27);
  for (uint64_t i = 0; i < toks->n; ++i) {
    std::string p = to_llama2c_piece(toks->strs[i], static_cast<int32_t>(types->int_at(i)));
    t.put(static_cast<float>(scores->num_at(i)));
    t.put(static_cast<int32_t>(p.size()));
    t.raw(p.data(), p.size());
  }
  test::write_text(tok, t.b);
}

TEST(ConvertLlama2c, RoundTripReproducesStories15M) {
  NT_REQUIRE_SHARED();
  const std::string ref_path = test::shared_path("models/stories15M-f32.gguf");
  auto ref = GgufFile::open(ref_path);
  ASSERT_TRUE(ref.ok()) << ref.error().message;
  const std::string dir = test::temp_dir();
  write_llama2c(*ref, dir + "/stories15M.bin", dir + "/tokenizer.bin", false);
  auto r = test::run_nexttok({"convert", "llama2c", dir + "/stories15M.bin", dir + "/tokenizer.bin", "-o", dir + "/out.gguf"});
  ASSERT_EQ(r.rc, 0) << r.err;

  auto got = GgufFile::open(dir + "/out.gguf");
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->tensors().size(), ref->tensors().size());
  for (const auto& t : ref->tensors()) {
    const GgufTensor* u = got->find_tensor(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    EXPECT_EQ(u->type, t.type) << t.name;
    ASSERT_EQ(u->n_bytes, t.n_bytes) << t.name;
    EXPECT_EQ(std::memcmp(u->data, t.data, t.n_bytes), 0) << t.name << " differs";
  }
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
    const GgufValue* a = ref->get_array(key);
    const GgufValue* b = got->get_array(key);
    ASSERT_NE(b, nullptr) << key;
    ASSERT_EQ(a->n, b->n) << key;
    EXPECT_EQ(a->elem_type, b->elem_type) << key;
    for (uint64_t i = 0; i < a->n; ++i) {
      if (a->elem_type == GgufType::STRING) ASSERT_EQ(a->strs[i], b->strs[i]) << key << " " << i;
      else ASSERT_EQ(a->num_at(i), b->num_at(i)) << key << " " << i;
    }
  }
  for (const auto& kv : ref->kvs()) {
    const GgufValue* v = got->find(kv.key);
    ASSERT_NE(v, nullptr) << kv.key;
    EXPECT_EQ(v->type, kv.value.type) << kv.key;
    if (!kv.value.is_array()) EXPECT_EQ(v->to_string(), kv.value.to_string()) << kv.key;
  }
  // and, with the same key order and alignment, the very same file
  EXPECT_TRUE(test::read_text(dir + "/out.gguf") == test::read_text(ref_path)) << "bytes differ from stories15M-f32.gguf";
}

TEST(ConvertLlama2c, SeparateClassifierBecomesOutputWeight) {
  NT_REQUIRE_SHARED();
  auto ref = GgufFile::open(test::shared_path("models/stories15M-f32.gguf"));
  ASSERT_TRUE(ref.ok());
  const std::string dir = test::temp_dir();
  write_llama2c(*ref, dir + "/m.bin", dir + "/t.bin", true);
  auto r = test::run_nexttok({"convert", "llama2c", dir + "/m.bin", dir + "/t.bin", "-o", dir + "/o.gguf", "--name", "sep"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto got = GgufFile::open(dir + "/o.gguf");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->get_str("general.name").value(), "sep");
  const GgufTensor* out = got->find_tensor("output.weight");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->ne[0], 288u);
  EXPECT_EQ(out->ne[1], 32000u);
  const GgufTensor* emb = ref->find_tensor("token_embd.weight");
  EXPECT_EQ(std::memcmp(out->data, emb->data, emb->n_bytes), 0);
  EXPECT_EQ(got->tensors().size(), 57u);
}

TEST(ConvertLlama2c, BadInputsFailCleanly) {
  const std::string dir = test::temp_dir();
  // a header promising more weights than the file holds
  std::string m;
  for (int32_t v : {64, 128, 2, 4, 4, 300, 32}) m.append(reinterpret_cast<const char*>(&v), 4);
  m.append(1000, '\0');
  test::write_text(dir + "/short.bin", m);
  test::write_text(dir + "/tok.bin", std::string(4, '\0'));
  auto r = test::run_nexttok({"convert", "llama2c", dir + "/short.bin", dir + "/tok.bin", "-o", dir + "/x.gguf"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
  // garbage header
  test::write_text(dir + "/junk.bin", std::string(64, '\xff'));
  r = test::run_nexttok({"convert", "llama2c", dir + "/junk.bin", dir + "/tok.bin", "-o", dir + "/x.gguf"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("not a llama2.c checkpoint"), std::string::npos) << r.err;
  // missing file, unknown format, missing -o
  r = test::run_nexttok({"convert", "llama2c", dir + "/nope.bin", dir + "/tok.bin", "-o", dir + "/x.gguf"});
  EXPECT_EQ(r.rc, 1);
  r = test::run_nexttok({"convert", "safetensors", dir + "/a", dir + "/b", "-o", dir + "/x.gguf"});
  EXPECT_EQ(r.rc, 2);
  r = test::run_nexttok({"convert", "llama2c", dir + "/a", dir + "/b"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(test::run_nexttok({"convert", "--help"}).rc, 0);
  FILE* f = std::fopen((dir + "/x.gguf").c_str(), "rb");
  EXPECT_EQ(f, nullptr) << "no output file after a failed conversion";
  if (f) std::fclose(f);
}

TEST(ConvertLlama2c, TruncatedTokenizerFailsCleanly) {
  NT_REQUIRE_SHARED();
  auto ref = GgufFile::open(test::shared_path("models/stories15M-f32.gguf"));
  ASSERT_TRUE(ref.ok());
  const std::string dir = test::temp_dir();
  write_llama2c(*ref, dir + "/m.bin", dir + "/t.bin", false);
  std::string tok = test::read_text(dir + "/t.bin");
  test::write_text(dir + "/t.bin", tok.substr(0, tok.size() / 2));
  auto r = test::run_nexttok({"convert", "llama2c", dir + "/m.bin", dir + "/t.bin", "-o", dir + "/o.gguf"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("t.bin"), std::string::npos) << r.err;
}

TEST(ConvertLlama2c, RefusesToOverwriteItsInputs) {
  NT_REQUIRE_SHARED();
  auto ref = GgufFile::open(test::shared_path("models/stories15M-f32.gguf"));
  ASSERT_TRUE(ref.ok());
  const std::string dir = test::temp_dir();
  write_llama2c(*ref, dir + "/m.bin", dir + "/t.bin", false);
  const std::string model = test::read_text(dir + "/m.bin"), tok = test::read_text(dir + "/t.bin");
  std::filesystem::create_symlink(dir + "/t.bin", dir + "/t-link.bin");
  for (const std::string& out : {dir + "/./m.bin", dir + "//t.bin", dir + "/t-link.bin"}) {
    auto r = test::run_nexttok({"convert", "llama2c", dir + "/m.bin", dir + "/t.bin", "-o", out});
    EXPECT_EQ(r.rc, 1) << out << ": " << r.err;
    EXPECT_NE(r.err.find("same file"), std::string::npos) << out << ": " << r.err;
  }
  EXPECT_TRUE(test::read_text(dir + "/m.bin") == model) << "the checkpoint was overwritten";
  EXPECT_TRUE(test::read_text(dir + "/t.bin") == tok) << "the tokenizer was overwritten";
}

TEST(ConvertLlama2c, DirectoriesAreErrors) {
  NT_REQUIRE_SHARED();
  auto ref = GgufFile::open(test::shared_path("models/stories15M-f32.gguf"));
  ASSERT_TRUE(ref.ok());
  const std::string dir = test::temp_dir();
  write_llama2c(*ref, dir + "/m.bin", dir + "/t.bin", false);
  std::filesystem::create_directory(dir + "/d");
  auto r = test::run_nexttok({"convert", "llama2c", dir + "/m.bin", dir + "/t.bin", "-o", dir + "/d"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("/d: is a directory"), std::string::npos) << r.err;
  EXPECT_TRUE(test::leftover_temps(dir).empty()) << "temporary file left behind";
  r = test::run_nexttok({"convert", "llama2c", dir + "/d", dir + "/t.bin", "-o", dir + "/o.gguf"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("/d: is a directory"), std::string::npos) << r.err;
  r = test::run_nexttok({"convert", "llama2c", dir + "/m.bin", dir + "/d", "-o", dir + "/o.gguf"});
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("/d: is a directory"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nt
