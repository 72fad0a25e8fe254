// Gated DeltaNet kernels (kernels/delta_net.h): the short convolution + SiLU, L2 norm, gates,
// gated RMS norm and the delta-rule recurrence, each against an independent double-precision
// definition, every SIMD level against the scalar reference, decode after prefill against one
// prefill, the chunked prefill against token by token, and determinism across splits and threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/delta_net.h"

namespace nt::test {
namespace {

std::vector<float> normal(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

double max_abs(const std::vector<float>& a) {
  double m = 0;
  for (float x : a) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}
double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(static_cast<double>(a[i]) - b[i]));
  return m;
}

// ---- short convolution ----

// Double-precision definition over the whole history (zeros before the first token).
std::vector<double> conv_def(const std::vector<float>& x, int64_t T, int64_t C, const std::vector<float>& w_tm, int K) {
  std::vector<double> y(T * C);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < C; ++c) {
      double a = 0;
      for (int i = 0; i < K; ++i) {
        const int64_t p = t + i - (K - 1);
        if (p >= 0) a += static_cast<double>(w_tm[i * C + c]) * x[p * C + c];
      }
      y[t * C + c] = a / (1.0 + std::exp(-a));
    }
  return y;
}

TEST(DeltaNet, ShortConvMatchesDefinitionAtEveryLevel) {
  LevelGuard guard;
  ThreadPool pool(2);
  for (int K : {4, 3, 1}) {
    for (int64_t C : {int64_t{37}, int64_t{300}, int64_t{6144}}) {
      const int64_t T = 9;
      const auto x = normal(T * C, 1 + K, 1.5f), w_gguf = normal(C * K, 2 + K, 0.5f);
      std::vector<float> w(C * K);
      short_conv_weights_time_major(w_gguf.data(), K, C, w.data());
      EXPECT_EQ(w[(K - 1) * C + 5], w_gguf[5 * K + K - 1]);
      const auto def = conv_def(x, T, C, w, K);
      for (SimdLevel level : supported_levels()) {
        set_simd_level(level);
        std::vector<float> state((K - 1) * C, 0.0f), y(T * C);
        short_conv_silu(x.data(), C, T, w.data(), K, C, state.data(), y.data(), C, pool);
        for (int64_t i = 0; i < T * C; ++i)
          ASSERT_NEAR(y[i], def[i], 2e-6 * (1 + std::fabs(def[i]))) << simd_level_name(level) << " K " << K << " i " << i;
        // The state is the last K - 1 inputs.
        for (int r = 0; r < K - 1; ++r)
          for (int64_t c = 0; c < C; ++c) ASSERT_EQ(state[r * C + c], x[(T - (K - 1) + r) * C + c]);
      }
    }
  }
}

TEST(DeltaNet, ShortConvDecodeAfterPrefillEqualsOnePrefill) {
  LevelGuard guard;
  ThreadPool pool(3);
  const int K = 4;
  const int64_t C = 517, T = 11, ld = C + 5;  // padded rows
  const auto x = normal(T * ld, 3), w = normal(K * C, 4, 0.5f);
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<float> s1((K - 1) * C, 0.0f), y1(T * ld, 0.0f);
    short_conv_silu(x.data(), ld, T, w.data(), K, C, s1.data(), y1.data(), ld, pool);
    // 2 tokens of prefill, then one decode step per token (two sequences in one decode call: the
    // second is a copy of the first, so both must give the same rows).
    std::vector<float> s2((K - 1) * C, 0.0f), s3, y2(T * ld, 0.0f), y3(ld);
    short_conv_silu(x.data(), ld, 2, w.data(), K, C, s2.data(), y2.data(), ld, pool);
    for (int64_t t = 2; t < T; ++t) {
      s3 = s2;
      std::vector<float> xx(2 * ld), yy(2 * ld);
      std::copy(x.begin() + t * ld, x.begin() + (t + 1) * ld, xx.begin());
      std::copy(x.begin() + t * ld, x.begin() + (t + 1) * ld, xx.begin() + ld);
      float* states[2] = {s2.data(), s3.data()};
      short_conv_silu_decode(xx.data(), ld, 2, w.data(), K, C, states, yy.data(), ld, pool);
      std::copy(yy.begin(), yy.begin() + C, y2.begin() + t * ld);
      ASSERT_TRUE(std::equal(yy.begin(), yy.begin() + C, yy.begin() + ld)) << "token " << t;
      ASSERT_TRUE(same_bits(s2, s3));
    }
    EXPECT_TRUE(same_bits(y1, y2)) << simd_level_name(level);
    EXPECT_TRUE(same_bits(s1, s2)) << simd_level_name(level);
    std::vector<float> s_ref((K - 1) * C, 0.0f), y_ref(T * ld, 0.0f);
    short_conv_silu_ref(x.data(), ld, T, w.data(), K, C, s_ref.data(), y_ref.data(), ld);
    EXPECT_TRUE(same_bits(s_ref, s1));
    EXPECT_LE(max_diff(y_ref, y1), 2e-6 * (1 + max_abs(y_ref))) << simd_level_name(level);
  }
}

