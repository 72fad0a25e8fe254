// The cache memory by kind of layer (model/cache_footprint.h), from a shape and a config built by
// hand: full-attention layers grow with every token, sliding layers up to their window, recurrent
// layers hold a fixed state; without a config every layer is full attention; huge contexts saturate.
#include <gtest/gtest.h>

#include <cstdint>

#include "model/cache_footprint.h"
#include "model/kv_store.h"

namespace nt {
namespace {

ModelShape shape(uint64_t n_layer, uint64_t n_head_kv, uint64_t head_dim) {
  ModelShape s;
  s.n_layer = n_layer;
  s.n_head_kv = n_head_kv;
  s.head_dim = head_dim;
  s.head_dim_v = head_dim;
  return s;
}

TEST(CacheFootprint, WithoutAConfigEveryLayerIsFullAttention) {
  const auto fp = cache_footprint(shape(6, 6, 48), nullptr, DType::F16, DType::F16);
  ASSERT_TRUE(fp);
  EXPECT_EQ(fp->n_full, 6u);
  EXPECT_EQ(fp->n_sliding + fp->n_recurrent, 0u);
  EXPECT_EQ(fp->kv_bytes_per_token(), kv_bytes_per_token(6, 6, 48, 48, DType::F16, DType::F16));
  EXPECT_EQ(fp->seq_bytes(100), 100 * fp->kv_bytes_per_token());
  EXPECT_FALSE(cache_footprint(ModelShape{}, nullptr, DType::F16, DType::F16));
}

TEST(CacheFootprint, SlidingLayersStopAtTheWindow) {
  ModelConfig c;
  c.n_layer = 3;
  c.n_swa = 16;
  c.swa_layers = {1, 0, 1};
  const auto fp = cache_footprint(shape(3, 1, 32), &c, DType::F16, DType::F16);
  ASSERT_TRUE(fp);
  const uint64_t layer = 2 * 32 * 2;
  EXPECT_EQ(fp->layer_bytes_per_token, layer);
  EXPECT_EQ(fp->full_bytes_per_token(), layer);
  EXPECT_EQ(fp->sliding_bytes_per_token(), 2 * layer);
  EXPECT_EQ(fp->kv_bytes(10), 3 * layer * 10);
  EXPECT_EQ(fp->kv_bytes(100), layer * 100 + 2 * layer * 16);
  EXPECT_EQ(fp->kv_bytes_uncapped(100), 3 * layer * 100);
  EXPECT_EQ(fp->attention_layers, (std::vector<int>{0, 1, 2}));
}

TEST(CacheFootprint, RecurrentLayersHoldAStateInsteadOfKv) {
  ModelConfig c;
  c.n_layer = 4;
  c.recurrent_layers = {1, 1, 1, 0};
  c.ssm = {2, 4, 16, 16};  // q/k heads, v heads, head_k_dim, head_v_dim
  c.ssm_conv_kernel = 4;
  const auto fp = cache_footprint(shape(4, 2, 64), &c, DType::Q8_0, DType::Q8_0);
  ASSERT_TRUE(fp);
  EXPECT_EQ(fp->n_full, 1u);
  EXPECT_EQ(fp->n_recurrent, 3u);
  EXPECT_EQ(fp->attention_layers, (std::vector<int>{3}));
  // Per layer: conv state 3 x (2*2*16 + 4*16) floats and delta state 4 x 16 x 16 floats.
  EXPECT_EQ(fp->state_bytes_per_seq, 3u * (3 * 128 + 4 * 16 * 16) * 4);
  EXPECT_EQ(fp->conv_state_bytes_per_seq, 3u * 3 * 128 * 4);
  const uint64_t per_token = kv_bytes_per_token(1, 2, 64, 64, DType::Q8_0, DType::Q8_0);
  EXPECT_EQ(fp->seq_bytes(200) - fp->seq_bytes(100), 100 * per_token);
  EXPECT_EQ(fp->seq_bytes(0), fp->state_bytes_per_seq);
}

TEST(CacheFootprint, HugeContextsSaturate) {
  const auto fp = cache_footprint(shape(32, 8, 128), nullptr, DType::F16, DType::F16);
  ASSERT_TRUE(fp);
  EXPECT_EQ(fp->kv_bytes(UINT64_MAX), UINT64_MAX);
  EXPECT_EQ(fp->seq_bytes(UINT64_MAX / 2), UINT64_MAX);
  EXPECT_EQ(saturating_mul(UINT64_MAX, 2), UINT64_MAX);
  EXPECT_EQ(saturating_add(UINT64_MAX, 1), UINT64_MAX);
  EXPECT_EQ(saturating_mul(3, 5), 15u);
}

}  // namespace
}  // namespace nt
