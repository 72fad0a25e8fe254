// Tests of `nexttok synth`: tensor names/shapes/types as llama.cpp expects for each architecture,
// metadata, the tokenizer copied from the vocab file, weight scale, and seed determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "support/leftover_temps.h"
#include "support/test_support.h"
#include "tensor/dequant.h"

namespace nt {
namespace {

std::vector<std::string> synth_args(const std::string& arch, const std::string& type, const std::string& out,
                                    const std::string& vocab) {
  return {"synth", "--arch", arch, "--n-embd", "256", "--n-layer", "3", "--n-head", "4", "--n-head-kv", "2",
          "--n-ff", "512", "--ctx", "1024", "--vocab", vocab, "--type", type, "-o", out};
}

TEST(Synth, LlamaShapeMetadataAndTokenizer) {
  NT_REQUIRE_SHARED();
  const std::string vocab = test::shared_path("vocab/ggml-vocab-llama-spm.gguf");
  const std::string out = test::temp_dir() + "/l.gguf";
  auto r = test::run_nexttok(synth_args("llama", "q8_0", out, vocab));
  ASSERT_EQ(r.rc, 0) << r.err;
  auto f = GgufFile::open(out);
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto v = GgufFile::open(vocab);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(f->get_str("general.architecture").value(), "llama");
  EXPECT_EQ(f->get_u64("llama.embedding_length").value(), 256u);
  EXPECT_EQ(f->get_u64("llama.block_count").value(), 3u);
  EXPECT_EQ(f->get_u64("llama.attention.head_count").value(), 4u);
  EXPECT_EQ(f->get_u64("llama.attention.head_count_kv").value(), 2u);
  EXPECT_EQ(f->get_u64("llama.feed_forward_length").value(), 512u);
  EXPECT_EQ(f->get_u64("llama.context_length").value(), 1024u);
  EXPECT_EQ(f->get_u64("llama.rope.dimension_count").value(), 64u);
  EXPECT_TRUE(f->get_f64("llama.attention.layer_norm_rms_epsilon").has_value());
  EXPECT_EQ(f->get_u64("general.file_type").value(), 7u);
  // every tokenizer key copied, values identical
  int n_tok_keys = 0;
  for (const auto& kv : v->kvs()) {
    if (kv.key.rfind("tokenizer.", 0) != 0) continue;
    ++n_tok_keys;
    const GgufValue* got = f->find(kv.key);
    ASSERT_NE(got, nullptr) << kv.key;
    EXPECT_EQ(got->type, kv.value.type) << kv.key;
    if (kv.value.is_array()) {
      ASSERT_EQ(got->n, kv.value.n) << kv.key;
      if (kv.value.elem_type == GgufType::STRING) EXPECT_TRUE(got->strs == kv.value.strs) << kv.key;
    } else {
      EXPECT_EQ(got->to_string(), kv.value.to_string()) << kv.key;
    }
  }
  EXPECT_GT(n_tok_keys, 3);
  const uint64_t n_vocab = v->get_array("tokenizer.ggml.tokens")->n;
  // tensor directory
  const GgufTensor* emb = f->find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->ne[0], 256u);
  EXPECT_EQ(emb->ne[1], n_vocab);
  EXPECT_EQ(emb->type, DType::Q8_0);
  ASSERT_NE(f->find_tensor("output.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("output.weight")->type, DType::Q8_0);
  EXPECT_EQ(f->find_tensor("output_norm.weight")->type, DType::F32);
  for (int i = 0; i < 3; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    for (const char* n : {"attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
                          "ffn_norm.weight", "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"})
      ASSERT_NE(f->find_tensor(b + n), nullptr) << b + n;
    EXPECT_EQ(f->find_tensor(b + "attn_k.weight")->ne[1], 128u);  // n_head_kv * head_dim
    EXPECT_EQ(f->find_tensor(b + "ffn_down.weight")->ne[0], 512u);
    EXPECT_EQ(f->find_tensor(b + "attn_norm.weight")->type, DType::F32);
  }
  EXPECT_EQ(f->tensors().size(), 2u + 3u * 9u + 1u);

  // weights ~ uniform with std 1/sqrt(fan-in); norms are 1
  const GgufTensor* q = f->find_tensor("blk.1.attn_q.weight");
  std::vector<float> x(q->n_elements());
  const uint64_t rb = dtype_row_bytes(q->type, q->ne[0]);
  for (uint64_t row = 0; row < q->ne[1]; ++row) dequantize_row(q->type, q->data + row * rb, x.data() + row * 256, 256);
  double ss = 0;
  for (float e : x) ss += e * e;
  EXPECT_NEAR(std::sqrt(ss / x.size()), 1.0 / 16.0, 0.005);
  float norm0;
  std::memcpy(&norm0, f->find_tensor("blk.0.ffn_norm.weight")->data, 4);
  EXPECT_EQ(norm0, 1.0f);
}

TEST(Synth, Qwen2BiasesQwen3NormsAndKMix) {
  NT_REQUIRE_SHARED();
  const std::string vocab = test::shared_path("vocab/ggml-vocab-qwen2.gguf");
  const std::string dir = test::temp_dir();
  auto r = test::run_nexttok(synth_args("qwen2", "q4_k_m", dir + "/q2.gguf", vocab));
  ASSERT_EQ(r.rc, 0) << r.err;
  auto f = GgufFile::open(dir + "/q2.gguf");
  ASSERT_TRUE(f.ok());
  for (const char* n : {"blk.0.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias"}) {
    ASSERT_NE(f->find_tensor(n), nullptr) << n;
    EXPECT_EQ(f->find_tensor(n)->type, DType::F32) << n;
  }
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight")->type, DType::Q4_K);
  // llama.cpp's "more bits" layers of 3: i < 3/8, i >= 7*3/8, (i - 3/8) % 3 == 2 -> only layer 2
  EXPECT_EQ(f->find_tensor("blk.0.attn_v.weight")->type, DType::Q4_K);
  EXPECT_EQ(f->find_tensor("blk.1.attn_v.weight")->type, DType::Q4_K);
  EXPECT_EQ(f->find_tensor("blk.2.attn_v.weight")->type, DType::Q6_K);
  EXPECT_EQ(f->find_tensor("blk.2.ffn_down.weight")->type, DType::Q6_K);
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down.weight")->type, DType::Q4_K);
  EXPECT_EQ(f->find_tensor("output.weight")->type, DType::Q6_K);
  EXPECT_EQ(f->get_str("tokenizer.ggml.model").value(), "gpt2");

  std::vector<std::string> a = synth_args("qwen3", "q6_k", dir + "/q3.gguf", vocab);
  a.insert(a.end(), {"--head-dim", "128"});
  r = test::run_nexttok(a);
  ASSERT_EQ(r.rc, 0) << r.err;
  auto g = GgufFile::open(dir + "/q3.gguf");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->get_u64("qwen3.attention.key_length").value(), 128u);
  EXPECT_EQ(g->get_u64("qwen3.attention.value_length").value(), 128u);
  ASSERT_NE(g->find_tensor("blk.2.attn_q_norm.weight"), nullptr);
  EXPECT_EQ(g->find_tensor("blk.2.attn_k_norm.weight")->ne[0], 128u);
  EXPECT_EQ(g->find_tensor("blk.0.attn_q.weight")->ne[1], 512u);  // 4 heads x 128
  EXPECT_EQ(g->find_tensor("blk.0.attn_output.weight")->ne[0], 512u);
}

TEST(Synth, SeedDeterminesTheWeights) {
  NT_REQUIRE_SHARED();
  const std::string vocab = test::shared_path("vocab/ggml-vocab-llama-spm.gguf");
  const std::string dir = test::temp_dir();
  auto a1 = synth_args("llama", "f16", dir + "/a.gguf", vocab);
  auto a2 = synth_args("llama", "f16", dir + "/b.gguf", vocab);
  auto a3 = synth_args("llama", "f16", dir + "/c.gguf", vocab);
  a2.insert(a2.end(), {"-t", "1"});
  a3.insert(a3.end(), {"--seed", "7"});
  ASSERT_EQ(test::run_nexttok(a1).rc, 0);
  ASSERT_EQ(test::run_nexttok(a2).rc, 0);
  ASSERT_EQ(test::run_nexttok(a3).rc, 0);
  EXPECT_TRUE(test::read_text(dir + "/a.gguf") == test::read_text(dir + "/b.gguf")) << "thread count changed the bytes";
  auto fa = GgufFile::open(dir + "/a.gguf");
  auto fc = GgufFile::open(dir + "/c.gguf");
  const GgufTensor* ta = fa->find_tensor("blk.0.ffn_up.weight");
  const GgufTensor* tc = fc->find_tensor("blk.0.ffn_up.weight");
  EXPECT_NE(std::memcmp(ta->data, tc->data, ta->n_bytes), 0) << "--seed had no effect";
}

TEST(Synth, UsageErrors) {
  const std::string dir = test::temp_dir();
  EXPECT_EQ(test::run_nexttok({"synth", "--help"}).rc, 0);
  const std::string vocab = test::shared_path("vocab/ggml-vocab-llama-spm.gguf");
  auto a = synth_args("llama", "q9_9", dir + "/x.gguf", vocab);
  EXPECT_EQ(test::run_nexttok(a).rc, 2);
  a = synth_args("mamba", "q8_0", dir + "/x.gguf", vocab);
  EXPECT_EQ(test::run_nexttok(a).rc, 2);
  a = synth_args("llama", "q8_0", dir + "/x.gguf", vocab);
  a[8] = "3";  // --n-head 4 -> n-head-kv 2 stays; n-head 3 is not a multiple of 2
  EXPECT_EQ(test::run_nexttok(a).rc, 2);
  a = synth_args("llama", "q8_0", dir + "/x.gguf", dir + "/no-vocab.gguf");
  EXPECT_EQ(test::run_nexttok(a).rc, 1);
}

TEST(Synth, RefusesToOverwriteTheVocabFile) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  const std::string vocab = dir + "/v.gguf";
  std::filesystem::copy_file(test::shared_path("vocab/ggml-vocab-llama-spm.gguf"), vocab);
  const std::string original = test::read_text(vocab);
  std::filesystem::create_symlink(vocab, dir + "/link.gguf");
  for (const std::string& out : {dir + "/./v.gguf", dir + "/link.gguf"}) {
    auto r = test::run_nexttok(synth_args("llama", "q8_0", out, vocab));
    EXPECT_EQ(r.rc, 1) << out << ": " << r.err;
    EXPECT_NE(r.err.find("same file"), std::string::npos) << out << ": " << r.err;
  }
  EXPECT_TRUE(test::read_text(vocab) == original) << "the vocab file was overwritten";
}

TEST(Synth, OutputDirectoryFailsAndLeavesNoTemporary) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  std::filesystem::create_directory(dir + "/out.gguf");
  auto r = test::run_nexttok(synth_args("llama", "q8_0", dir + "/out.gguf", test::shared_path("vocab/ggml-vocab-llama-spm.gguf")));
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.err.find("out.gguf: is a directory"), std::string::npos) << r.err;
  EXPECT_TRUE(test::leftover_temps(dir).empty()) << "temporary file left behind";
}

}  // namespace
}  // namespace nt