// ---- norms and gates ----

TEST(DeltaNet, L2NormGatesAndGatedNormMatchDefinitions) {
  const auto x = normal(131, 5, 3.0f);
  std::vector<float> y(131);
  l2_norm(x.data(), y.data(), 131, 1e-6f);
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * v;
  for (int i = 0; i < 131; ++i) EXPECT_NEAR(y[i], x[i] / std::sqrt(ss + 1e-6), 1e-6);
  std::vector<float> zero(8, 0.0f), yz(8, 1.0f);
  l2_norm(zero.data(), yz.data(), 8, 1e-6f);  // eps keeps it finite
  for (float v : yz) EXPECT_EQ(v, 0.0f);

  const int H = 3;
  const float alpha[6] = {-2, 0.5f, 30, 1, -40, 0}, b[6] = {0, 3, -3, 1, -1, 20};
  const float dt[3] = {0.1f, -0.2f, 0.3f}, a[3] = {-0.5f, -2.0f, -1.0f};
  float g[6], beta[6];
  delta_net_gates(alpha, b, dt, a, H, 2, H, g, beta);
  for (int i = 0; i < 6; ++i) {
    const double z = static_cast<double>(alpha[i]) + dt[i % H];
    const double sp = z > 20 ? z : std::log1p(std::exp(z));
    EXPECT_NEAR(g[i], a[i % H] * sp, 1e-5 * (1 + std::fabs(a[i % H] * sp))) << i;
    EXPECT_NEAR(beta[i], 1.0 / (1.0 + std::exp(-static_cast<double>(b[i]))), 1e-6) << i;
    EXPECT_LE(g[i], 0.0f);
  }

  LevelGuard guard;
  const int64_t rows = 4, dim = 37;
  const auto o = normal(rows * dim, 6), z = normal(rows * dim, 7, 2.0f), w = normal(dim, 8);
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<float> out(rows * dim);
    gated_rms_norm(o.data(), z.data(), w.data(), out.data(), rows, dim, 1e-6f);
    for (int64_t r = 0; r < rows; ++r) {
      double s2 = 0;
      for (int64_t i = 0; i < dim; ++i) s2 += static_cast<double>(o[r * dim + i]) * o[r * dim + i];
      const double inv = 1.0 / std::sqrt(s2 / dim + 1e-6);
      for (int64_t i = 0; i < dim; ++i) {
        const double zz = z[r * dim + i], e = o[r * dim + i] * inv * w[i] * zz / (1 + std::exp(-zz));
        EXPECT_NEAR(out[r * dim + i], e, 1e-5 * (1 + std::fabs(e))) << simd_level_name(level);
      }
    }
  }
}

// ---- the delta rule ----

