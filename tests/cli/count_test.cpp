// Tests of `nexttok count` (the real executable): token counts per text and tokenizer, the closing
// summary across tokenizers, tokens per 100 characters and per KiB, the notes on BOS and on
// vocab-only shapes, and the memory / cost projection with its units.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;
using test::run_nexttok;

std::string vocab(const std::string& name) { return test::shared_path("vocab/ggml-vocab-" + name + ".gguf"); }

const char* kZh = "大型语言模型读取的是词元而不是字符。";  // 18 code points, 54 bytes
const char* kEn = "Models read tokens, not characters.";

json count_json(const std::vector<std::string>& args) {
  std::vector<std::string> a = {"count"};
  a.insert(a.end(), args.begin(), args.end());
  a.push_back("--json");
  auto r = run_nexttok(a);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one JSON document on one line";
  return json::parse(r.out);
}

TEST(CliCount, TableJsonAndProjection) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  test::write_text(dir + "/zh.txt", kZh);
  test::write_text(dir + "/en.txt", kEn);
  json j = count_json({"-m", vocab("llama-spm"), "-m", vocab("qwen2"), dir + "/zh.txt", dir + "/en.txt", "--no-bos",
                       "--per-request", "100", "--ctx", "110", "--concurrency", "4", "--price-in", "1",
                       "--price-out", "2"});
  ASSERT_EQ(j["models"].size(), 2u);
  for (const auto& m : j["models"]) {
    ASSERT_EQ(m["texts"].size(), 2u);
    EXPECT_EQ(m["texts"][0]["chars"], 18);
    EXPECT_EQ(m["texts"][0]["bytes"], 54);
    const int zh = m["texts"][0]["tokens"], en = m["texts"][1]["tokens"];
    EXPECT_EQ(m["total"]["tokens"], zh + en);
    const auto& req = m["projection"]["requests"];
    EXPECT_EQ(req[0]["total_tokens"], zh + 100);
    EXPECT_EQ(req[0]["fits"], zh + 100 <= 110);
    EXPECT_NEAR(req[1]["cost_per_request"].get<double>(), (en * 1.0 + 100 * 2.0) / 1e6, 1e-12);
    EXPECT_NEAR(req[1]["cost_per_1000_requests"].get<double>(), (en * 1.0 + 100 * 2.0) / 1e3, 1e-9);
    // The vocab files declare a model shape: K+V in F16 for every layer.
    const uint64_t kv = m["projection"]["kv_bytes_per_token"];
    EXPECT_EQ(kv, 2u * 32 * 32 * 128 * 2);
    EXPECT_EQ(req[0]["kv_bytes_total"].get<uint64_t>(), kv * (zh + 100) * 4);
  }
  // Qwen2 needs fewer tokens than Llama 2 for Chinese.
  EXPECT_LT(j["models"][1]["texts"][0]["tokens"].get<int>(), j["models"][0]["texts"][0]["tokens"].get<int>());
  // Counts agree with tokenize.
  auto t = run_nexttok({"tokenize", "-m", vocab("qwen2"), "-f", dir + "/en.txt", "--json", "--no-bos"});
  EXPECT_EQ(json::parse(t.out)["n_tokens"], j["models"][1]["texts"][1]["tokens"]);

  auto table = run_nexttok({"count", "-m", vocab("llama-spm"), "--stdin"}, "hello world");
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("stdin"), std::string::npos);
  EXPECT_NE(table.out.find("tok/100ch"), std::string::npos);
  EXPECT_EQ(run_nexttok({"count", "-m", vocab("llama-spm")}).rc, 2);
}

TEST(CliCount, KvFromModelShape) {
  NT_REQUIRE_SHARED();
  // stories15M: 6 layers, 6 kv heads, head_dim 48 -> 2*6*6*48*2 = 6912 bytes per token.
  json j = count_json({"-m", test::shared_path("models/stories15M-q8_0.gguf"), "-p", "Once upon a time",
                       "--per-request", "10"});
  EXPECT_EQ(j["models"][0]["projection"]["kv_bytes_per_token"], 6912);
  EXPECT_EQ(j["models"][0]["projection"]["ctx"], 256);
}

