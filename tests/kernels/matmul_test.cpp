// Fast matmul at every compiled SIMD level this CPU supports against matmul_ref, on odd shapes,
// within the named budgets of kernel_test_util.h; and the determinism contract: each output is
// bit-identical whatever n_tokens and thread count.
#include <gtest/gtest.h>

#include <cstring>

#include "kernel_test_util.h"

namespace nt::test {
namespace {

int64_t cols_for(DType t) { return dtype_info(t).block_size == 256 ? 512 : 288; }  // 288: 9 blocks (odd)

class MatmulTypes : public ::testing::TestWithParam<DType> {};

TEST_P(MatmulTypes, FastMatchesReferenceWithinBudget) {
  const DType type = GetParam();
  LevelGuard guard;
  const int64_t n_rows = 37, n_cols = cols_for(type), n_tokens = 7;
  RandomWeights w(type, n_rows, n_cols, 1234 + static_cast<uint32_t>(type));
  const auto x = random_activations(n_tokens * n_cols, 99);
  std::vector<float> y_ref(n_tokens * n_rows);
  matmul_ref(w.view, x.data(), n_cols, y_ref.data(), n_rows, n_tokens);
  std::vector<float> wrow(n_cols);
  ThreadPool pool(2);
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<float> y(n_tokens * n_rows, -1.0f);
    matmul(w.view, x.data(), n_cols, y.data(), n_rows, n_tokens, pool);
    int bad = 0;
    const bool quantized = dtype_info(type).block_size > 1;
    for (int64_t r = 0; r < n_rows; ++r) {
      dequantize_row(type, w.view.data + r * w.view.row_bytes, wrow.data(), n_cols);
      for (int64_t t = 0; t < n_tokens; ++t) {
        // Tight: equal, up to float summation error only, to the exact dot with the activations as
        // the kernel documents them (int8 per 32-block for quantized types, scaled fp16 for F16).
        auto tight_check = [&](const std::vector<float>& xa, const char* what) {
          double sum_abs = 0;
          const double exact = exact_dot(wrow.data(), xa.data(), n_cols, &sum_abs);
          const double tight = kFloatSumRelPerTerm * static_cast<double>(n_cols) * sum_abs + 1e-30;
          const double e = std::fabs(static_cast<double>(y[t * n_rows + r]) - exact);
          if (!(e <= tight) && bad++ < 5)
            ADD_FAILURE() << dtype_name(type) << " at " << simd_level_name(level) << ": row " << r << " token " << t
                          << " fast " << y[t * n_rows + r] << " exact-with-" << what << "-activations " << exact
                          << " err " << e << " float-sum budget " << tight;
        };
        if (quantized && level != SimdLevel::Scalar) tight_check(q8_activations(x.data() + t * n_cols, n_cols), "q8");
        if (f16_activations(type, level)) tight_check(f16_activations_of(x.data() + t * n_cols, n_cols), "f16");
        const double budget = matmul_budget(type, wrow.data(), x.data() + t * n_cols, n_cols, level);
        const double err = std::fabs(static_cast<double>(y[t * n_rows + r]) - y_ref[t * n_rows + r]);
        if (!(err <= budget) && bad++ < 5)
          ADD_FAILURE() << dtype_name(type) << " at " << simd_level_name(level) << ": row " << r << " token "
                        << t << " fast " << y[t * n_rows + r] << " ref " << y_ref[t * n_rows + r] << " err " << err
                        << " budget " << budget;
      }
    }
  }
}

TEST_P(MatmulTypes, BitIdenticalAcrossTokenCountsAndThreads) {
  const DType type = GetParam();
  LevelGuard guard;
  const int64_t n_rows = 41, n_cols = cols_for(type), n_max = 64;
  RandomWeights w(type, n_rows, n_cols, 777 + static_cast<uint32_t>(type));
  const auto x = random_activations(n_max * n_cols, 5);
  ThreadPool pool1(1), pool2(2), pool3(3);
  ThreadPool* pools[3] = {&pool1, &pool2, &pool3};
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<float> base(n_max * n_rows);
    matmul(w.view, x.data(), n_cols, base.data(), n_rows, n_max, pool3);
    for (int64_t n_tokens : {1, 3, 17, 64}) {
      for (ThreadPool* pool : pools) {
        // Start at a token offset so a row is computed in a different tile position than in base.
        const int64_t t0 = n_tokens == n_max ? 0 : 5;
        std::vector<float> y(n_tokens * n_rows);
        matmul(w.view, x.data() + t0 * n_cols, n_cols, y.data(), n_rows, n_tokens, *pool);
        EXPECT_EQ(0, std::memcmp(y.data(), base.data() + t0 * n_rows, y.size() * sizeof(float)))
            << dtype_name(type) << " at " << simd_level_name(level) << " n_tokens " << n_tokens << " threads "
            << pool->n_threads();
      }
    }
  }
}

