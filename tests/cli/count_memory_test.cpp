// `nexttok count`'s memory projection by kind of layer (synthetic models from `nexttok synth`): a
// hybrid model (qwen35) grows the KV cache of its attention layers only and holds one recurrent
// state per sequence; a sliding-window model (gemma3) caps its sliding layers at the window; a
// full-attention model counts every layer at every position. Each figure agrees with `inspect`.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;
using test::run_nexttok;

const char* kText = "Once upon a time";

std::string synth(const std::string& name, std::vector<std::string> flags) {
  const std::string gguf = test::temp_dir() + "/" + name + ".gguf";
  std::vector<std::string> a = {"synth"};
  a.insert(a.end(), flags.begin(), flags.end());
  a.insert(a.end(), {"--tie-embeddings", "--vocab", test::shared_path("vocab/ggml-vocab-llama-spm.gguf"), "-o", gguf});
  auto r = run_nexttok(a);
  EXPECT_EQ(r.rc, 0) << r.err;
  return gguf;
}

// 4 layers, every 2nd attends: 0 and 2 are Gated DeltaNet, 1 and 3 attention (1 KV head of 48).
std::string qwen35() {
  return synth("qwen35-count", {"--arch", "qwen35", "--n-embd", "64", "--n-layer", "4", "--n-head", "2", "--n-head-kv",
                                "1", "--head-dim", "48", "--n-ff", "128", "--rope-dims", "12", "--ssm-state", "16",
                                "--ssm-groups", "2", "--ssm-heads", "4", "--full-attn-interval", "2", "-c", "1024"});
}

// 6 layers, pattern 3: layers 0, 1, 3, 4 slide (window 32), 2 and 5 are global (1 KV head of 32).
std::string gemma3() {
  return synth("gemma3-count", {"--arch", "gemma3", "--n-embd", "64", "--n-layer", "6", "--n-head", "2", "--n-head-kv",
                                "1", "--head-dim", "32", "--n-ff", "64", "-c", "2048", "--swa", "32", "--swa-pattern",
                                "3"});
}

json run_json(std::vector<std::string> args) {
  args.push_back("--json");
  auto r = run_nexttok(args);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one JSON document on one line";
  return json::parse(r.out);
}

// The projection of `count -p kText` for one model with --per-request out and --concurrency conc.
json projection(const std::string& model, uint64_t out, uint64_t conc) {
  return run_json({"count", "-m", model, "-p", kText, "--per-request", std::to_string(out), "--concurrency",
                   std::to_string(conc)})["models"][0]["projection"];
}

// A number of the document, or a failure naming what is there instead.
uint64_t num(const json& j, const std::string& what) {
  EXPECT_TRUE(j.is_number_unsigned()) << what << " is " << j.dump();
  return j.is_number_unsigned() ? j.get<uint64_t>() : 0;
}

// inspect's memory row for n_ctx tokens in n_seq sequences.
json inspect_row(json& doc, uint64_t n_ctx, uint64_t n_seq) {
  for (const json& m : doc["memory"])
    if (m["n_ctx"] == n_ctx && m["n_seq"] == n_seq) return m;
  ADD_FAILURE() << "no memory row for n_ctx " << n_ctx << ", n_seq " << n_seq << " in " << doc["memory"].dump();
  return json::object();
}

