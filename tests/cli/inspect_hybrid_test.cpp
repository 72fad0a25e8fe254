// `nexttok inspect` on a hybrid model (qwen35, from `nexttok synth`): the model section names the
// Gated DeltaNet and attention layers, the KV cache per token counts the attention layers only, and
// every memory figure adds one recurrent state per sequence, the same at every context length.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;

TEST(InspectHybrid, Qwen35CountsAttentionKvAndAConstantRecurrentState) {
  NT_REQUIRE_SHARED();
  const std::string gguf = test::temp_dir() + "/qwen35-inspect.gguf";
  // 4 layers, every 2nd attends: 0 and 2 are Gated DeltaNet, 1 and 3 attention (1 KV head of 48).
  auto r = test::run_nexttok({"synth", "--arch", "qwen35", "--n-embd", "64", "--n-layer", "4", "--n-head", "2",
                              "--n-head-kv", "1", "--head-dim", "48", "--n-ff", "128", "--rope-dims", "12",
                              "--ssm-state", "16", "--ssm-groups", "2", "--ssm-heads", "4", "--full-attn-interval", "2",
                              "-c", "1024", "--tie-embeddings", "--vocab",
                              test::shared_path("vocab/ggml-vocab-llama-spm.gguf"), "-o", gguf});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto t = test::run_nexttok({"inspect", gguf});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("hybrid            2 Gated DeltaNet (recurrent) layers, 2 full attention: 1, 3"),
            std::string::npos) << t.out;
  EXPECT_NE(t.out.find("recurrent state   11.00 KiB per sequence, constant in context"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("prefix cache      reused up to the latest state snapshot in the shared prefix (one 11.00 KiB"),
            std::string::npos) << t.out;

  auto j = test::run_nexttok({"inspect", gguf, "--json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["hybrid"]["n_recurrent_layers"], 2);
  EXPECT_EQ(doc["hybrid"]["attention_layers"], json::array({1, 3}));
  EXPECT_EQ(doc["hybrid"]["prefix_cache_reuse"], true);
  // Per recurrent layer: conv state 3 x (2*2*16 + 4*16) floats and delta state 4 x 16 x 16 floats.
  const uint64_t state = 2 * (3 * 128 + 4 * 16 * 16) * 4;
  EXPECT_EQ(doc["hybrid"]["recurrent_state_bytes_per_seq"].get<uint64_t>(), state);
  // Per token: K and V rows of 48 F16 values in the 2 attention layers only.
  const uint64_t per_token = 2 * 2 * 48 * 2;
  ASSERT_EQ(doc["kv_bytes_per_token_f16"].get<uint64_t>(), per_token);
  int rows = 0;
  for (const json& m : doc["memory"]) {
    const auto n_ctx = m["n_ctx"].get<uint64_t>(), n_seq = m["n_seq"].get<uint64_t>();
    EXPECT_EQ(m["kv_bytes_f16"].get<uint64_t>(), (per_token * n_ctx + state) * n_seq) << n_ctx;
    ++rows;
  }
  EXPECT_GT(rows, 0);
}

TEST(InspectHybrid, ModelsWithoutRecurrentLayersSayNothingOfThem) {
  NT_REQUIRE_SHARED();
  auto j = test::run_nexttok({"inspect", test::shared_path("models/stories15M-q8_0.gguf"), "--json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  EXPECT_TRUE(json::parse(j.out)["hybrid"].is_null());
}

}  // namespace
}  // namespace nt