// Inputs of T tokens shaped as a layer's: q, k L2-normalised per head, decays in [-2, 0] (every third head) or [-0.1, 0], a few
// that underflow exp, beta in (0, 1). Row strides are padded so that no kernel can assume them.
struct Case {
  DeltaNetShape s;
  int64_t T = 0, ldq = 0, ldv = 0, ldg = 0, ldo = 0;
  std::vector<float> q, k, v, g, beta;
  Case(DeltaNetShape shape, int64_t n_tokens, uint32_t seed) : s(shape), T(n_tokens) {
    ldq = int64_t{s.n_k_heads} * s.head_k_dim + 3;
    ldv = int64_t{s.n_v_heads} * s.head_v_dim + 1;
    ldg = s.n_v_heads + 2;
    ldo = int64_t{s.n_v_heads} * s.head_v_dim + 5;
    q = normal(T * ldq, seed);
    k = normal(T * ldq, seed + 1);
    v = normal(T * ldv, seed + 2);
    g.resize(T * ldg);
    beta.resize(T * ldg);
    std::mt19937 rng(seed + 3);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (int64_t t = 0; t < T; ++t) {
      for (int h = 0; h < s.n_k_heads; ++h) {
        l2_norm(&q[t * ldq + h * s.head_k_dim], &q[t * ldq + h * s.head_k_dim], s.head_k_dim, 1e-6f);
        l2_norm(&k[t * ldq + h * s.head_k_dim], &k[t * ldq + h * s.head_k_dim], s.head_k_dim, 1e-6f);
      }
      for (int h = 0; h < s.n_v_heads; ++h) {
        g[t * ldg + h] = (t * 7 + h) % 97 == 0 ? -120.0f : -(h % 3 == 0 ? 2.0f : 0.1f) * u(rng);
        beta[t * ldg + h] = 0.02f + 0.96f * u(rng);
      }
    }
  }
  std::vector<float> out() const { return std::vector<float>(T * ldo, 0.0f); }
  std::vector<float> state(uint32_t seed) const {  // a state that some earlier prefill left
    return normal(delta_net_state_floats(s), seed, 0.3f);
  }
  DeltaNetIo io(float* o, int64_t t0 = 0) const {
    DeltaNetIo r;
    r.q = q.data() + t0 * ldq, r.ldq = ldq;
    r.k = k.data() + t0 * ldq, r.ldk = ldq;
    r.v = v.data() + t0 * ldv, r.ldv = ldv;
    r.g = g.data() + t0 * ldg, r.beta = beta.data() + t0 * ldg, r.ldg = ldg;
    r.out = o + t0 * ldo, r.ldo = ldo;
    return r;
  }
};

// The recurrence in double, straight from its definition, state as S[h][i][j].
void delta_def(const Case& c, std::vector<double>& S, std::vector<double>& out) {
  const auto& s = c.s;
  const int dk = s.head_k_dim, dv = s.head_v_dim;
  out.assign(c.T * c.ldo, 0.0);
  for (int64_t t = 0; t < c.T; ++t)
    for (int h = 0; h < s.n_v_heads; ++h) {
      const int hk = h % s.n_k_heads;
      const float* q = &c.q[t * c.ldq + hk * dk];
      const float* k = &c.k[t * c.ldq + hk * dk];
      const float* v = &c.v[t * c.ldv + h * dv];
      double* H = &S[static_cast<size_t>(h) * dk * dv];
      const double a = std::exp(static_cast<double>(c.g[t * c.ldg + h])), b = c.beta[t * c.ldg + h];
      for (int i = 0; i < dk * dv; ++i) H[i] *= a;
      for (int j = 0; j < dv; ++j) {
        double sk = 0;
        for (int i = 0; i < dk; ++i) sk += H[i * dv + j] * k[i];
        const double d = b * (v[j] - sk);
        for (int i = 0; i < dk; ++i) H[i * dv + j] += k[i] * d;
      }
      for (int j = 0; j < dv; ++j) {
        double o = 0;
        for (int i = 0; i < dk; ++i) o += H[i * dv + j] * q[i];
        out[t * c.ldo + h * dv + j] = o / std::sqrt(static_cast<double>(dk));
      }
    }
}

const DeltaNetShape kShapes[] = {
    {2, 2, 16, 16},    // small
    {2, 6, 13, 37},    // odd sizes, three v heads per k head
    {1, 3, 64, 80},    // dk != dv
    {16, 16, 128, 128} // qwen3.5-0.8B
};