// Decode on tall matrices: rectangles of more than one 16-row lane group, where the one-token path
// may put rows a rectangle-sixteenth apart into one group's lanes (strided lanes) or read four rows
// a quarter of the rectangle apart with their own fma chain (Q8_0 quartets, with the zero-padded
// tail unit of 288 columns), and a partial last rectangle. Every decoded token must equal its row
// of a multi-token (packed) product.
TEST_P(MatmulTypes, DecodeOnTallMatricesEqualsPrefill) {
  const DType type = GetParam();
  LevelGuard guard;
  const int64_t n_cols = cols_for(type), n_tok = 3;
  const auto x = random_activations(n_tok * n_cols, 9);
  ThreadPool pool1(1), pool2(2), pool3(3);
  ThreadPool* pools[3] = {&pool1, &pool2, &pool3};
  for (int64_t n_rows : {512, 520, 1000}) {
    RandomWeights w(type, n_rows, n_cols, 99 + static_cast<uint32_t>(n_rows));
    for (SimdLevel level : supported_levels()) {
      set_simd_level(level);
      std::vector<float> base(n_tok * n_rows);
      matmul(w.view, x.data(), n_cols, base.data(), n_rows, n_tok, pool2);
      for (ThreadPool* pool : pools)
        for (int64_t t = 0; t < n_tok; ++t) {
          std::vector<float> y(n_rows, -1.0f);
          matmul(w.view, x.data() + t * n_cols, n_cols, y.data(), n_rows, 1, *pool);
          EXPECT_EQ(0, std::memcmp(y.data(), base.data() + t * n_rows, y.size() * sizeof(float)))
              << dtype_name(type) << " at " << simd_level_name(level) << " rows " << n_rows << " token " << t
              << " threads " << pool->n_threads();
        }
    }
  }
}

// Continuous batching's decode steps: a few tokens (2 to 17) at once. Up to the kernels'
// stream_tokens their rows are streamed as a decode's are (four-row quartets decoded once for all
// tokens), beyond it packed; either way each token's outputs must equal its one-token product.
TEST_P(MatmulTypes, FewTokensEqualOneTokenDecodes) {
  const DType type = GetParam();
  LevelGuard guard;
  const int64_t n_cols = cols_for(type), n_rows = 520, n_max = 17;
  const auto x = random_activations(n_max * n_cols, 21);
  RandomWeights w(type, n_rows, n_cols, 4242 + static_cast<uint32_t>(type));
  ThreadPool pool1(1), pool2(2);
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<float> one(n_max * n_rows);
    for (int64_t t = 0; t < n_max; ++t) matmul(w.view, x.data() + t * n_cols, n_cols, one.data() + t * n_rows, n_rows, 1, pool2);
    for (int64_t n_tok : {2, 3, 5, 8, 13, 16, 17})
      for (ThreadPool* pool : {&pool1, &pool2}) {
        std::vector<float> y(n_tok * n_rows, -1.0f);
        matmul(w.view, x.data(), n_cols, y.data(), n_rows, n_tok, *pool);
        EXPECT_EQ(0, std::memcmp(y.data(), one.data(), y.size() * sizeof(float)))
            << dtype_name(type) << " at " << simd_level_name(level) << " n_tokens " << n_tok << " threads "
            << pool->n_threads();
      }
  }
}

