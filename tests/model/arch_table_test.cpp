// Tests for model/arch_table.h: the lookups agree with the rows, "not supported" messages list
// every row, and each row's layer vectors (and llama's optional-bias hook) reach LayerWeights.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "model/arch_table.h"
#include "model/model.h"
#include "model/tiny_model.h"
#include "support/test_support.h"

namespace nt {
namespace {

TEST(ArchTable, LookupsAgreeWithTheRows) {
  ASSERT_FALSE(arch_table().empty());
  std::set<std::string> names;
  for (const ArchInfo& a : arch_table()) {
    EXPECT_TRUE(names.insert(a.name).second) << "duplicate row " << a.name;
    EXPECT_EQ(find_arch(a.name), &a) << a.name;
    EXPECT_EQ(&arch_info(a.arch), &a) << a.name;
    EXPECT_NE(supported_arch_names().find(a.name), std::string::npos) << a.name;
  }
  EXPECT_EQ(find_arch("mamba"), nullptr);
  EXPECT_EQ(find_arch(""), nullptr);
  // Table order; other rows may follow.
  EXPECT_EQ(supported_arch_names().rfind("llama, qwen2, qwen3, phi3, gemma3", 0), 0u) << supported_arch_names();
}

TEST(ArchTable, RopeStyles) {
  EXPECT_EQ(arch_info(Arch::Llama).rope, RopeStyle::Normal);
  EXPECT_EQ(arch_info(Arch::Qwen2).rope, RopeStyle::NeoX);
  EXPECT_EQ(arch_info(Arch::Qwen3).rope, RopeStyle::NeoX);
  EXPECT_EQ(arch_info(Arch::Phi3).rope, RopeStyle::NeoX);
  EXPECT_EQ(arch_info(Arch::Gemma3).rope, RopeStyle::NeoX);
}

TEST(ArchTable, UnsupportedArchitectureListsEveryRow) {
  GgufWriter g;
  g.set_str("general.architecture", "mamba");
  g.set_u32("mamba.embedding_length", 8);
  const std::string path = test::temp_dir() + "/mamba.gguf";
  ASSERT_TRUE(g.begin(path).ok());
  ASSERT_TRUE(g.finish().ok());
  auto m = Model::load(path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("architecture 'mamba' is not supported (supported: " + supported_arch_names() + ")"),
            std::string::npos)
      << m.error().message;
}

// Writes a tiny model of `spec` (after `edit` changes its weights) and loads it.
template <class Edit>
Result<std::unique_ptr<Model>> load_tiny(const test::TinySpec& spec, test::TinyWeights& w, Edit edit) {
  w = test::make_weights(spec);
  edit(w);
  const std::string path = test::temp_dir() + "/tiny-" + spec.arch + ".gguf";
  std::string err;
  EXPECT_TRUE(test::write_tiny_gguf(spec, w, path, &err)) << err;
  return Model::load(path);
}

void expect_same(const float* got, const std::vector<float>& want, const char* what) {
  ASSERT_NE(got, nullptr) << what;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << what << "[" << i << "]";
}

TEST(ArchTable, LayerVectorsReachTheLayerWeights) {
  test::TinySpec s;
  test::TinyWeights w;
  s.arch = "qwen2";
  auto q2 = load_tiny(s, w, [](test::TinyWeights&) {});
  ASSERT_TRUE(q2.ok()) << q2.error().message;
  const LayerWeights& l2 = (*q2)->weights().layers[1];
  expect_same(l2.bq, w.layers[1].bq, "bq");
  expect_same(l2.bk, w.layers[1].bk, "bk");
  expect_same(l2.bv, w.layers[1].bv, "bv");
  EXPECT_EQ(l2.q_norm, nullptr);

  s.arch = "qwen3";
  auto q3 = load_tiny(s, w, [](test::TinyWeights&) {});
  ASSERT_TRUE(q3.ok()) << q3.error().message;
  const LayerWeights& l3 = (*q3)->weights().layers[1];
  expect_same(l3.q_norm, w.layers[1].q_norm, "q_norm");
  expect_same(l3.k_norm, w.layers[1].k_norm, "k_norm");
  EXPECT_EQ(l3.bq, nullptr);
}

TEST(ArchTable, RequiredLayerVectorIsNamedWhenMissing) {
  test::TinySpec s;
  test::TinyWeights w;
  s.arch = "qwen2";
  auto m = load_tiny(s, w, [](test::TinyWeights& tw) {
    for (auto& l : tw.layers) l.bq.clear(), l.bk.clear(), l.bv.clear();
  });
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("missing tensor 'blk.0.attn_q.bias'"), std::string::npos) << m.error().message;
}

TEST(ArchTable, LlamaUsesBiasesOnlyWhenTheFileHasThem) {
  test::TinySpec s;
  test::TinyWeights w;
  s.arch = "llama";
  auto plain = load_tiny(s, w, [](test::TinyWeights&) {});
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ((*plain)->weights().layers[0].bq, nullptr);

  const size_t q = size_t(s.n_head) * s.head_dim, kv = size_t(s.n_head_kv) * s.head_dim;
  auto biased = load_tiny(s, w, [&](test::TinyWeights& tw) {
    for (auto& l : tw.layers) l.bq.assign(q, 0.25f), l.bk.assign(kv, -0.5f), l.bv.assign(kv, 0.125f);
  });
  ASSERT_TRUE(biased.ok()) << biased.error().message;
  const LayerWeights& l = (*biased)->weights().layers[1];
  expect_same(l.bq, w.layers[1].bq, "bq");
  expect_same(l.bk, w.layers[1].bk, "bk");
  expect_same(l.bv, w.layers[1].bv, "bv");
}

}  // namespace
}  // namespace nt