// Largest |kernel - reference| allowed on outputs and states: float rounding of sums of dk terms
// per step, carried by a recurrence that does not amplify it (|k| = 1, beta < 1, decay <= 1).
double tolerance(const DeltaNetShape& s, double scale) { return 2e-7 * std::sqrt(double(s.head_k_dim)) * (1 + scale); }

TEST(DeltaNet, ReferenceMatchesDoubleDefinition) {
  ThreadPool pool(1);
  for (const auto& shape : kShapes) {
    const Case c(shape, 40, 11);
    auto st = c.state(12);
    std::vector<double> Sd(st.begin(), st.end()), od;
    auto out = c.out();
    delta_net_scan_ref(c.s, c.io(out.data()), c.T, st.data());
    delta_def(c, Sd, od);
    const std::vector<float> of(od.begin(), od.end()), sf(Sd.begin(), Sd.end());
    EXPECT_LE(max_diff(out, of), tolerance(shape, max_abs(of))) << shape.head_k_dim << "x" << shape.head_v_dim;
    EXPECT_LE(max_diff(st, sf), tolerance(shape, max_abs(sf)));
    EXPECT_GT(max_abs(of), 0.05);  // the outputs are not trivially small
  }
}

TEST(DeltaNet, ScanAtEveryLevelMatchesReferenceAndDecodeAfterPrefillIsBitIdentical) {
  LevelGuard guard;
  ThreadPool pool(2);
  for (const auto& shape : kShapes) {
    const Case c(shape, 33, 21);
    auto s_ref = c.state(22);
    auto o_ref = c.out();
    delta_net_scan_ref(c.s, c.io(o_ref.data()), c.T, s_ref.data());
    for (SimdLevel level : supported_levels()) {
      set_simd_level(level);
      auto s1 = c.state(22), o1 = c.out();
      delta_net_scan(c.s, c.io(o1.data()), c.T, s1.data(), pool);
      if (level == SimdLevel::Scalar) {
        EXPECT_TRUE(same_bits(o1, o_ref) && same_bits(s1, s_ref));
      }
      EXPECT_LE(max_diff(o1, o_ref), tolerance(shape, max_abs(o_ref))) << simd_level_name(level);
      EXPECT_LE(max_diff(s1, s_ref), tolerance(shape, max_abs(s_ref))) << simd_level_name(level);
      // Prefill of 5 tokens, then decode steps; each decode call carries this sequence and a copy
      // of its state, which must come out the same.
      auto s2 = c.state(22), o2 = c.out();
      delta_net_scan(c.s, c.io(o2.data()), 5, s2.data(), pool);
      std::vector<float> s3, o3 = c.out();
      for (int64_t t = 5; t < c.T; ++t) {
        s3 = s2;
        float* states[2] = {s2.data(), s3.data()};
        DeltaNetIo io = c.io(o2.data(), t);
        delta_net_decode(c.s, io, 1, states, pool);
        DeltaNetIo io3 = c.io(o3.data(), t);
        delta_net_decode(c.s, io3, 1, states + 1, pool);
        ASSERT_TRUE(same_bits(s2, s3));
      }
      EXPECT_TRUE(same_bits(o1, o2)) << simd_level_name(level);
      EXPECT_TRUE(same_bits(s1, s2)) << simd_level_name(level);
    }
  }
}

TEST(DeltaNet, BatchedDecodeEqualsOneSequenceAtATime) {
  LevelGuard guard;
  ThreadPool pool(3);
  const DeltaNetShape shape{2, 4, 32, 24};
  const Case c(shape, 3, 31);  // three sequences, one token each
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<std::vector<float>> a, b;
    for (int i = 0; i < 3; ++i) a.push_back(c.state(40 + i)), b.push_back(c.state(40 + i));
    float* pa[3] = {a[0].data(), a[1].data(), a[2].data()};
    auto oa = c.out(), ob = c.out();
    delta_net_decode(c.s, c.io(oa.data()), 3, pa, pool);
    for (int i = 0; i < 3; ++i) delta_net_scan(c.s, c.io(ob.data(), i), 1, b[i].data(), pool);
    EXPECT_TRUE(same_bits(oa, ob)) << simd_level_name(level);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(same_bits(a[i], b[i])) << simd_level_name(level);
  }
}

