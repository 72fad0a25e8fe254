// Norms, activations, softmax, RoPE (normal, NeoX, linear, YaRN, frequency factors), attention
// with grouped-query heads over paged spans, and row conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "kernel_test_util.h"
#include "kernels/kernels_internal.h"
#include "kernels/kv_types.h"
#include "tensor/quant_blocks.h"

namespace nt::test {
namespace {

TEST(Ops, RmsNormMatchesDefinition) {
  const float x[5] = {1, -2, 3, 0.5f, -4};
  const float w[5] = {1, 2, 0.5f, 1, -1};
  float y[5];
  rms_norm(x, w, y, 5, 1e-5f);
  double ss = 0;
  for (float v : x) ss += v * v;
  const double s = 1.0 / std::sqrt(ss / 5 + 1e-5);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y[i], x[i] * s * w[i], 1e-6);
  rms_norm(x, nullptr, y, 5, 1e-5f);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y[i], x[i] * s, 1e-6);
}

TEST(Ops, SiluMulAndAdd) {
  const float g[3] = {0, 1, -3}, u[3] = {2, 3, 4};
  float o[3];
  silu_mul(g, u, o, 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(o[i], g[i] / (1 + std::exp(-g[i])) * u[i], 1e-6);
  float y[3] = {1, 2, 3};
  add_inplace(y, u, 3);
  EXPECT_EQ(y[2], 7.0f);
}

TEST(Ops, SoftmaxSumsToOneAndHandlesLargeValues) {
  float x[4] = {1000, 1001, 999, -1e30f};
  softmax_inplace(x, 4);
  const double e = std::exp(1.0), z = 1 + e + 1 / e;
  EXPECT_NEAR(x[0], 1 / z, 1e-6);
  EXPECT_NEAR(x[1], e / z, 1e-6);
  EXPECT_NEAR(x[2], 1 / e / z, 1e-6);
  EXPECT_EQ(x[3], 0.0f);
}

// Independent double-precision RoPE (no YaRN): angle = pos * freq_scale * base^(-2i/n_rot) / ff_i.
void rope_double(std::vector<float>& x, int n_head, int head_dim, int pos, RopeStyle style, int n_rot, double base,
                 double freq_scale, const float* ff) {
  for (int h = 0; h < n_head; ++h) {
    float* v = x.data() + h * head_dim;
    for (int i = 0; i < n_rot / 2; ++i) {
      double theta = pos * freq_scale * std::pow(base, -2.0 * i / n_rot);
      if (ff) theta /= ff[i];
      const int a = style == RopeStyle::Normal ? 2 * i : i, b = style == RopeStyle::Normal ? 2 * i + 1 : i + n_rot / 2;
      const double xa = v[a], xb = v[b];
      v[a] = static_cast<float>(xa * std::cos(theta) - xb * std::sin(theta));
      v[b] = static_cast<float>(xa * std::sin(theta) + xb * std::cos(theta));
    }
  }
}

TEST(Ops, RopeNormalNeoXLinearAndFreqFactors) {
  const int n_head = 3, head_dim = 16;
  std::vector<float> ff(8);
  for (int i = 0; i < 8; ++i) ff[i] = 1.0f + i * 0.5f;
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::NeoX}) {
    for (int n_rot : {16, 8}) {
      for (bool use_ff : {false, true}) {
        RopeParams p;
        p.style = style;
        p.n_rot = n_rot;
        p.freq_base = 10000;
        p.freq_scale = 0.5f;
        p.freq_factors = use_ff ? ff.data() : nullptr;
        auto x = random_activations(n_head * head_dim, 3);
        auto expect = x;
        rope(x.data(), n_head, head_dim, 37, p);
        rope_double(expect, n_head, head_dim, 37, style, n_rot, 10000, 0.5, p.freq_factors);
        for (int i = 0; i < n_head * head_dim; ++i) EXPECT_NEAR(x[i], expect[i], 2e-4) << i;
      }
    }
  }
}