// Several tokenizers end with one line each: total tokens and the ratio to the first tokenizer.
TEST(CliCount, SummaryLineRatioToFirst) {
  NT_REQUIRE_SHARED();
  const std::vector<std::string> args = {"-m", vocab("llama-spm"), "-m", vocab("qwen2"), "-p", kZh, "-p", kEn};
  json j = count_json(args);
  ASSERT_EQ(j["summary"].size(), 2u) << j.dump();
  const uint64_t first = j["models"][0]["total"]["tokens"], second = j["models"][1]["total"]["tokens"];
  EXPECT_EQ(j["summary"][0]["name"], "llama-spm");
  EXPECT_EQ(j["summary"][0]["tokens"], first);
  EXPECT_DOUBLE_EQ(j["summary"][0]["ratio_to_first"].get<double>(), 1.0);
  EXPECT_EQ(j["summary"][1]["name"], "qwen2");
  EXPECT_EQ(j["summary"][1]["tokens"], second);
  const double ratio = double(second) / double(first);
  EXPECT_DOUBLE_EQ(j["summary"][1]["ratio_to_first"].get<double>(), ratio);
  EXPECT_EQ(j["models"][1]["name"], "qwen2");

  std::vector<std::string> a = {"count"};
  a.insert(a.end(), args.begin(), args.end());
  auto r = run_nexttok(a);
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string want = str_printf("%s tokens  %.2fx of llama-spm", format_thousands(second).c_str(), ratio);
  const size_t at = r.out.rfind(want);
  ASSERT_NE(at, std::string::npos) << "want '" << want << "' in:\n" << r.out;
  const size_t bol = r.out.rfind('\n', at) + 1;
  EXPECT_NE(r.out.substr(bol, at - bol).find("qwen2"), std::string::npos) << r.out;
  EXPECT_GT(at, r.out.rfind("model ")) << "the summary closes the output";

  // One tokenizer: no summary lines in the table.
  auto one = run_nexttok({"count", "-m", vocab("qwen2"), "-p", kEn});
  ASSERT_EQ(one.rc, 0) << one.err;
  EXPECT_EQ(one.out.find("x of "), std::string::npos) << one.out;
}

// Tokens per 100 characters (code points) beside tokens per KiB; for Chinese (3 bytes per
// character) they differ about 3.4x.
TEST(CliCount, TokensPer100CharsBesidePerKiB) {
  NT_REQUIRE_SHARED();
  json j = count_json({"-m", vocab("qwen2"), "-p", kZh, "--no-bos"});
  const json& t = j["models"][0]["texts"][0];
  const double tokens = t["tokens"];
  EXPECT_DOUBLE_EQ(t["tokens_per_100_chars"].get<double>(), 100.0 * tokens / 18);
  ASSERT_TRUE(t.contains("tokens_per_kib")) << t.dump();
  EXPECT_DOUBLE_EQ(t["tokens_per_kib"].get<double>(), 1024.0 * tokens / 54);
  EXPECT_NEAR(t["tokens_per_kib"].get<double>() / t["tokens_per_100_chars"].get<double>(), 1024.0 / 300, 1e-9);
  auto r = run_nexttok({"count", "-m", vocab("qwen2"), "-p", kZh});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("tok/100ch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tok/KiB"), std::string::npos) << r.out;
}

// Characters are Unicode code points; a byte that is not part of valid UTF-8 counts as one.
TEST(CliCount, CharsAreCodePoints) {
  NT_REQUIRE_SHARED();
  const std::string dir = test::temp_dir();
  test::write_text(dir + "/mixed.txt", "a\x80" "b\xE4\xB8\x8D\xFF");  // a, stray byte, b, 不, stray byte
  json j = count_json({"-m", vocab("qwen2"), dir + "/mixed.txt"});
  EXPECT_EQ(j["models"][0]["texts"][0]["bytes"], 7);
  EXPECT_EQ(j["models"][0]["texts"][0]["chars"], 5);
}

// A note says when the tokenizer's BOS is part of every count (and --no-bos leaves it out).
TEST(CliCount, NoteWhenBosCounted) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok({"count", "-m", vocab("llama-spm"), "-p", kEn});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("note: each count includes 1 special token per text (BOS <s>)"), std::string::npos)
      << r.out;
  json with = count_json({"-m", vocab("llama-spm"), "-p", kEn});
  json without = count_json({"-m", vocab("llama-spm"), "-p", kEn, "--no-bos"});
  EXPECT_EQ(with["models"][0]["bos_counted"], true);
  EXPECT_EQ(with["models"][0]["special_tokens_per_text"], 1);
  EXPECT_EQ(without["models"][0]["bos_counted"], false);
  EXPECT_EQ(without["models"][0]["special_tokens_per_text"], 0);
  EXPECT_EQ(with["models"][0]["texts"][0]["tokens"].get<int>(), without["models"][0]["texts"][0]["tokens"].get<int>() + 1);

  r = run_nexttok({"count", "-m", vocab("llama-spm"), "-p", kEn, "--no-bos"});
  EXPECT_EQ(r.out.find("BOS"), std::string::npos) << r.out;
  r = run_nexttok({"count", "-m", vocab("qwen2"), "-p", kEn});  // Qwen2 adds no BOS
  EXPECT_EQ(r.out.find("BOS"), std::string::npos) << r.out;
  EXPECT_EQ(count_json({"-m", vocab("qwen2"), "-p", kEn})["models"][0]["bos_counted"], false);
}