// Float weights take any column count; the SIMD kernels walk a row in 8- or 16-column steps, so these
// counts leave a partial last step (one of them only a partial step) at every position modulo 64;
// 800 and 1100 also cut multi-token F32 tiles into 512-column blocks (decode is never cut). Each output
// must match the reference and be bit-identical for any token count and thread count.
TEST(MatmulFloat, PartialStepsMatchReferenceAndAreBitIdentical) {
  LevelGuard guard;
  ThreadPool pool1(1), pool2(2);
  for (DType type : {DType::F32, DType::F16, DType::BF16}) {
    for (int64_t n_cols : {7, 50, 93, 301, 317, 800, 1100}) {
      const int64_t n_rows = 11, n_max = 14;
      RandomWeights w(type, n_rows, n_cols, 31 + static_cast<uint32_t>(n_cols));
      const auto x = random_activations(n_max * n_cols, 17);
      std::vector<float> y_ref(n_max * n_rows);
      matmul_ref(w.view, x.data(), n_cols, y_ref.data(), n_rows, n_max);
      for (SimdLevel level : supported_levels()) {
        set_simd_level(level);
        std::vector<float> base(n_max * n_rows);
        matmul(w.view, x.data(), n_cols, base.data(), n_rows, n_max, pool2);
        expect_within_budget(w.view, x.data(), base.data(), y_ref.data(), n_max, level,
                             std::string(dtype_name(type)) + " cols " + std::to_string(n_cols));
        // 1-5 tokens past the last strip of 6 take the decode tiles.
        for (int64_t n_tokens : {1, 2, 4, 5, 7, 11}) {
          for (ThreadPool* pool : {&pool1, &pool2}) {
            const int64_t t0 = 3;
            std::vector<float> y(n_tokens * n_rows);
            matmul(w.view, x.data() + t0 * n_cols, n_cols, y.data(), n_rows, n_tokens, *pool);
            EXPECT_EQ(0, std::memcmp(y.data(), base.data() + t0 * n_rows, y.size() * sizeof(float)))
                << dtype_name(type) << " at " << simd_level_name(level) << " cols " << n_cols << " n_tokens "
                << n_tokens << " threads " << pool->n_threads();
          }
        }
      }
    }
  }
}

// Prefill of several token blocks (the row-lane kernels pack a rectangle's weights once per call and
// thread, and reuse the packs for the call's other token blocks): every output bit-identical to the
// same token computed alone, at 1 and 2 threads; and a second matrix of the same shape right after
// must not see the first one's packs.
TEST(MatmulQuant, PackedWeightsReusedOnlyWithinACall) {
  LevelGuard guard;
  ThreadPool pool1(1), pool2(2);
  for (DType type : {DType::Q8_0, DType::Q4_1, DType::Q4_K})
  for (int64_t n_rows : {13, 53}) {  // 13: one row chunk, so both calls' rectangles have the same rows
    const int64_t n_cols = 512, n_tokens = 150;
    RandomWeights w1(type, n_rows, n_cols, 5), w2(type, n_rows, n_cols, 6);
    const auto x = random_activations(n_tokens * n_cols, 3);
    for (SimdLevel level : supported_levels()) {
      set_simd_level(level);
      for (const RandomWeights* w : {&w1, &w2}) {
        std::vector<float> alone(n_tokens * n_rows);
        for (int64_t t = 0; t < n_tokens; ++t)
          matmul(w->view, x.data() + t * n_cols, n_cols, alone.data() + t * n_rows, n_rows, 1, pool1);
        for (ThreadPool* pool : {&pool1, &pool2}) {
          std::vector<float> y(n_tokens * n_rows);
          matmul(w1.view, x.data(), n_cols, y.data(), n_rows, n_tokens, *pool);  // leaves w1's packs behind
          matmul(w->view, x.data(), n_cols, y.data(), n_rows, n_tokens, *pool);
          EXPECT_EQ(0, std::memcmp(y.data(), alone.data(), y.size() * sizeof(float)))
              << dtype_name(type) << " at " << simd_level_name(level) << " threads " << pool->n_threads()
              << (w == &w1 ? " first" : " second") << " matrix";
        }
      }
    }
  }
}

