// Prefill attention blocks (attention_block: many query tokens of one sequence sharing each K / V
// pass) against single-token attention, and the ISA passes for many query vectors at once against
// the row ops they reschedule: bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/kernels_internal.h"

namespace nt::test {
namespace {

// K and V rows of n_pos positions (n_head_kv heads of head_dim each) of one KV cache type, in three
// uneven spans.
struct Cache {
  size_t row_bytes = 0;
  std::vector<uint8_t> k, v;
  KvSpan spans[3];
  Cache(DType type, int row_elems, int n_pos, uint32_t seed) : row_bytes(dtype_row_bytes(type, row_elems)) {
    k.resize(row_bytes * n_pos);
    v.resize(row_bytes * n_pos);
    for (int p = 0; p < n_pos; ++p) {
      convert_row_from_f32(type, random_activations(row_elems, seed + p, 0.5f).data(), k.data() + p * row_bytes, row_elems);
      convert_row_from_f32(type, random_activations(row_elems, seed + 5000 + p).data(), v.data() + p * row_bytes, row_elems);
    }
    const int a = 17, b = 40;  // spans of 17, 23 and n_pos - 40 positions
    spans[0] = {k.data(), v.data(), a};
    spans[1] = {k.data() + a * row_bytes, v.data() + a * row_bytes, b - a};
    spans[2] = {k.data() + b * row_bytes, v.data() + b * row_bytes, n_pos - b};
  }
};

// n_q = 1..40 query tokens in one attention_block call per KV head (on 1 and 2 threads, as the
// forward pass splits them) equal n_q attention() calls, bit for bit: causal runs (the prefill case)
// and ragged lengths in any order, whose common prefix goes through the tiled passes and each
// token's tail through the row ops; F16, BF16 and F32 caches; head_dim 64, 128, 256; 1, 2 and 4
// query heads per KV head (runs of up to 160 query vectors, split into the ISA's runs).
TEST(AttentionBlock, ManyQueriesEqualSingleQueriesBitForBit) {
  LevelGuard guard;
  const int n_head_kv = 2, n_pos = 70;
  for (SimdLevel level : supported_levels()) {
    if (level == SimdLevel::Scalar) continue;  // the row ops alone: no passes to tile
    set_simd_level(level);
    for (DType type : {DType::F16, DType::BF16, DType::F32}) {
      for (int head_dim : {64, 128, 256}) {
        const Cache c(type, n_head_kv * head_dim, n_pos, 100 + head_dim);
        for (int group : {1, 2, 4}) {
          const int n_head = n_head_kv * group, q_dim = n_head * head_dim;
          for (int n_q = 1; n_q <= 40; ++n_q) {
            std::vector<int32_t> n_kv(static_cast<size_t>(n_q));
            std::mt19937 rng(static_cast<uint32_t>(n_q * 7 + group));
            for (int j = 0; j < n_q; ++j)  // odd n_q: ragged lengths; even: a causal run ending at n_pos
              n_kv[static_cast<size_t>(j)] = n_q % 2 ? static_cast<int32_t>(1 + rng() % n_pos) : n_pos - n_q + 1 + j;
            const auto q = random_activations(static_cast<int64_t>(n_q) * q_dim, 31 + n_q, 0.5f);
            std::vector<float> want(static_cast<size_t>(n_q) * q_dim);
            for (int j = 0; j < n_q; ++j)
              attention(q.data() + j * q_dim, n_head, n_head_kv, head_dim, 0, n_head, type, c.row_bytes, type, c.row_bytes,
                        c.spans, 3, n_kv[static_cast<size_t>(j)], 0.125f, want.data() + j * q_dim);
            for (int n_threads : {1, 2}) {
              ThreadPool pool(n_threads);
              std::vector<float> got(want.size(), 7.0f);
              pool.run(n_head_kv, [&](int g, int) {
                attention_block(q.data(), q_dim, n_q, n_kv.data(), n_head, n_head_kv, head_dim, g * group, (g + 1) * group,
                                type, c.row_bytes, type, c.row_bytes, c.spans, 3, 0.125f, got.data(), q_dim);
              });
              ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
                  << simd_level_name(level) << " " << dtype_name(type) << " head_dim " << head_dim << " group " << group
                  << " n_q " << n_q << " threads " << n_threads;
            }
          }
        }
      }
    }
  }
}

// The whole-head passes of each ISA for up to 32 query vectors of one KV head (prefill runs take
// the tiled passes past four) against that ISA's row ops, bit for bit: scores and their maximum,
// weighted sums; every head_dim the ISA has passes for; positions not a multiple of the blocks.
TEST(AttentionBlock, IsaPassesForManyVectorsEqualRowOps) {
  if (cpu_max_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  for (SimdLevel level : supported_levels()) {
    if (level == SimdLevel::Scalar) continue;
    const bool avx512 = level == SimdLevel::Avx512;
    const detail::KvRowOps ops = avx512 ? detail::kv_row_ops_avx512() : detail::kv_row_ops_avx2();
    for (DType type : {DType::F32, DType::F16, DType::BF16}) {
      for (int head_dim = 16; head_dim <= 256; head_dim += 16) {
        const detail::AttnRowKernels fast = avx512 ? detail::attn_row_kernels_avx512(head_dim, type, type)
                                                   : detail::attn_row_kernels_avx2(head_dim, type, type);
        if (!fast.scores || !fast.weighted) continue;
        const int n_pos = 150;  // 9 blocks of 16 (two of 64) and a tail
        const Cache c(type, head_dim, n_pos, 300 + head_dim);
        const float scale = 0.0883883f;
        for (int n_g : {1, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 32}) {
          if (n_g > fast.run) continue;
          std::vector<std::vector<float>> qg, sc, pg, out;
          for (int g = 0; g < n_g; ++g) {
            qg.push_back(random_activations(head_dim, 8 + g, 0.5f));
            pg.push_back(random_activations(n_pos, 50 + g, 0.5f));
            sc.emplace_back(n_pos);
            out.emplace_back(head_dim, 7.0f);
          }
          std::vector<const float*> qp, pp;
          std::vector<float*> sp, op;
          for (int g = 0; g < n_g; ++g) qp.push_back(qg[g].data()), sp.push_back(sc[g].data());
          for (int g = 0; g < n_g; ++g) pp.push_back(pg[g].data()), op.push_back(out[g].data());
          std::vector<float> mx(n_g);
          fast.scores(c.spans, 3, n_pos, c.row_bytes, 0, qp.data(), n_g, scale, sp.data(), mx.data());
          fast.weighted(c.spans, 3, n_pos, c.row_bytes, 0, pp.data(), n_g, op.data());
          const std::string where = std::string(simd_level_name(level)) + " " + std::string(dtype_name(type)) + " head_dim " +
                                    std::to_string(head_dim) + " vectors " + std::to_string(n_g);
          for (int g = 0; g < n_g; ++g) {
            float want_mx = -INFINITY;
            std::vector<float> want_out(head_dim, 0.0f);
            for (int p = 0; p < n_pos; ++p) {
              const float want = ops.dot(type, c.k.data() + p * c.row_bytes, qg[g].data(), head_dim) * scale;
              ASSERT_EQ(sc[g][p], want) << where << " vector " << g << " pos " << p;
              want_mx = want > want_mx ? want : want_mx;
              ops.axpy(type, c.v.data() + p * c.row_bytes, pg[g][p], want_out.data(), head_dim);
            }
            EXPECT_EQ(mx[g], want_mx) << where << " vector " << g;
            EXPECT_EQ(0, std::memcmp(out[g].data(), want_out.data(), head_dim * sizeof(float)))
                << where << " vector " << g << " weighted sum";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nt::test