TEST(CountMemory, Qwen35GrowsAttentionKvAndHoldsOneRecurrentStatePerSequence) {
  NT_REQUIRE_SHARED();
  const std::string model = qwen35();
  const uint64_t per_token = 2 * 2 * 48 * 2;                 // K and V rows of 48 F16 values, 2 attention layers
  const uint64_t state = 2 * (3 * 128 + 4 * 16 * 16) * 4;  // conv + delta state floats of 2 DeltaNet layers
  json a = projection(model, 100, 3), b = projection(model, 300, 3);
  EXPECT_EQ(num(a["kv_bytes_per_token"], "kv_bytes_per_token"), per_token);
  EXPECT_EQ(num(a["recurrent_state_bytes_per_seq"], "recurrent_state_bytes_per_seq"), state);
  EXPECT_TRUE(a["sliding_window"].is_null()) << a.dump();
  EXPECT_EQ(a["layers"], json({{"full_attention", 2}, {"sliding_attention", 0}, {"recurrent", 2}})) << a.dump();
  json& ra = a["requests"][0];
  json& rb = b["requests"][0];
  const uint64_t tokens = ra["total_tokens"];
  // Two context lengths differ by the attention layers' bytes per token x the difference.
  EXPECT_EQ(num(rb["kv_bytes"], "kv_bytes") - num(ra["kv_bytes"], "kv_bytes"), per_token * 200);
  EXPECT_EQ(num(ra["kv_bytes"], "kv_bytes"), per_token * tokens + state);
  EXPECT_EQ(num(ra["attention_kv_bytes"], "attention_kv_bytes"), per_token * tokens);
  EXPECT_EQ(num(ra["recurrent_state_bytes"], "recurrent_state_bytes"), state);
  // One state per sequence: 3 concurrent requests hold 3.
  EXPECT_EQ(num(ra["kv_bytes_total"], "kv_bytes_total"), 3 * (per_token * tokens + state));

  // Agrees with inspect: its KV per token and state, and its memory row of 512 tokens in 4 sequences.
  json doc = run_json({"inspect", model});
  EXPECT_EQ(doc["kv_bytes_per_token_f16"], a["kv_bytes_per_token"]);
  EXPECT_EQ(doc["hybrid"]["recurrent_state_bytes_per_seq"], a["recurrent_state_bytes_per_seq"]);
  const uint64_t prompt = ra["prompt_tokens"];
  json c = projection(model, 512 - prompt, 4);
  json row = inspect_row(doc, 512, 4);
  EXPECT_EQ(c["requests"][0]["kv_bytes_total"], row["kv_bytes_f16"]) << c.dump();

  auto t = run_nexttok({"count", "-m", model, "-p", kText, "--per-request", "100"});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("KV cache 384 B per token (F16 K+V: 2 attention layers x 1 KV heads x 48 dims) + recurrent "
                       "state 11.00 KiB per sequence (2 Gated DeltaNet layers)"),
            std::string::npos) << t.out;
}

TEST(CountMemory, Gemma3SlidingLayersStopGrowingAtTheWindow) {
  NT_REQUIRE_SHARED();
  const std::string model = gemma3();
  const uint64_t per_layer = 2 * 32 * 2;  // one K and one V row of 32 F16 values
  json in = projection(model, 1, 1), a = projection(model, 100, 2), b = projection(model, 300, 2);
  // kv_bytes_per_token: what every token adds for good, the 2 global layers.
  EXPECT_EQ(num(a["kv_bytes_per_token"], "kv_bytes_per_token"), 2 * per_layer);
  EXPECT_EQ(num(a["sliding_kv_bytes_per_token"], "sliding_kv_bytes_per_token"), 4 * per_layer);
  EXPECT_EQ(num(a["sliding_window"], "sliding_window"), 32u);
  EXPECT_EQ(num(a["recurrent_state_bytes_per_seq"], "recurrent_state_bytes_per_seq"), 0u);
  EXPECT_EQ(a["layers"], json({{"full_attention", 2}, {"sliding_attention", 4}, {"recurrent", 0}})) << a.dump();
  // Inside the window every layer grows; beyond it only the 2 global layers.
  const uint64_t short_tokens = in["requests"][0]["total_tokens"];
  ASSERT_LT(short_tokens, 32u);
  EXPECT_EQ(num(in["requests"][0]["kv_bytes"], "kv_bytes"), 6 * per_layer * short_tokens);
  const uint64_t tokens = a["requests"][0]["total_tokens"];
  EXPECT_EQ(num(a["requests"][0]["kv_bytes"], "kv_bytes"), (2 * tokens + 4 * 32) * per_layer);
  EXPECT_EQ(num(b["requests"][0]["kv_bytes"], "kv_bytes") - num(a["requests"][0]["kv_bytes"], "kv_bytes"),
            2 * per_layer * 200);
  EXPECT_EQ(num(b["requests"][0]["kv_bytes_total"], "kv_bytes_total"),
            2 * num(b["requests"][0]["kv_bytes"], "kv_bytes"));

  // Agrees with inspect's window-capped memory row of 1,024 tokens in 16 sequences.
  json doc = run_json({"inspect", model});
  const uint64_t prompt = a["requests"][0]["prompt_tokens"];
  json c = projection(model, 1024 - prompt, 16);
  json row = inspect_row(doc, 1024, 16);
  EXPECT_EQ(c["requests"][0]["kv_bytes_total"], row["kv_bytes_f16_window_capped"]) << c.dump();
  EXPECT_EQ(doc["sliding_window"]["n_swa"], a["sliding_window"]);

  auto t = run_nexttok({"count", "-m", model, "-p", kText, "--per-request", "100"});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("KV cache 256 B per token (F16 K+V: 2 global layers x 1 KV heads x 32 dims) + 512 B per "
                       "token up to the 32-position window of the 4 sliding layers"),
            std::string::npos) << t.out;
}