// The forward pass computes a token's angles once and rotates heads in groups (a KV head's query
// heads in its own task): bit-identical to rope() over all heads at once.
TEST(Ops, RopeAnglesOnceAppliedPerHeadGroupEqualsRope) {
  const int n_head = 6, head_dim = 16;
  for (RopeStyle style : {RopeStyle::Normal, RopeStyle::NeoX}) {
    for (int n_rot : {16, 10}) {
      RopeParams p;
      p.style = style;
      p.n_rot = n_rot;
      p.ext_factor = 0.5f;
      p.freq_scale = 0.25f;
      auto whole = random_activations(n_head * head_dim, 5);
      auto grouped = whole;
      rope(whole.data(), n_head, head_dim, 1234, p);
      ASSERT_EQ(rope_pairs(head_dim, p), n_rot / 2);
      std::vector<float> cs(static_cast<size_t>(n_rot / 2)), sn(cs.size());
      rope_angles(head_dim, 1234, p, cs.data(), sn.data());
      for (int h0 = 0; h0 < n_head; h0 += 2)
        rope_apply(grouped.data() + h0 * head_dim, 2, head_dim, p, cs.data(), sn.data());
      EXPECT_EQ(0, std::memcmp(whole.data(), grouped.data(), whole.size() * sizeof(float)));
    }
  }
}

TEST(Ops, RopeYarnPositionZeroOnlyScales) {
  // At pos 0 every angle is 0: YaRN leaves the vector scaled by attn_factor * (1 + 0.1 ln(1/s)).
  RopeParams p;
  p.n_rot = 16;
  p.freq_scale = 0.25f;
  p.ext_factor = 1.0f;
  p.n_ctx_orig = 4096;
  auto x = random_activations(32, 8);
  auto x0 = x;
  rope(x.data(), 2, 16, 0, p);
  const float m = 1.0f + 0.1f * std::log(4.0f);
  for (int i = 0; i < 32; ++i) EXPECT_NEAR(x[i], x0[i] * m, 1e-6);
  // And at a position, YaRN lies between pure interpolation and pure extrapolation per frequency:
  // the highest frequency (i = 0) extrapolates (angle = pos), the lowest interpolates.
  std::vector<float> v(16, 0.0f);
  v[0] = 1;                      // pair 0 of the Normal style
  v[14] = 1;                     // pair 7
  rope(v.data(), 1, 16, 10, p);
  EXPECT_NEAR(std::atan2(v[1], v[0]), std::remainder(10.0, 2 * M_PI), 1e-4);
  const double low = 10 * 0.25 * std::pow(10000.0, -14.0 / 16);
  EXPECT_NEAR(std::atan2(v[15], v[14]), low, 1e-5);
}

// The SIMD fp16 conversion (KV cache rows) rounds exactly as the scalar fp32_to_fp16: ties to
// even, subnormals, overflow to infinity, signed zeros; odd lengths exercise the remainder path.
TEST(Ops, ConvertToF16IsBitExactAtEveryLevel) {
  std::vector<float> x = random_activations(1001, 5);
  const float specials[] = {0.0f, -0.0f, 65504.0f, 65520.0f, 1e6f, -1e6f, 6.0e-8f, 3.0e-8f, 2.9e-8f, 6.1e-5f,
                            1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, -2.5e-6f, INFINITY, -INFINITY};
  for (size_t i = 0; i < sizeof specials / sizeof specials[0]; ++i) x[3 * i + 1] = specials[i];
  for (size_t i = 0; i < x.size(); i += 7) x[i] *= 1e-5f;  // subnormal range of fp16
  LevelGuard guard;
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    for (int64_t n : {int64_t(1001), int64_t(7), int64_t(8), int64_t(1)}) {
      std::vector<uint16_t> h(static_cast<size_t>(n));
      convert_row_from_f32(DType::F16, x.data(), h.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(h[i], fp32_to_fp16(x[i])) << simd_level_name(level) << " i=" << i << " x=" << x[i];
    }
  }
}

TEST(Ops, ConvertRoundTrips) {
  const auto x = random_activations(64, 17);
  std::vector<uint8_t> buf(64 * 4);
  std::vector<float> back(64);
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0}) {
    convert_row_from_f32(t, x.data(), buf.data(), 64);
    convert_row_to_f32(t, buf.data(), back.data(), 64);
    const double rel = t == DType::F32 ? 0 : t == DType::F16 ? 1.0 / 2048 : t == DType::BF16 ? 1.0 / 256 : 0;
    for (int i = 0; i < 64; ++i) {
      if (t == DType::Q8_0) {
        float amax = 0;
        for (int j = i / 32 * 32; j < i / 32 * 32 + 32; ++j) amax = std::fmax(amax, std::fabs(x[j]));
        EXPECT_NEAR(back[i], x[i], amax / 254 * 1.01 + amax / 1024) << i;  // half step + fp16 scale rounding
      } else {
        EXPECT_NEAR(back[i], x[i], std::fabs(x[i]) * rel) << dtype_name(t) << " " << i;
      }
    }
  }
}

