// The one KV-cache size per token (model/kv_store.h: kv_bytes_per_token): the cache layout, the
// model shape read from a GGUF (inspect, count) and hand arithmetic agree.
#include <gtest/gtest.h>

#include "gguf/gguf.h"
#include "model/kv_store.h"
#include "model/model_shape.h"
#include "support/test_support.h"

namespace nt {
namespace {

// stories15M: 6 layers, 6 KV heads of 48 -> K and V rows of 288 elements per layer.
TEST(KvBytesPerToken, Stories15MShapeF16) {
  EXPECT_EQ(kv_bytes_per_token(6, 6, 48, 48, DType::F16, DType::F16), 6u * 2 * 288 * 2);  // 6912
  KvLayout lay;
  lay.n_layer = 6;
  lay.n_head_kv = 6;
  lay.head_dim = 48;
  EXPECT_EQ(lay.bytes_per_token(), 6912u);
  EXPECT_EQ(lay.bytes_per_block(), 6912u * size_t(lay.block_size));
}

// Q8_0 stores 32 values in 34 bytes (32 int8 + an F16 scale); K and V types may differ.
TEST(KvBytesPerToken, Q8_0Is34BytesPer32) {
  EXPECT_EQ(kv_bytes_per_token(32, 32, 128, 128, DType::Q8_0, DType::Q8_0), 32u * 2 * (4096 / 32 * 34));
  EXPECT_EQ(kv_bytes_per_token(32, 8, 128, 128, DType::Q8_0, DType::F16), 32u * (1024 / 32 * 34 + 1024 * 2));
  EXPECT_EQ(kv_bytes_per_token(2, 4, 64, 64, DType::F32, DType::BF16), 2u * (256 * 4 + 256 * 2));
  KvLayout lay;
  lay.n_layer = 32;
  lay.n_head_kv = 8;
  lay.head_dim = 128;
  lay.k_type = DType::Q8_0;
  EXPECT_EQ(lay.bytes_per_token(), kv_bytes_per_token(32, 8, 128, 128, DType::Q8_0, DType::F16));
}

// K and V widths may differ (attention.key_length / value_length).
TEST(KvBytesPerToken, KeyAndValueWidths) {
  EXPECT_EQ(kv_bytes_per_token(4, 2, 128, 64, DType::F16, DType::F16), 4u * 2 * (128 + 64) * 2);
  EXPECT_EQ(kv_bytes_per_token(0, 2, 128, 64, DType::F16, DType::F16), 0u);
}

// A model shape read from a GGUF (a real model and a vocab-only file's declared shape) gives the
// same number as a cache layout of that shape.
TEST(KvBytesPerToken, ModelShapeAgreesWithLayout) {
  NT_REQUIRE_SHARED();
  struct Case {
    const char* file;
    uint64_t f16, q8_0;
  };
  const Case cases[] = {{"models/stories15M-q8_0.gguf", 6912, 6u * 2 * (288 / 32 * 34)},
                        {"vocab/ggml-vocab-llama-spm.gguf", 32u * 2 * 4096 * 2, 32u * 2 * (4096 / 32 * 34)}};
  for (const Case& c : cases) {
    auto f = GgufFile::open(test::shared_path(c.file));
    ASSERT_TRUE(f.ok()) << f.error().message;
    auto s = read_model_shape(*f);
    ASSERT_TRUE(s.ok()) << s.error().message;
    ASSERT_TRUE(s->kv_bytes_per_token(DType::F16).has_value()) << c.file;
    EXPECT_EQ(*s->kv_bytes_per_token(DType::F16), c.f16) << c.file;
    EXPECT_EQ(*s->kv_bytes_per_token(DType::Q8_0), c.q8_0) << c.file;
    EXPECT_EQ(*s->kv_bytes_per_token(DType::Q8_0, DType::F16), (c.f16 + c.q8_0) / 2) << c.file;
    KvLayout lay;
    lay.n_layer = int(*s->n_layer);
    lay.n_head_kv = int(*s->n_head_kv);
    lay.head_dim = int(*s->head_dim);
    EXPECT_EQ(lay.bytes_per_token(), c.f16) << c.file;
  }
}

TEST(KvBytesPerToken, ModelShapeWithoutHeadsHasNone) {
  ModelShape s;
  s.n_layer = 6;
  EXPECT_FALSE(s.kv_bytes_per_token(DType::F16).has_value());
}

}  // namespace
}  // namespace nt
