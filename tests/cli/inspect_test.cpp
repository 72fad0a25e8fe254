// Tests of `nexttok inspect`: every file in ../shared (models and vocab-only) gives a spec page and
// one-line JSON; values for the shared models agree with what llama.cpp reports for them.
#include <gtest/gtest.h>

#include <dirent.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "support/test_support.h"

namespace nt {
namespace {

using nlohmann::json;

std::vector<std::string> gguf_files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".gguf") == 0) out.push_back(dir + "/" + n);
    }
    closedir(d);
  }
  return out;
}

json inspect_json(const std::string& path) {
  auto r = test::run_nexttok({"inspect", path, "--json"});
  EXPECT_EQ(r.rc, 0) << path << ": " << r.err;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line of JSON";
  return json::parse(r.out);
}

TEST(Inspect, EverySharedFile) {
  NT_REQUIRE_SHARED();
  auto files = gguf_files(test::shared_path("models"));
  auto vocab = gguf_files(test::shared_path("vocab"));
  files.insert(files.end(), vocab.begin(), vocab.end());
  ASSERT_GE(files.size(), 10u);
  const char* fields[] = {"architecture", "name", "n_params", "file_bytes", "n_ctx_train", "n_layer", "n_embd",
                          "n_head", "n_head_kv", "head_dim", "n_ff", "n_vocab", "tokenizer_model", "tensor_types",
                          "weight_bytes", "kv_bytes_per_token_f16"};
  for (const auto& f : files) {
    json j = inspect_json(f);
    for (const char* k : fields) EXPECT_TRUE(j.contains(k)) << f << " lacks " << k;
    EXPECT_GT(j["n_vocab"].get<uint64_t>(), 0u) << f;
    EXPECT_TRUE(j["tokenizer_model"].is_string()) << f;
    const bool vocab_only = j["n_params"].get<uint64_t>() == 0;
    // a field is null exactly when the file lacks its key
    auto g = GgufFile::open(f);
    ASSERT_TRUE(g.ok());
    const auto arch = g->get_str("general.architecture");
    EXPECT_EQ(j["n_layer"].is_null(), !arch || !g->find(std::string(*arch) + ".block_count")) << f;
    EXPECT_EQ(j["n_ff"].is_null(), !arch || !g->find(std::string(*arch) + ".feed_forward_length")) << f;
    EXPECT_EQ(j["n_ctx_train"].is_null(), !arch || !g->find(std::string(*arch) + ".context_length")) << f;
    EXPECT_EQ(j["vocab_only"], vocab_only) << f;
    if (vocab_only) {
      EXPECT_TRUE(j["tensor_types"].empty()) << f;
      EXPECT_TRUE(j["memory"].empty()) << f;
    } else {
      EXPECT_GT(j["weight_bytes"].get<uint64_t>(), 0u) << f;
      EXPECT_FALSE(j["memory"].empty()) << f;
    }
    auto r = test::run_nexttok({"inspect", f});
    EXPECT_EQ(r.rc, 0) << f << ": " << r.err;
    EXPECT_NE(r.out.find("tokenizer"), std::string::npos) << f;
  }
}

TEST(Inspect, Stories15MAgreesWithLlamaCpp) {
  NT_REQUIRE_SHARED();
  for (const char* name : {"stories15M-f32.gguf", "stories15M-q8_0.gguf", "stories15M-q4_0.gguf"}) {
    json j = inspect_json(test::shared_path(std::string("models/") + name));
    EXPECT_EQ(j["architecture"], "llama");
    EXPECT_EQ(j["name"], "stories15M");
    EXPECT_EQ(j["n_params"], 15191712u) << name;  // llama.cpp: model params = 15.19 M
    EXPECT_EQ(j["n_layer"], 6);
    EXPECT_EQ(j["n_embd"], 288);
    EXPECT_EQ(j["n_head"], 6);
    EXPECT_EQ(j["n_head_kv"], 6);
    EXPECT_EQ(j["head_dim"], 48);
    EXPECT_EQ(j["n_ff"], 768);
    EXPECT_EQ(j["n_ctx_train"], 256);
    EXPECT_EQ(j["n_vocab"], 32000);
    EXPECT_EQ(j["tokenizer_model"], "llama");
    EXPECT_EQ(j["chat_template"], false);
    EXPECT_EQ(j["special_tokens"]["bos"]["text"], "<s>");
    EXPECT_EQ(j["kv_bytes_per_token_f16"], 2.0 * 6 * 6 * 48 * 2);
  }
  json f32 = inspect_json(test::shared_path("models/stories15M-f32.gguf"));
  EXPECT_EQ(f32["tensor_types"], json({{"F32", 56}}));
  EXPECT_EQ(f32["weight_bytes"], 15191712u * 4);
  json q4 = inspect_json(test::shared_path("models/stories15M-q4_0.gguf"));
  EXPECT_EQ(q4["tensor_types"], json({{"F32", 13}, {"Q4_0", 42}, {"Q8_0", 1}}));
  // n_ctx_train 256 < 512: the table has the training context only; 16 x 256 tokens of F16 cache
  // (27 MiB) is still smaller than 58 MiB of F32 weights
  ASSERT_EQ(f32["memory"].size(), 3u);
  EXPECT_EQ(f32["memory"][2]["n_seq"], 16);
  EXPECT_EQ(f32["memory"][2]["kv_exceeds_weights"], false);
}

TEST(Inspect, TinyLlamaAndHumanView) {
  NT_REQUIRE_SHARED();
  const std::string path = test::shared_path("models/tiny-llama-spm-q4_k_m.gguf");
  json j = inspect_json(path);
  EXPECT_EQ(j["n_params"], 19532032u);  // llama.cpp: 19.53 M, 5.42 BPW
  EXPECT_NEAR(j["bits_per_weight"].get<double>(), 5.42, 0.005);
  EXPECT_EQ(j["n_head_kv"], 4);
  EXPECT_EQ(j["head_dim"], 32);
  EXPECT_EQ(j["tensor_types"], json({{"F32", 9}, {"Q4_K", 25}, {"Q6_K", 5}}));
  EXPECT_EQ(j["file_type"], "MOSTLY_Q4_K_M");
  // memory rows 512, 1024, 2048 x 1/4/16; the cache outweighs 12.6 MiB of weights at 512 x 16
  ASSERT_EQ(j["memory"].size(), 9u);
  EXPECT_EQ(j["memory"][2]["kv_exceeds_weights"], true);
  EXPECT_EQ(j["memory"][0]["kv_exceeds_weights"], false);
  auto r = test::run_nexttok({"inspect", "-m", path});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("19,532,032"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("*"), std::string::npos) << "flags rows where the cache outweighs the weights";
}

TEST(Inspect, ErrorsAndHelp) {
  EXPECT_EQ(test::run_nexttok({"inspect", "--help"}).rc, 0);
  const std::string dir = test::temp_dir();
  auto r = test::run_nexttok({"inspect", dir + "/missing.gguf"});
  EXPECT_EQ(r.rc, 1);
  test::write_text(dir + "/junk.gguf", "not a gguf at all");
  r = test::run_nexttok({"inspect", dir + "/junk.gguf", "--json"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("junk.gguf"), std::string::npos);
  EXPECT_EQ(test::run_nexttok({"inspect", "--bogus-flag"}).rc, 2);
}

}  // namespace
}  // namespace nt