// F16 weights read fp16 activations with a per-token scale (xquant.h): activation magnitudes far
// outside the fp16 range (overflow above 65504, subnormal below 6e-5) stay within the budget.
TEST(MatmulFloat, F16ActivationsKeepTheirRange) {
  LevelGuard guard;
  ThreadPool pool(2);
  const int64_t n_rows = 13, n_cols = 300, n_tokens = 5;
  RandomWeights w(DType::F16, n_rows, n_cols, 77);
  for (float scale : {1e-30f, 1e-9f, 1.0f, 1e5f, 1e30f}) {
    const auto x = random_activations(n_tokens * n_cols, 5, scale);
    std::vector<float> y_ref(n_tokens * n_rows);
    matmul_ref(w.view, x.data(), n_cols, y_ref.data(), n_rows, n_tokens);
    for (SimdLevel level : supported_levels()) {
      set_simd_level(level);
      std::vector<float> y(n_tokens * n_rows);
      matmul(w.view, x.data(), n_cols, y.data(), n_rows, n_tokens, pool);
      expect_within_budget(w.view, x.data(), y.data(), y_ref.data(), n_tokens, level, "scale " + std::to_string(scale));
    }
  }
}

TEST_P(MatmulTypes, StridedInputAndOutput) {
  const DType type = GetParam();
  LevelGuard guard;
  const int64_t n_rows = 9, n_cols = cols_for(type), n_tokens = 3, ldx = n_cols + 5, ldy = n_rows + 3;
  RandomWeights w(type, n_rows, n_cols, 4242);
  const auto x = random_activations(n_tokens * ldx, 11);
  ThreadPool pool(2);
  std::vector<float> dense_x(n_tokens * n_cols), dense_y(n_tokens * n_rows);
  for (int64_t t = 0; t < n_tokens; ++t) std::memcpy(&dense_x[t * n_cols], &x[t * ldx], n_cols * sizeof(float));
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<float> y(n_tokens * ldy, 123.0f);
    matmul(w.view, x.data(), ldx, y.data(), ldy, n_tokens, pool);
    matmul(w.view, dense_x.data(), n_cols, dense_y.data(), n_rows, n_tokens, pool);
    for (int64_t t = 0; t < n_tokens; ++t) {
      for (int64_t r = 0; r < n_rows; ++r) EXPECT_EQ(y[t * ldy + r], dense_y[t * n_rows + r]);
      for (int64_t r = n_rows; r < ldy; ++r) EXPECT_EQ(y[t * ldy + r], 123.0f) << "wrote past the row";
    }
  }
}

std::string type_name(const ::testing::TestParamInfo<DType>& info) { return std::string(dtype_name(info.param)); }

INSTANTIATE_TEST_SUITE_P(AllTypes, MatmulTypes, ::testing::ValuesIn(all_weight_types()), type_name);

TEST(Matmul, ReferenceIsExactOnSmallIntegers) {
  // Q8_0 with d = 1: the reference must give exact integer dot products.
  const int64_t n = 64;
  std::vector<uint8_t> bytes(2 * 34);
  std::vector<float> x(n), expect_x(n);
  for (int b = 0; b < 2; ++b) {
    put_f16(&bytes[b * 34], 1.0f);
    for (int j = 0; j < 32; ++j) bytes[b * 34 + 2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  }
  double expect = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 5);
    expect += static_cast<double>((i % 32) - 16) * (i % 5);
  }
  MatView w{DType::Q8_0, n, 1, bytes.data(), 68};
  float y = 0;
  matmul_ref(w, x.data(), n, &y, 1, 1);
  EXPECT_EQ(y, expect);
}

}  // namespace
}  // namespace nt::test