// Attention: fast (every level) against the double reference, GQA, spans of uneven sizes, every
// pair of KV cache types in the table; and span layout must not change the result bits.
TEST(Ops, AttentionMatchesReferenceOverSpans) {
  LevelGuard guard;
  const int n_head = 6, n_head_kv = 2, head_dim = 64, n_pos = 45;
  const int row_elems = n_head_kv * head_dim;
  for (DType kt : kv_cache_types()) {
    for (DType vt : kv_cache_types()) {
      const size_t kb = dtype_row_bytes(kt, row_elems), vb = dtype_row_bytes(vt, row_elems);
      std::vector<uint8_t> K(kb * n_pos), V(vb * n_pos);
      for (int p = 0; p < n_pos; ++p) {
        const auto kr = random_activations(row_elems, 100 + p, 0.5f), vr = random_activations(row_elems, 900 + p);
        convert_row_from_f32(kt, kr.data(), K.data() + p * kb, row_elems);
        convert_row_from_f32(vt, vr.data(), V.data() + p * vb, row_elems);
      }
      const auto q = random_activations(n_head * head_dim, 7, 0.5f);
      // One contiguous span vs three uneven spans over the same rows.
      KvSpan one{K.data(), V.data(), n_pos};
      KvSpan three[3] = {{K.data(), V.data(), 10}, {K.data() + 10 * kb, V.data() + 10 * vb, 1},
                         {K.data() + 11 * kb, V.data() + 11 * vb, n_pos - 11}};
      const int32_t n_kv = 40;
      std::vector<float> ref(n_head * head_dim);
      attention_ref(q.data(), n_head, n_head_kv, head_dim, 0, n_head, kt, kb, vt, vb, &one, 1, n_kv, 0.125f, ref.data());
      for (SimdLevel level : supported_levels()) {
        set_simd_level(level);
        std::vector<float> a(n_head * head_dim), b(n_head * head_dim);
        attention(q.data(), n_head, n_head_kv, head_dim, 0, n_head, kt, kb, vt, vb, &one, 1, n_kv, 0.125f, a.data());
        attention(q.data(), n_head, n_head_kv, head_dim, 1, 4, kt, kb, vt, vb, three, 3, n_kv, 0.125f, b.data() );
        for (int i = 0; i < n_head * head_dim; ++i) EXPECT_NEAR(a[i], ref[i], 2e-5 + 1e-4 * std::fabs(ref[i]));
        for (int i = 1 * head_dim; i < 4 * head_dim; ++i) EXPECT_EQ(a[i], b[i]) << "span layout changed bits";
      }
    }
  }
}

