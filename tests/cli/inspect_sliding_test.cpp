// `nexttok inspect` on a sliding-window model (gemma3, from `nexttok synth`): the model section
// names the window and the sliding layers, and the memory figures show the cache those layers need
// when capped at their window beside the full one.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;

TEST(InspectSliding, Gemma3StatesTheWindowAndItsCap) {
  NT_REQUIRE_SHARED();
  const std::string gguf = test::temp_dir() + "/gemma3.gguf";
  // 6 layers, pattern 3: layers 0, 1, 3, 4 slide (window 32), 2 and 5 are global.
  auto r = test::run_nexttok({"synth", "--arch", "gemma3", "--n-embd", "64", "--n-layer", "6", "--n-head", "2",
                              "--n-head-kv", "1", "--head-dim", "32", "--n-ff", "64", "-c", "2048", "--swa", "32",
                              "--swa-pattern", "3", "--tie-embeddings", "--vocab",
                              test::shared_path("vocab/ggml-vocab-llama-spm.gguf"), "-o", gguf});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto t = test::run_nexttok({"inspect", gguf});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("sliding window    32 positions on 4 of 6 layers (their rope freq_base 10000)"),
            std::string::npos) << t.out;
  EXPECT_NE(t.out.find("with the 4 sliding layers capped at their window of 32 positions"), std::string::npos) << t.out;
  // nexttok's cache keeps only the window of those layers too (kv/kv_cache_manager.h).
  EXPECT_NE(t.out.find("all nexttok's cache keeps of them"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("still holds every position"), std::string::npos) << t.out;

  auto j = test::run_nexttok({"inspect", gguf, "--json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  const json doc = json::parse(j.out);
  EXPECT_EQ(doc["sliding_window"]["n_swa"], 32);
  EXPECT_EQ(doc["sliding_window"]["n_swa_layers"], 4);
  // Per token and layer: one K and one V row of 32 F16 values = 128 bytes.
  const uint64_t per_layer = 128;
  ASSERT_EQ(doc["kv_bytes_per_token_f16"].get<uint64_t>(), 6 * per_layer);
  int rows = 0;
  for (const json& m : doc["memory"]) {
    const auto n_ctx = m["n_ctx"].get<uint64_t>(), n_seq = m["n_seq"].get<uint64_t>();
    EXPECT_EQ(m["kv_bytes_f16"].get<uint64_t>(), 6 * per_layer * n_ctx * n_seq);
    EXPECT_EQ(m["kv_bytes_f16_window_capped"].get<uint64_t>(), (2 * n_ctx + 4 * std::min<uint64_t>(n_ctx, 32)) * per_layer * n_seq)
        << n_ctx;
    ++rows;
  }
  EXPECT_GT(rows, 0);
}

TEST(InspectSliding, ModelsWithoutAWindowSayNothingOfIt) {
  NT_REQUIRE_SHARED();
  auto j = test::run_nexttok({"inspect", test::shared_path("models/stories15M-q8_0.gguf"), "--json"});
  ASSERT_EQ(j.rc, 0) << j.err;
  const json doc = json::parse(j.out);
  EXPECT_TRUE(doc["sliding_window"].is_null());
  for (const json& m : doc["memory"]) EXPECT_FALSE(m.contains("kv_bytes_f16_window_capped"));
}

}  // namespace
}  // namespace nt