namespace nt::test {
namespace {

// w's product with n_tokens rows of x by a separate call on one thread: [n_tokens, w.n_rows].
std::vector<float> separate_product(const RandomWeights& w, const std::vector<float>& x, int64_t n_cols,
                                    int64_t n_tokens, ThreadPool& pool1) {
  std::vector<float> y(static_cast<size_t>(n_tokens * w.view.n_rows));
  matmul(w.view, x.data(), n_cols, y.data(), w.view.n_rows, n_tokens, pool1);
  return y;
}

// Several outputs in one call, for prefill (6 tokens) and decode (1 token: each thread walks its own
// share of the tasks and takes the rest from the back of the others'), at 3 threads against
// separate calls on 1 thread.
TEST(Matmul, MultiEqualsSeparateCalls) {
  LevelGuard guard;
  const int64_t n_cols = 512;
  RandomWeights a(DType::Q8_0, 300, n_cols, 1), b(DType::Q4_K, 13, n_cols, 2), c(DType::F16, 70, n_cols, 3),
      d(DType::Q6_K, 25, n_cols, 4);
  const auto x = random_activations(6 * n_cols, 9);
  ThreadPool pool(3), pool1(1);
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    for (int64_t n_tokens : {1, 6}) {
      RandomWeights* ws[4] = {&a, &b, &c, &d};
      std::vector<float> sep[4], multi[4];
      MatmulOut outs[4];
      for (int i = 0; i < 4; ++i) {
        sep[i] = separate_product(*ws[i], x, n_cols, n_tokens, pool1);
        multi[i].resize(sep[i].size());
        outs[i] = MatmulOut{&ws[i]->view, multi[i].data(), ws[i]->view.n_rows};
      }
      matmul_multi(outs, 4, x.data(), n_cols, n_tokens, pool);
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(0, std::memcmp(sep[i].data(), multi[i].data(), sep[i].size() * sizeof(float)))
            << "output " << i << " at " << simd_level_name(level) << " n_tokens " << n_tokens;
    }
  }
}

// The epilogues (residual add, SwiGLU) run per rectangle inside the pass: bit-identical to the
// same products followed by add_inplace / silu_mul over whole rows. Q4_0 gate/up split alike
// (fused per rectangle pair); a Q8_0 gate over an F16 up may split unlike (the whole-output path).
TEST(Matmul, MultiEpiloguesEqualProductsThenOps) {
  LevelGuard guard;
  const int64_t n_cols = 512;
  RandomWeights g1(DType::Q4_0, 320, n_cols, 1), u1(DType::Q4_0, 320, n_cols, 2), g2(DType::Q8_0, 96, n_cols, 3),
      u2(DType::F16, 96, n_cols, 4), r(DType::Q6_K, 50, n_cols, 5);
  const auto x = random_activations(70 * n_cols, 9);
  ThreadPool pool(3), pool1(1);
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    for (int64_t n_tokens : {1, 6, 70}) {
      RandomWeights* ws[5] = {&g1, &u1, &g2, &u2, &r};
      std::vector<float> sep[5], multi[5];
      for (int i = 0; i < 5; ++i) {
        sep[i] = separate_product(*ws[i], x, n_cols, n_tokens, pool1);
        multi[i].assign(sep[i].size(), -1.0f);  // never read as a product
      }
      const auto base = random_activations(n_tokens * r.view.n_rows, 11);
      std::vector<float> res_sep = base, res_multi = base;
      for (int64_t t = 0; t < n_tokens; ++t) {
        for (int p = 0; p < 2; ++p) {
          const int64_t rows = ws[2 * p]->view.n_rows;
          silu_mul(sep[2 * p].data() + t * rows, sep[2 * p + 1].data() + t * rows, sep[2 * p].data() + t * rows, rows);
        }
        add_inplace(res_sep.data() + t * r.view.n_rows, sep[4].data() + t * r.view.n_rows, r.view.n_rows);
      }
      MatmulOut outs[5] = {{&g1.view, multi[0].data(), 320, nullptr, 1},
                           {&u1.view, multi[1].data(), 320},
                           {&g2.view, multi[2].data(), 96, nullptr, 3},
                           {&u2.view, multi[3].data(), 96},
                           {&r.view, multi[4].data(), 50, res_multi.data()}};
      matmul_multi(outs, 5, x.data(), n_cols, n_tokens, pool);
      for (int i = 0; i < 5; ++i)
        EXPECT_EQ(0, std::memcmp(sep[i].data(), multi[i].data(), sep[i].size() * sizeof(float)))
            << "output " << i << " at " << simd_level_name(level) << " n_tokens " << n_tokens;
      EXPECT_EQ(0, std::memcmp(res_sep.data(), res_multi.data(), res_sep.size() * sizeof(float)))
          << "residual at " << simd_level_name(level) << " n_tokens " << n_tokens;
    }
  }
}

}  // namespace
}  // namespace nt::test