// The AVX-512 score pass reduces 16 positions' sums together: every score must equal, bit for bit,
// the documented per-position sequence (16-lane fma in dimension order, then hsum512's pairing:
// lane i + i+8, + i+4, + i+2, + i+1), emulated here in scalar float. Positions in whole blocks of
// 16 and in the tail, spans of uneven sizes, one to five query heads per call.
TEST(Ops, AttentionScoresAreTheDocumentedSequence) {
  if (cpu_max_simd_level() < SimdLevel::Avx512) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (DType kt : {DType::F32, DType::F16, DType::BF16}) {
    for (int head_dim : {32, 64, 128}) {
      const int n_pos = 53;
      const size_t kb = dtype_row_bytes(kt, head_dim);
      std::vector<uint8_t> K(kb * n_pos);
      std::vector<float> kf(static_cast<size_t>(n_pos) * head_dim);
      for (int p = 0; p < n_pos; ++p) {
        const auto kr = random_activations(head_dim, 300 + p, 0.5f);
        convert_row_from_f32(kt, kr.data(), K.data() + p * kb, head_dim);
        convert_row_to_f32(kt, K.data() + p * kb, kf.data() + static_cast<size_t>(p) * head_dim, head_dim);
      }
      const float scale = 0.0883883f;
      KvSpan spans[3] = {{K.data(), nullptr, 7}, {K.data() + 7 * kb, nullptr, 20}, {K.data() + 27 * kb, nullptr, n_pos - 27}};
      const detail::AttnRowKernels fast = detail::attn_row_kernels_avx512(head_dim, kt, kt);
      ASSERT_NE(fast.scores, nullptr);
      // 1 to 5 query heads of the KV head in one call (2-4 share each K row's load).
      for (int n_g = 1; n_g <= 5; ++n_g) {
        std::vector<std::vector<float>> qg, sc;
        std::vector<const float*> qp;
        std::vector<float*> sp;
        for (int g = 0; g < n_g; ++g) {
          qg.push_back(random_activations(head_dim, 8 + g, 0.5f));
          sc.emplace_back(n_pos);
        }
        for (int g = 0; g < n_g; ++g) {
          qp.push_back(qg[g].data());
          sp.push_back(sc[g].data());
        }
        std::vector<float> mx(n_g);
        fast.scores(spans, 3, n_pos, kb, 0, qp.data(), n_g, scale, sp.data(), mx.data());
        for (int g = 0; g < n_g; ++g) {
          const std::vector<float>& q = qg[g];
          float want_mx = -INFINITY;
          for (int p = 0; p < n_pos; ++p) {
            float acc[16] = {};
            for (int j = 0; j < head_dim; j += 16)
              for (int l = 0; l < 16; ++l) acc[l] = std::fmaf(kf[static_cast<size_t>(p) * head_dim + j + l], q[j + l], acc[l]);
            float a[8], b[4], c[2];
            for (int i = 0; i < 8; ++i) a[i] = acc[i] + acc[i + 8];
            for (int i = 0; i < 4; ++i) b[i] = a[i] + a[i + 4];
            for (int i = 0; i < 2; ++i) c[i] = b[i] + b[i + 2];
            const float want = (c[0] + c[1]) * scale;
            EXPECT_EQ(sc[g][p], want) << dtype_name(kt) << " head_dim " << head_dim << " heads " << n_g << " head " << g
                                      << " position " << p;
            want_mx = std::fmax(want_mx, want);
          }
          EXPECT_EQ(mx[g], want_mx) << n_g << " heads, head " << g;
        }
      }
    }
  }
}