// Full-attention models (llama, qwen3): every layer at every position, as before; no state, no window.
TEST(CountMemory, FullAttentionModelsCountEveryLayerAtEveryPosition) {
  NT_REQUIRE_SHARED();
  const std::string qwen3 = synth("qwen3-count", {"--arch", "qwen3", "--n-embd", "64", "--n-layer", "3", "--n-head",
                                                  "4", "--n-head-kv", "2", "--n-ff", "128", "-c", "1024"});
  struct Case {
    std::string model;
    uint64_t per_token;
  };
  for (const Case& k : {Case{test::shared_path("models/stories15M-q8_0.gguf"), 2 * 6 * 6 * 48 * 2},
                        Case{qwen3, 3 * 2 * 2 * 16 * 2}}) {
    SCOPED_TRACE(k.model);
    json p = projection(k.model, 50, 4);
    EXPECT_EQ(p["kv_bytes_per_token"], k.per_token);
    EXPECT_EQ(p["recurrent_state_bytes_per_seq"], 0) << p.dump();
    EXPECT_TRUE(p["sliding_window"].is_null()) << p.dump();
    const uint64_t tokens = p["requests"][0]["total_tokens"];
    EXPECT_EQ(p["requests"][0]["kv_bytes"], k.per_token * tokens);
    EXPECT_EQ(p["requests"][0]["kv_bytes_total"], 4 * k.per_token * tokens);
    json doc = run_json({"inspect", k.model});
    EXPECT_EQ(doc["kv_bytes_per_token_f16"], p["kv_bytes_per_token"]);
    const uint64_t prompt = p["requests"][0]["prompt_tokens"];
    const uint64_t n_ctx = doc["n_ctx_train"] == 256 ? 256 : 512;
    EXPECT_EQ(projection(k.model, n_ctx - prompt, 4)["requests"][0]["kv_bytes_total"],
              inspect_row(doc, n_ctx, 4)["kv_bytes_f16"]);
  }
  auto t = run_nexttok({"count", "-m", qwen3, "-p", kText, "--per-request", "10"});
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("KV cache 384 B per token (F16 K+V: 3 layers x 2 KV heads x 16 dims)\n"), std::string::npos)
      << t.out;
  EXPECT_EQ(t.out.find("recurrent"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("window"), std::string::npos) << t.out;
}

// Several tokenizers in one run, a vocab-only file among them: each gets its own projection (the
// vocab file's declared shape, full attention) and the summary still compares them.
TEST(CountMemory, VocabOnlyBesideAHybridModel) {
  NT_REQUIRE_SHARED();
  const std::string model = qwen35();
  json j = run_json({"count", "-m", test::shared_path("vocab/ggml-vocab-llama-spm.gguf"), "-m", model, "-p",
                           kText, "--per-request", "10"});
  ASSERT_EQ(j["models"].size(), 2u);
  json& v = j["models"][0]["projection"];
  EXPECT_EQ(v["shape_from_vocab_only_file"], true);
  EXPECT_EQ(v["kv_bytes_per_token"], 2u * 32 * 32 * 128 * 2);
  EXPECT_EQ(v["recurrent_state_bytes_per_seq"], 0) << v.dump();
  json& h = j["models"][1]["projection"];
  EXPECT_EQ(h["kv_bytes_per_token"], 2 * 2 * 48 * 2);
  EXPECT_EQ(h["recurrent_state_bytes_per_seq"], 2 * (3 * 128 + 4 * 16 * 16) * 4) << h.dump();
  ASSERT_EQ(j["summary"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["summary"][1]["ratio_to_first"].get<double>(), 1.0);  // the same tokenizer
}

}  // namespace
}  // namespace nt