// Memory figures from a vocab-only file use the shape it declares (a placeholder, not a real
// model's): a note says so; a real model file gets no note.
TEST(CliCount, NoteWhenShapeFromVocabOnlyFile) {
  NT_REQUIRE_SHARED();
  auto r = run_nexttok({"count", "-m", vocab("qwen2"), "-p", kEn, "--per-request", "10"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("note: KV figures use the shape declared in this vocab-only file"), std::string::npos)
      << r.out;
  json v = count_json({"-m", vocab("qwen2"), "-p", kEn, "--per-request", "10"});
  EXPECT_EQ(v["models"][0]["vocab_only"], true);
  EXPECT_EQ(v["models"][0]["projection"]["shape_from_vocab_only_file"], true);
  EXPECT_EQ(v["models"][0]["projection"]["shape"],
            json({{"n_layer", 32}, {"n_head_kv", 32}, {"head_dim", 128}, {"head_dim_v", 128}}));

  const std::string model = test::shared_path("models/stories15M-q8_0.gguf");
  r = run_nexttok({"count", "-m", model, "-p", kEn, "--per-request", "10"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("vocab-only"), std::string::npos) << r.out;
  json m = count_json({"-m", model, "-p", kEn, "--per-request", "10"});
  EXPECT_EQ(m["models"][0]["vocab_only"], false);
  EXPECT_EQ(m["models"][0]["projection"]["shape_from_vocab_only_file"], false);
}

// Cost columns say their unit (per request, per 1,000 requests) and the --currency (default USD).
TEST(CliCount, CostLabelledWithUnitAndCurrency) {
  NT_REQUIRE_SHARED();
  const std::vector<std::string> base = {"count", "-m", vocab("qwen2"), "-p", kEn, "--per-request", "100",
                                         "--price-in", "0.5", "--price-out", "1.5"};
  auto r = run_nexttok(base);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("cost per request (USD)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per 1,000 requests (USD)"), std::string::npos) << r.out;
  std::vector<std::string> eur = base;
  eur.insert(eur.end(), {"--currency", "EUR"});
  r = run_nexttok(eur);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("cost per request (EUR)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("per 1,000 requests (EUR)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0.5 EUR per million input tokens"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("USD"), std::string::npos) << r.out;

  json d = count_json(std::vector<std::string>(base.begin() + 1, base.end()));
  EXPECT_EQ(d["models"][0]["projection"]["currency"], "USD");
  eur.push_back("--json");
  auto je = run_nexttok(eur);
  ASSERT_EQ(je.rc, 0) << je.err;
  json e = json::parse(je.out)["models"][0]["projection"];
  EXPECT_EQ(e["currency"], "EUR");
  EXPECT_DOUBLE_EQ(e["price_in_per_million"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(e["price_out_per_million"].get<double>(), 1.5);
  const double tokens = e["requests"][0]["prompt_tokens"];
  EXPECT_NEAR(e["requests"][0]["cost_per_request"].get<double>(), (tokens * 0.5 + 100 * 1.5) / 1e6, 1e-12);
}

// The KV size follows the shape as ModelShape reads it: per-layer head_count_kv arrays and a
// value_length different from key_length.
TEST(CliCount, KvFromDeclaredHeadsAndValueLength) {
  NT_REQUIRE_SHARED();
  auto src = GgufFile::open(vocab("llama-spm"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  GgufWriter w;
  for (const auto& kv : src->kvs()) w.set_value(kv.key, kv.value);
  // 32 layers (from the vocab file), 8 KV heads per layer, K 128 and V 64 wide.
  w.set_i32_array("llama.attention.head_count_kv", std::vector<int32_t>(32, 8));
  w.set_u32("llama.attention.key_length", 128);
  w.set_u32("llama.attention.value_length", 64);
  w.add_tensor("token_embd.weight", DType::F32, {32, 1});
  const std::string path = test::temp_dir() + "/shape.gguf";
  ASSERT_TRUE(w.begin(path).ok());
  const std::vector<float> data(32, 0.0f);
  ASSERT_TRUE(w.write_tensor_data(data.data(), data.size() * sizeof(float)).ok());
  ASSERT_TRUE(w.finish().ok());

  json j = count_json({"-m", path, "-p", kEn, "--per-request", "10"});
  const json& p = j["models"][0]["projection"];
  EXPECT_EQ(p["kv_bytes_per_token"], 32u * 8 * (128 + 64) * 2) << p.dump();
  EXPECT_EQ(p["shape_from_vocab_only_file"], false);
  auto inspect = run_nexttok({"inspect", path, "--json"});
  ASSERT_EQ(inspect.rc, 0) << inspect.err;
  EXPECT_EQ(json::parse(inspect.out)["kv_bytes_per_token_f16"], p["kv_bytes_per_token"]);
}

}  // namespace
}  // namespace nt