// The whole-head passes of each ISA (attention_avx2.cpp, attention_avx512.cpp) against that ISA's
// row ops they reschedule: scores (and their maximum) and weighted sums bit for bit, over uneven
// spans with a tail of positions that is not a multiple of 4 (nor of 16), one to four query heads
// per call, head_dim up to and past the 64 columns AVX2 holds in registers.
TEST(Ops, AttentionIsaPassesEqualRowOpsBitForBit) {
  if (cpu_max_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "no AVX2 on this CPU";
  for (SimdLevel level : supported_levels()) {
    if (level == SimdLevel::Scalar) continue;
    const bool avx512 = level == SimdLevel::Avx512;
    const detail::KvRowOps ops = avx512 ? detail::kv_row_ops_avx512() : detail::kv_row_ops_avx2();
    for (DType kt : {DType::F32, DType::F16, DType::BF16}) {
      for (int head_dim : {32, 48, 128, 256}) {
        const int n_pos = 45;
        const size_t kb = dtype_row_bytes(kt, head_dim);
        std::vector<uint8_t> K(kb * n_pos), V(kb * n_pos);
        for (int p = 0; p < n_pos; ++p) {
          convert_row_from_f32(kt, random_activations(head_dim, 300 + p, 0.5f).data(), K.data() + p * kb, head_dim);
          convert_row_from_f32(kt, random_activations(head_dim, 900 + p, 0.5f).data(), V.data() + p * kb, head_dim);
        }
        KvSpan spans[3] = {{K.data(), V.data(), 7},
                           {K.data() + 7 * kb, V.data() + 7 * kb, 21},
                           {K.data() + 28 * kb, V.data() + 28 * kb, n_pos - 28}};
        const detail::AttnRowKernels fast = avx512 ? detail::attn_row_kernels_avx512(head_dim, kt, kt)
                                                   : detail::attn_row_kernels_avx2(head_dim, kt, kt);
        ASSERT_NE(fast.scores, nullptr) << simd_level_name(level) << " " << dtype_name(kt) << " head_dim " << head_dim;
        ASSERT_NE(fast.weighted, nullptr) << simd_level_name(level) << " " << dtype_name(kt) << " head_dim " << head_dim;
        const float scale = 0.0883883f;
        for (int n_g = 1; n_g <= 4; ++n_g) {
          std::vector<std::vector<float>> qg, sc, pg, out;
          std::vector<const float*> qp, pp;
          std::vector<float*> sp, op;
          for (int g = 0; g < n_g; ++g) {
            qg.push_back(random_activations(head_dim, 8 + g, 0.5f));
            pg.push_back(random_activations(n_pos, 50 + g, 0.5f));
            sc.emplace_back(n_pos);
            out.emplace_back(head_dim);
          }
          for (int g = 0; g < n_g; ++g) qp.push_back(qg[g].data()), sp.push_back(sc[g].data());
          for (int g = 0; g < n_g; ++g) pp.push_back(pg[g].data()), op.push_back(out[g].data());
          std::vector<float> mx(n_g);
          fast.scores(spans, 3, n_pos, kb, 0, qp.data(), n_g, scale, sp.data(), mx.data());
          fast.weighted(spans, 3, n_pos, kb, 0, pp.data(), n_g, op.data());
          for (int g = 0; g < n_g; ++g) {
            float want_mx = -INFINITY;
            std::vector<float> want_out(head_dim, 0.0f);
            for (int p = 0; p < n_pos; ++p) {
              const float want = ops.dot(kt, K.data() + p * kb, qg[g].data(), head_dim) * scale;
              EXPECT_EQ(sc[g][p], want) << simd_level_name(level) << " " << dtype_name(kt) << " head_dim " << head_dim
                                        << " heads " << n_g << " head " << g << " pos " << p;
              want_mx = want > want_mx ? want : want_mx;
              ops.axpy(kt, V.data() + p * kb, pg[g][p], want_out.data(), head_dim);
            }
            EXPECT_EQ(mx[g], want_mx) << simd_level_name(level) << " " << dtype_name(kt) << " head " << g;
            EXPECT_EQ(0, std::memcmp(out[g].data(), want_out.data(), head_dim * sizeof(float)))
                << simd_level_name(level) << " " << dtype_name(kt) << " head_dim " << head_dim << " heads " << n_g
                << " head " << g << " weighted sum";
          }
        }
      }
    }
  }
}

// Query heads sharing a KV head are served together by the AVX-512 weighted pass: bit-identical to
// computing each head alone.
TEST(Ops, AttentionGroupedHeadsMatchSingleHeads) {
  LevelGuard guard;
  for (int n_head_kv : {1, 2}) {
    for (int group : {2, 3, 4, 5}) {
      const int n_head = n_head_kv * group, head_dim = 64, n_pos = 37;
      const int row_elems = n_head_kv * head_dim;
      const size_t rb = dtype_row_bytes(DType::F16, row_elems);
      std::vector<uint8_t> K(rb * n_pos), V(rb * n_pos);
      for (int p = 0; p < n_pos; ++p) {
        convert_row_from_f32(DType::F16, random_activations(row_elems, 500 + p, 0.5f).data(), K.data() + p * rb, row_elems);
        convert_row_from_f32(DType::F16, random_activations(row_elems, 700 + p).data(), V.data() + p * rb, row_elems);
      }
      const auto q = random_activations(n_head * head_dim, 9, 0.5f);
      KvSpan one{K.data(), V.data(), n_pos};
      for (SimdLevel level : supported_levels()) {
        set_simd_level(level);
        std::vector<float> all(n_head * head_dim), single(n_head * head_dim);
        attention(q.data(), n_head, n_head_kv, head_dim, 0, n_head, DType::F16, rb, DType::F16, rb, &one, 1, n_pos, 0.125f,
                  all.data());
        for (int h = 0; h < n_head; ++h)
          attention(q.data(), n_head, n_head_kv, head_dim, h, h + 1, DType::F16, rb, DType::F16, rb, &one, 1, n_pos,
                    0.125f, single.data());
        EXPECT_EQ(0, std::memcmp(all.data(), single.data(), all.size() * sizeof(float)))
            << "group " << group << " kv heads " << n_head_kv << " at " << simd_level_name(level);
      }
    }
  }
}

// attention_block (several query tokens of one sequence sharing each K / V pass) against one
// attention() call per token, bit for bit: consecutive causal lengths (the prefill case), a block
// whose lengths are not in order, one token alone; MHA and grouped heads; head_dim 48 / 64 / 128;
// every pair of KV cache types the head_dim allows (Q8_0 has no whole-head pass: a mix with it takes
// the row ops); uneven spans; strided queries and outputs (the gaps must stay untouched); a head range that
// starts inside a group.
TEST(Ops, AttentionBlockEqualsTokenByToken) {
  LevelGuard guard;
  struct Shape {
    int n_head, n_head_kv, head_dim;
  };
  for (const Shape sh : {Shape{6, 6, 48}, Shape{6, 2, 64}, Shape{4, 1, 128}}) {
    std::vector<std::pair<DType, DType>> kv_types;  // every pair of the table the head_dim allows
    for (DType kt : kv_cache_types())
      for (DType vt : kv_cache_types())
        if (check_kv_cache_type(kt, sh.head_dim).ok() && check_kv_cache_type(vt, sh.head_dim).ok())
          kv_types.push_back({kt, vt});
    for (const auto& [kt, vt] : kv_types) {
      const int n_pos = 45, row_elems = sh.n_head_kv * sh.head_dim, q_dim = sh.n_head * sh.head_dim;
      const size_t kb = dtype_row_bytes(kt, row_elems), vb = dtype_row_bytes(vt, row_elems);
      std::vector<uint8_t> K(kb * n_pos), V(vb * n_pos);
      for (int p = 0; p < n_pos; ++p) {
        convert_row_from_f32(kt, random_activations(row_elems, 1500 + p, 0.5f).data(), K.data() + p * kb, row_elems);
        convert_row_from_f32(vt, random_activations(row_elems, 1700 + p).data(), V.data() + p * vb, row_elems);
      }
      KvSpan spans[3] = {{K.data(), V.data(), 17}, {K.data() + 17 * kb, V.data() + 17 * vb, 3},
                         {K.data() + 20 * kb, V.data() + 20 * vb, n_pos - 20}};
      const int64_t ldq = q_dim + 8, ldo = q_dim + 5;
      for (const std::vector<int32_t>& n_kv : {std::vector<int32_t>{37, 38, 39, 40}, std::vector<int32_t>{9, 45, 3, 30, 20},
                                               std::vector<int32_t>{25}}) {
        const int n_q = static_cast<int>(n_kv.size());
        const auto q = random_activations(n_q * ldq, 31 + n_q, 0.5f);
        for (SimdLevel level : supported_levels()) {
          set_simd_level(level);
          for (int h0 : {0, 1}) {
            std::vector<float> block(static_cast<size_t>(n_q * ldo), 7.0f), one(static_cast<size_t>(q_dim));
            attention_block(q.data(), ldq, n_q, n_kv.data(), sh.n_head, sh.n_head_kv, sh.head_dim, h0, sh.n_head, kt, kb,
                            vt, vb, spans, 3, 0.125f, block.data(), ldo);
            for (int j = 0; j < n_q; ++j) {
              attention(q.data() + j * ldq, sh.n_head, sh.n_head_kv, sh.head_dim, h0, sh.n_head, kt, kb, vt, vb, spans, 3,
                        n_kv[static_cast<size_t>(j)], 0.125f, one.data());
              for (int i = h0 * sh.head_dim; i < q_dim; ++i)
                ASSERT_EQ(block[static_cast<size_t>(j * ldo + i)], one[static_cast<size_t>(i)])
                    << "token " << j << " element " << i << " head_dim " << sh.head_dim << " k " << dtype_name(kt)
                    << " v " << dtype_name(vt) << " at " << simd_level_name(level);
              for (int i = 0; i < h0 * sh.head_dim; ++i) ASSERT_EQ(block[static_cast<size_t>(j * ldo + i)], 7.0f);
              for (int64_t i = q_dim; i < ldo; ++i) ASSERT_EQ(block[static_cast<size_t>(j * ldo + i)], 7.0f) << "wrote a gap";
            }
          }
        }
      }
    }
  }
}

TEST(Ops, SimdLevelNameIsKnown) {
  const std::string l = kernels_simd_level();
  EXPECT_TRUE(l == "scalar" || l == "avx2" || l == "avx512") << l;
}

}  // namespace
}  // namespace nt::test

