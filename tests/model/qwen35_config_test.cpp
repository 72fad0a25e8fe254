// qwen35 metadata read into ModelConfig: the hybrid pattern (full_attention_interval, default 4, or
// a recurrent-layers flag array), multi-token-prediction layers left out of the trunk, the DeltaNet
// shape and the per-sequence recurrent state size, and errors that name the bad key.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"
#include "support/test_support.h"

namespace nt {
namespace {

// A qwen35 shape like Qwen3.5-0.8B's, scaled down; `edit` adds or overrides keys.
Result<ModelConfig> qwen35_config(int n_layer, const std::function<void(GgufWriter&)>& edit) {
  GgufWriter g;
  g.set_str("general.architecture", "qwen35");
  g.set_u32("qwen35.context_length", 4096);
  g.set_u32("qwen35.embedding_length", 256);
  g.set_u32("qwen35.feed_forward_length", 512);
  g.set_u32("qwen35.block_count", static_cast<uint32_t>(n_layer));
  g.set_u32("qwen35.attention.head_count", 4);
  g.set_u32("qwen35.attention.head_count_kv", 2);
  g.set_u32("qwen35.attention.key_length", 128);
  g.set_u32("qwen35.attention.value_length", 128);
  g.set_u32("qwen35.rope.dimension_count", 32);
  g.set_u32("qwen35.ssm.conv_kernel", 4);
  g.set_u32("qwen35.ssm.state_size", 64);
  g.set_u32("qwen35.ssm.group_count", 2);
  g.set_u32("qwen35.ssm.time_step_rank", 4);
  g.set_u32("qwen35.ssm.inner_size", 256);
  edit(g);
  const std::string path = test::temp_dir() + "/qwen35-config.gguf";
  EXPECT_TRUE(g.begin(path).ok());
  EXPECT_TRUE(g.finish().ok());
  auto f = GgufFile::open(path);
  if (!f) return f.error();
  return read_model_config(*f);
}

std::string pattern(const ModelConfig& c) {
  std::string s;
  for (int il = 0; il < c.n_layer; ++il) s += c.is_recurrent(il) ? 'R' : 'A';
  return s;
}

TEST(Qwen35Config, EveryFourthLayerAttendsByDefault) {
  auto c = qwen35_config(8, [](GgufWriter&) {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(pattern(*c), "RRRARRRA");
  EXPECT_EQ(c->n_kv_layers(), 2);
  EXPECT_EQ(c->kv_layer(7), 1);
  EXPECT_TRUE(c->attn_output_gate);
  EXPECT_EQ(c->rope.n_rot, 32);
  EXPECT_EQ(c->rope.style, RopeStyle::NeoX);
  EXPECT_EQ(c->ssm.n_k_heads, 2);
  EXPECT_EQ(c->ssm.n_v_heads, 4);
  EXPECT_EQ(c->ssm.head_k_dim, 64);
  EXPECT_EQ(c->ssm.head_v_dim, 64);
  // Per recurrent layer: conv state 3 x (2*2*64 + 4*64) floats, delta state 4 x 64 x 64 floats.
  EXPECT_EQ(c->recurrent_floats_per_layer(), 3 * 512 + 4 * 64 * 64);
  EXPECT_EQ(c->recurrent_floats(), 6 * (3 * 512 + 4 * 64 * 64));
}

TEST(Qwen35Config, AnIntervalOrAFlagArrayAndMtpLayersLeftOut) {
  auto c = qwen35_config(6, [](GgufWriter& g) { g.set_u32("qwen35.full_attention_interval", 3); });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(pattern(*c), "RRARRA");

  // 5 layers in the file, the last a multi-token-prediction block: the trunk has 4.
  const uint8_t rec[5] = {1, 0, 1, 0, 0};
  auto d = qwen35_config(5, [&](GgufWriter& g) {
    g.set_raw_array("qwen35.attention.recurrent_layers", GgufType::BOOL, rec, 5);
    g.set_u32("qwen35.nextn_predict_layers", 1);
  });
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->n_layer, 4);
  EXPECT_EQ(pattern(*d), "RARA");

  auto e = qwen35_config(5, [&](GgufWriter& g) { g.set_raw_array("qwen35.attention.recurrent_layers", GgufType::BOOL, rec, 4); });
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("recurrent_layers must hold one flag per layer (5)"), std::string::npos)
      << e.error().message;
}

TEST(Qwen35Config, BadDeltaNetKeysAreNamed) {
  auto a = qwen35_config(4, [](GgufWriter& g) { g.set_u32("qwen35.ssm.inner_size", 200); });
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().message.find("ssm.inner_size 200"), std::string::npos) << a.error().message;
  auto b = qwen35_config(4, [](GgufWriter& g) { g.set_u32("qwen35.ssm.time_step_rank", 3); });
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("not a multiple of ssm.group_count"), std::string::npos) << b.error().message;
}

}  // namespace
}  // namespace nt
