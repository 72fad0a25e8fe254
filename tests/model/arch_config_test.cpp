// Architecture metadata read into ModelConfig: gemma3's sliding-window layers (a flag array or a
// period), local RoPE base, attention scale rule, soft-capping and embedding scale; phi3 ignoring
// sliding_window; rope.scaling.attn_factor for every scaling type.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "model/model_config.h"
#include "support/test_support.h"

namespace nt {
namespace {

// Metadata of a model (no tensors: read_model_config needs none), after `edit` adds keys.
Result<ModelConfig> config_of(const std::string& arch, int n_layer, const std::function<void(GgufWriter&)>& edit) {
  GgufWriter g;
  const std::string a = arch + ".";
  g.set_str("general.architecture", arch);
  g.set_u32(a + "context_length", 4096);
  g.set_u32(a + "embedding_length", 256);
  g.set_u32(a + "feed_forward_length", 512);
  g.set_u32(a + "block_count", static_cast<uint32_t>(n_layer));
  g.set_u32(a + "attention.head_count", 4);
  g.set_u32(a + "attention.head_count_kv", 2);
  g.set_u32(a + "attention.key_length", 96);
  g.set_u32(a + "attention.value_length", 96);
  g.set_f32(a + "rope.freq_base", 1e6f);
  edit(g);
  const std::string path = test::temp_dir() + "/" + arch + "-config.gguf";
  EXPECT_TRUE(g.begin(path).ok());
  EXPECT_TRUE(g.finish().ok());
  auto f = GgufFile::open(path);
  if (!f) return f.error();
  return read_model_config(*f);
}

std::string flags(const ModelConfig& c) {
  std::string s;
  for (int il = 0; il < c.n_layer; ++il) s += c.is_swa(il) ? 'S' : 'G';
  return s;
}

TEST(ArchConfig, Gemma3SlidingLayersFromAPeriodOrFlags) {
  auto c = config_of("gemma3", 8, [](GgufWriter& g) {
    g.set_u32("gemma3.attention.sliding_window", 64);
    g.set_u32("gemma3.attention.sliding_window_pattern", 3);
    g.set_f32("gemma3.rope.freq_base_swa", 5000.0f);
    g.set_str("gemma3.rope.scaling.type", "linear");
    g.set_f32("gemma3.rope.scaling.factor", 8.0f);
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->n_swa, 64);
  EXPECT_EQ(flags(*c), "SSGSSGSS");  // every layer but each 3rd
  EXPECT_EQ(c->n_swa_layers(), 6);
  EXPECT_EQ(c->rope_swa.freq_base, 5000.0f);
  EXPECT_EQ(c->rope_swa.freq_scale, 1.0f);  // local layers are not scaled
  EXPECT_EQ(c->rope.freq_base, 1e6f);
  EXPECT_EQ(c->rope.freq_scale, 0.125f);
  EXPECT_EQ(c->rope.style, RopeStyle::NeoX);
  EXPECT_EQ(c->ffn_act, FfnAct::Gelu);
  EXPECT_EQ(c->embd_scale, std::sqrt(256.0f));
  EXPECT_EQ(c->attn_scale, 1.0f / std::sqrt(96.0f));  // 1/sqrt(head_dim), not n_embd / n_head
  EXPECT_EQ(c->final_logit_softcap, 0.0f);

  const uint8_t mask[4] = {0, 1, 1, 0};
  auto d = config_of("gemma3", 4, [&](GgufWriter& g) {
    g.set_u32("gemma3.attention.sliding_window", 16);
    g.set_raw_array("gemma3.attention.sliding_window_pattern", GgufType::BOOL, mask, 4);
    g.set_f32("gemma3.final_logit_softcapping", 30.0f);
  });
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(flags(*d), "GSSG");
  EXPECT_EQ(d->rope_swa.freq_base, 10000.0f);  // llama.cpp's default
  EXPECT_EQ(d->final_logit_softcap, 30.0f);

  auto bad = config_of("gemma3", 4, [&](GgufWriter& g) {
    g.set_u32("gemma3.attention.sliding_window", 16);
    g.set_raw_array("gemma3.attention.sliding_window_pattern", GgufType::BOOL, mask, 3);
  });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("one flag per layer (4)"), std::string::npos) << bad.error().message;

  // No window: every layer global; the default period alone does not make layers slide.
  auto none = config_of("gemma3", 6, [](GgufWriter&) {});
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->n_swa, 0);
  EXPECT_EQ(flags(*none), "GGGGGG");
}

// The 62-layer 27B scales queries by 1/sqrt(n_embd / n_head), as llama.cpp and gemma_pytorch do.
TEST(ArchConfig, Gemma3AttentionScaleOf27B) {
  auto c = config_of("gemma3", 62, [](GgufWriter&) {});
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->attn_scale, 1.0f / std::sqrt(64.0f));
}

TEST(ArchConfig, Phi3IgnoresSlidingWindowAndReadsTheAttnFactor) {
  auto c = config_of("phi3", 4, [](GgufWriter& g) {
    g.set_u32("phi3.attention.sliding_window", 2047);
    g.set_u32("phi3.rope.dimension_count", 64);
    g.set_u32("phi3.rope.scaling.original_context_length", 1024);
    g.set_f32("phi3.rope.scaling.attn_factor", 1.19f);
  });
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->n_swa, 0);
  EXPECT_EQ(c->n_swa_layers(), 0);
  EXPECT_EQ(c->rope.n_rot, 64);
  EXPECT_EQ(c->rope.n_ctx_orig, 1024);
  EXPECT_EQ(c->rope.attn_factor, 1.19f);
  EXPECT_EQ(c->ffn_act, FfnAct::Silu);
  EXPECT_EQ(c->attn_scale, 0.0f);  // the default 1/sqrt(head_dim)
}

}  // namespace
}  // namespace nt