TEST(DeltaNet, ChunkedAgreesWithTokenByToken) {
  LevelGuard guard;
  ThreadPool pool(2);
  for (const auto& shape : kShapes) {
    const Case c(shape, 150, 51);
    auto s_ref = c.state(52), o_ref = c.out();
    delta_net_scan_ref(c.s, c.io(o_ref.data()), c.T, s_ref.data());
    for (SimdLevel level : supported_levels()) {
      set_simd_level(level);
      for (int chunk : {64, 16, 7, 1}) {
        auto s1 = c.state(52), o1 = c.out();
        delta_net_chunked(c.s, c.io(o1.data()), c.T, s1.data(), pool, chunk);
        EXPECT_LE(max_diff(o1, o_ref), 4 * tolerance(shape, max_abs(o_ref)))
            << simd_level_name(level) << " chunk " << chunk << " " << shape.head_k_dim << "x" << shape.head_v_dim;
        EXPECT_LE(max_diff(s1, s_ref), 4 * tolerance(shape, max_abs(s_ref))) << simd_level_name(level) << " chunk " << chunk;
      }
    }
  }
}

TEST(DeltaNet, DecodeAfterChunkedPrefillAgreesWithOnePrefill) {
  LevelGuard guard;
  ThreadPool pool(2);
  const DeltaNetShape shape{2, 4, 64, 48};
  const Case c(shape, 90, 71);
  auto s_ref = c.state(72), o_ref = c.out();
  delta_net_scan_ref(c.s, c.io(o_ref.data()), c.T, s_ref.data());
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    auto s1 = c.state(72), o1 = c.out();
    delta_net_chunked(c.s, c.io(o1.data()), 70, s1.data(), pool);
    float* states[1] = {s1.data()};
    for (int64_t t = 70; t < c.T; ++t) delta_net_decode(c.s, c.io(o1.data(), t), 1, states, pool);
    EXPECT_LE(max_diff(o1, o_ref), 4 * tolerance(shape, max_abs(o_ref))) << simd_level_name(level);
    EXPECT_LE(max_diff(s1, s_ref), 4 * tolerance(shape, max_abs(s_ref))) << simd_level_name(level);
  }
}

TEST(DeltaNet, ChunkedSplitAtChunkMultiplesAndThreadCountsAreBitIdentical) {
  LevelGuard guard;
  ThreadPool p1(1), p2(2), p3(3);
  const DeltaNetShape shape{2, 4, 48, 40};
  const Case c(shape, 200, 61);
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    for (int chunk : {64, 16}) {
      auto s1 = c.state(62), o1 = c.out();
      delta_net_chunked(c.s, c.io(o1.data()), c.T, s1.data(), p1, chunk);
      // The same tokens in calls that start at multiples of the chunk, on other thread counts.
      const int64_t cuts[] = {0, chunk, 3 * chunk, c.T};
      auto s2 = c.state(62), o2 = c.out();
      for (int i = 0; i < 3; ++i)
        delta_net_chunked(c.s, c.io(o2.data(), cuts[i]), cuts[i + 1] - cuts[i], s2.data(), i == 1 ? p3 : p2, chunk);
      EXPECT_TRUE(same_bits(o1, o2)) << simd_level_name(level) << " chunk " << chunk;
      EXPECT_TRUE(same_bits(s1, s2)) << simd_level_name(level) << " chunk " << chunk;
    }
    // Token-by-token and decode over thread counts.
    auto s1 = c.state(63), o1 = c.out(), s2 = c.state(63), o2 = c.out();
    delta_net_scan(c.s, c.io(o1.data()), c.T, s1.data(), p1);
    delta_net_scan(c.s, c.io(o2.data()), c.T, s2.data(), p3);
    EXPECT_TRUE(same_bits(o1, o2) && same_bits(s1, s2)) << simd_level_name(level);
  }
}

}  // namespace
}  // namespace nt::test