namespace nt::test {
namespace {

// SIMD exp-based kernels at every level against std::exp in double: about 1 ulp of exp plus the
// division and product rounding, so a 4e-7 relative budget (single-precision ulp is 6e-8 .. 1.2e-7).
constexpr double kExpRel = 4e-7;

TEST(Ops, SiluMulAndSoftmaxAtEveryLevel) {
  LevelGuard guard;
  const int64_t n = 75;  // not a multiple of 8 or 16
  std::vector<float> g(n), u(n);
  for (int64_t i = 0; i < n; ++i) {
    g[i] = -90.0f + 180.0f * static_cast<float>(i) / (n - 1);  // covers both clamps
    u[i] = 0.5f + 0.01f * static_cast<float>(i);
  }
  auto s = random_activations(n, 21, 5.0f);
  s[3] = -1e30f;  // a masked score
  double z = 0, mx = -1e300;
  for (float v : s) mx = std::fmax(mx, v);
  for (float v : s) z += std::exp(static_cast<double>(v) - mx);
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<float> o(n);
    silu_mul(g.data(), u.data(), o.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double e = static_cast<double>(g[i]) / (1 + std::exp(-static_cast<double>(g[i]))) * u[i];
      EXPECT_NEAR(o[i], e, kExpRel * std::fabs(e) + 1e-35)  /* beyond the clamps: ~0 */ << simd_level_name(level) << " " << g[i];
    }
    auto x = s;
    softmax_inplace(x.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const double arg = static_cast<double>(s[i]) - mx, e = std::exp(arg) / z;
      // plus the rounding of the float argument x - max: |arg| * 2^-24 relative
      EXPECT_NEAR(x[i], e, (kExpRel * 4 + std::fabs(arg) * 6e-8) * std::fabs(e) + 1e-30) << simd_level_name(level) << " " << i;
    }
    EXPECT_EQ(x[3], 0.0f);
  }
}

// GELU (tanh form) gate: the scalar reference against the formula in double, and every SIMD
// level against the reference, across both exp clamps and a tail shorter than a vector.
TEST(Ops, GeluMulAtEveryLevel) {
  LevelGuard guard;
  const int64_t n = 77;
  std::vector<float> g(n), u(n), ref(n);
  for (int64_t i = 0; i < n; ++i) {
    g[i] = -40.0f + 80.0f * static_cast<float>(i) / (n - 1);
    u[i] = 0.5f + 0.01f * static_cast<float>(i);
  }
  g[5] = 0.0f, g[6] = 1e-3f, g[7] = -0.7f, g[8] = 2.5f;
  gelu_mul_ref(g.data(), u.data(), ref.data(), n);
  // The float formula loses to cancellation in 1 + tanh for negative g: an absolute error of a few
  // ulp of |g * up|. The SIMD levels' sigmoid form does not, so they also meet the relative bound.
  std::vector<double> e(n);
  for (int64_t i = 0; i < n; ++i) {
    const double x = g[i];
    // 0.5 x (1 + tanh(v)) = x / (1 + exp(-2v)), without the cancellation
    e[i] = x / (1 + std::exp(-2 * 0.7978845608028654 * (x + 0.044715 * x * x * x))) * u[i];
    EXPECT_NEAR(ref[i], e[i], 1e-6 * std::fabs(e[i]) + 2.4e-7 * std::fabs(g[i] * u[i])) << x;
  }
  for (SimdLevel level : supported_levels()) {
    set_simd_level(level);
    std::vector<float> o(n);
    gelu_mul(g.data(), u.data(), o.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(o[i], ref[i], 1e-6 * std::fabs(ref[i]) + 2.4e-7 * std::fabs(g[i] * u[i]))
          << simd_level_name(level) << " " << g[i];
      // exp's argument -2v carries float rounding: a relative error of about |2v| ulp in the result
      const double v2 = std::fabs(2 * 0.7978845608028654 * (g[i] + 0.044715 * g[i] * g[i] * g[i]));
      if (level != SimdLevel::Scalar)
        EXPECT_NEAR(o[i], e[i], (1e-6 + 3e-7 * v2) * std::fabs(e[i]) + 1e-35) << simd_level_name(level) << " " << g[i];
    }
  }
}

}  // namespace
}  // namespace nt::test
