// Helpers of the KV cache manager tests: a tiny layout (2 layers, 1 KV head, head_dim 4, F32,
// 4-token blocks) and rows that hold a recognisable value (owner tag, layer, position, K or V), so
// a test can tell whose rows a sequence reads.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/prefix_hash.h"

namespace nt::kvtest {

constexpr int kBs = 4;
constexpr int kLayers = 2;
constexpr int kHeadDim = 4;

inline KvLayout tiny_layout() {
  KvLayout l;
  l.n_layer = kLayers;
  l.n_head_kv = 1;
  l.head_dim = kHeadDim;
  l.k_type = DType::F32;
  l.v_type = DType::F32;
  l.block_size = kBs;
  return l;
}

// A manager of the tiny layout over pool_tokens, reusing to the token or whole blocks only.
inline std::unique_ptr<KvCacheManager> make_tiny(int64_t pool_tokens, bool token_granular) {
  auto m = KvCacheManager::create(tiny_layout(), pool_tokens, prefix_chain_seed("test-model", DType::F32, DType::F32));
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  m.value()->set_token_granular(token_granular);
  return std::move(m.value());
}

inline float row_value(int tag, int layer, int32_t pos, bool v, int j) {
  return float(tag * 10000 + layer * 1000 + pos * 10 + j) * (v ? -1.0f : 1.0f);
}

inline void write_rows(KvCacheManager& m, int seq, int32_t from, int32_t to, int tag) {
  for (int32_t pos = from; pos < to; ++pos)
    for (int il = 0; il < kLayers; ++il)
      for (int j = 0; j < kHeadDim; ++j) {
        const float k = row_value(tag, il, pos, false, j), v = row_value(tag, il, pos, true, j);
        std::memcpy(m.k_row(il, seq, pos) + j * sizeof(float), &k, sizeof k);
        std::memcpy(m.v_row(il, seq, pos) + j * sizeof(float), &v, sizeof v);
      }
}

// Whether positions [from, to) of seq hold `tag`'s rows, read both through k_row/v_row and
// through spans() (the forward pass's view).
inline ::testing::AssertionResult rows_are(KvCacheManager& m, int seq, int32_t from, int32_t to, int tag) {
  std::vector<KvSpan> sp;
  for (int il = 0; il < kLayers; ++il) {
    m.spans(il, seq, to, sp);
    for (int32_t pos = from; pos < to; ++pos) {
      const KvSpan& s = sp[size_t(pos / kBs)];
      for (int j = 0; j < kHeadDim; ++j) {
        float k, v, ks, vs;
        std::memcpy(&k, m.k_row(il, seq, pos) + j * sizeof(float), sizeof k);
        std::memcpy(&v, m.v_row(il, seq, pos) + j * sizeof(float), sizeof v);
        std::memcpy(&ks, s.k + (size_t(pos % kBs) * kHeadDim + size_t(j)) * sizeof(float), sizeof ks);
        std::memcpy(&vs, s.v + (size_t(pos % kBs) * kHeadDim + size_t(j)) * sizeof(float), sizeof vs);
        if (k != row_value(tag, il, pos, false, j) || v != row_value(tag, il, pos, true, j) || ks != k || vs != v)
          return ::testing::AssertionFailure() << "layer " << il << " pos " << pos << " elem " << j << ": K " << k
                                               << " V " << v << ", expected tag " << tag << " ("
                                               << row_value(tag, il, pos, false, j) << ")";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// Reserves, writes (tag) and commits the next n tokens of seq.
inline void step(KvCacheManager& m, int seq, const std::vector<int32_t>& tokens, int32_t n, int tag) {
  const int32_t len = m.seq_len(seq);
  ASSERT_TRUE(m.reserve(seq, n).ok());
  write_rows(m, seq, len, len + n, tag);
  m.commit(seq, tokens, n);
  ASSERT_EQ(m.seq_len(seq), len + n);
}

// A sequence that computed all of `tokens` with rows tagged `tag`.
inline int computed_seq(KvCacheManager& m, const std::vector<int32_t>& tokens, int tag) {
  const int s = m.new_seq();
  step(m, s, tokens, int32_t(tokens.size()), tag);
  return s;
}

inline std::vector<int32_t> iota_tokens(int n, int32_t first = 100) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

}  // namespace nt::kvtest
