// tensor/quantize_k.cpp — K-quant encoders (Q4_K, Q5_K, Q6_K).
//
// Approach (the published K-quant scheme): a 256-element super-block holds sub-blocks with their own
// scale (and min, for Q4_K/Q5_K), themselves quantized to 6 or 8 bits against one fp16 super-scale.
// Per sub-block we search candidate grid scales around the range, round the values onto each grid,
// then solve the least-squares scale (and min) for those integer levels and keep the candidate with
// the least squared error. After the sub-block scales are quantized, the values are re-rounded
// against the scales the decoder will actually use, and each 6-bit scale/min is nudged by +-1 where
// that lowers the block's error.
#include <algorithm>
#include <cmath>

#include "tensor/fp16.h"
#include "tensor/nearest_int.h"
#include "tensor/quantize_k.h"

namespace nt {

namespace {

// Fits x ~ a * L - b with L in [0, nmax], a >= 0, b >= 0 (the min is never above zero, so the
// format's unsigned min holds it). Writes a and b; L is left for the caller to recompute.
void fit_scale_min(const float* x, int n, int nmax, QuantEffort effort, float& a_out, float& b_out) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) { lo = std::min(lo, x[i]); hi = std::max(hi, x[i]); }
  lo = std::min(lo, 0.0f);
  if (hi <= lo) { a_out = 0; b_out = -lo; return; }
  float best_a = (hi - lo) / static_cast<float>(nmax), best_m = lo;
  float best_err = INFINITY;
  const int n_steps = effort == QuantEffort::kBest ? 24 : 0;
  for (int s = 0; s <= n_steps; ++s) {
    // s = 0 is the plain min/max grid; the others stretch it by up to +1.2 and shrink by up to -1.2 levels
    const float stretch = s == 0 ? 0.0f : -1.2f + 0.1f * static_cast<float>(s - 1);
    const float iscale = (static_cast<float>(nmax) + stretch) / (hi - lo);
    float sw = 0, sl = 0, sll = 0, sx = 0, slx = 0;
    int L[32];
    for (int i = 0; i < n; ++i) {
      int l = std::clamp(nearest_int(iscale * (x[i] - lo)), 0, nmax);
      L[i] = l;
      sw += 1; sl += l; sll += static_cast<float>(l) * l; sx += x[i]; slx += l * x[i];
    }
    const float det = sw * sll - sl * sl;
    if (det <= 0) continue;
    float a = (sw * slx - sl * sx) / det;
    float m = (sll * sx - sl * slx) / det;
    if (m > 0) { m = 0; a = slx / sll; }
    if (a <= 0) continue;
    float err = 0;
    for (int i = 0; i < n; ++i) {
      float e = a * static_cast<float>(L[i]) + m - x[i];
      err += e * e;
    }
    if (err < best_err) { best_err = err; best_a = a; best_m = m; }
  }
  a_out = best_a;
  b_out = -best_m;
}

// Squared error of sub-block x with effective scale d and min m (x ~ d * L - m), L in [0, nmax].
float sub_error(const float* x, int n, int nmax, float d, float m) {
  const float id = d > 0 ? 1.0f / d : 0;
  float err = 0;
  for (int i = 0; i < n; ++i) {
    int l = std::clamp(nearest_int((x[i] + m) * id), 0, nmax);
    float e = d * static_cast<float>(l) - m - x[i];
    err += e * e;
  }
  return err;
}

// Shared by Q4_K and Q5_K: 8 sub-blocks of 32, 6-bit scales and mins. Fills sc/mn (6-bit),
// d/dmin (fp16 bits) and L (levels 0..nmax).
void encode_scale_min_superblock(const float* x, int nmax, QuantEffort effort, uint8_t sc[8], uint8_t mn[8],
                                 uint16_t& d16, uint16_t& dmin16, uint8_t L[256]) {
  float a[8], b[8];
  float max_a = 0, max_b = 0;
  for (int j = 0; j < 8; ++j) {
    fit_scale_min(x + 32 * j, 32, nmax, effort, a[j], b[j]);
    max_a = std::max(max_a, a[j]);
    max_b = std::max(max_b, b[j]);
  }
  d16 = fp32_to_fp16(max_a / 63.0f);
  dmin16 = fp32_to_fp16(max_b / 63.0f);
  const float d = fp16_to_fp32(d16), dmin = fp16_to_fp32(dmin16);
  for (int j = 0; j < 8; ++j) {
    int s = d > 0 ? std::clamp(nearest_int(a[j] / d), 0, 63) : 0;
    int m = dmin > 0 ? std::clamp(nearest_int(b[j] / dmin), 0, 63) : 0;
    if (effort == QuantEffort::kBest) {
      // nudge the quantized scale/min by one step where that lowers this sub-block's error
      const float* xs = x + 32 * j;
      float best = sub_error(xs, 32, nmax, d * s, dmin * m);
      int bs = s, bm = m;
      for (int ds = -1; ds <= 1; ++ds)
        for (int dm = -1; dm <= 1; ++dm) {
          int s2 = s + ds, m2 = m + dm;
          if ((ds == 0 && dm == 0) || s2 < 0 || s2 > 63 || m2 < 0 || m2 > 63) continue;
          float e = sub_error(xs, 32, nmax, d * s2, dmin * m2);
          if (e < best) { best = e; bs = s2; bm = m2; }
        }
      s = bs;
      m = bm;
    }
    sc[j] = static_cast<uint8_t>(s);
    mn[j] = static_cast<uint8_t>(m);
    const float de = d * s, me = dmin * m;
    const float id = de > 0 ? 1.0f / de : 0;
    for (int i = 0; i < 32; ++i)
      L[32 * j + i] = static_cast<uint8_t>(std::clamp(nearest_int((x[32 * j + i] + me) * id), 0, nmax));
  }
}

// Packs 8 six-bit scales and mins into the 12-byte K_SCALE layout shared by Q4_K and Q5_K.
void pack_scales(const uint8_t sc[8], const uint8_t mn[8], uint8_t out[12]) {
  std::memset(out, 0, 12);
  for (int j = 0; j < 4; ++j) {
    out[j] = sc[j] & 63;
    out[j + 4] = mn[j] & 63;
  }
  for (int j = 4; j < 8; ++j) {
    out[j + 4] = static_cast<uint8_t>((sc[j] & 0xF) | ((mn[j] & 0xF) << 4));
    out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
    out[j] |= static_cast<uint8_t>((mn[j] >> 4) << 6);
  }
}

// Fits x ~ a * L with L in [-nmax, nmax - 1] (least squares on the candidate grids). Returns a.
float fit_symmetric(const float* x, int n, int nmax, QuantEffort effort) {
  float amax = 0, vmax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) { amax = std::fabs(x[i]); vmax = x[i]; }
  if (amax == 0) return 0;
  float best_a = vmax / -static_cast<float>(nmax), best_score = -1;
  const int n_steps = effort == QuantEffort::kBest ? 9 : 0;
  for (int s = -n_steps; s <= n_steps; ++s) {
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(s)) / vmax;
    float sxl = 0, sll = 0;
    for (int i = 0; i < n; ++i) {
      int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
      sxl += x[i] * l;
      sll += static_cast<float>(l) * l;
    }
    if (sll <= 0) continue;
    // least-squares error is sum(x^2) - sxl^2 / sll: maximise sxl^2 / sll
    const float score = sxl * sxl / sll;
    if (score > best_score) { best_score = score; best_a = sxl / sll; }
  }
  return best_a;
}

}  // namespace

void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t nb, QuantEffort effort) {
  uint8_t L[256], sc[8], mn[8];
  for (int64_t b = 0; b < nb; ++b, x += 256) {
    encode_scale_min_superblock(x, 15, effort, sc, mn, y[b].d, y[b].dmin, L);
    pack_scales(sc, mn, y[b].scales);
    // each 64 values: the first 32 in the low nibbles, the next 32 in the high nibbles
    for (int g = 0; g < 4; ++g)
      for (int l = 0; l < 32; ++l)
        y[b].qs[32 * g + l] = static_cast<uint8_t>(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
  }
}

void quantize_row_q5_k(const float* x, BlockQ5_K* y, int64_t nb, QuantEffort effort) {
  uint8_t L[256], sc[8], mn[8];
  for (int64_t b = 0; b < nb; ++b, x += 256) {
    encode_scale_min_superblock(x, 31, effort, sc, mn, y[b].d, y[b].dmin, L);
    pack_scales(sc, mn, y[b].scales);
    std::memset(y[b].qh, 0, sizeof(y[b].qh));
    for (int g = 0; g < 4; ++g)
      for (int l = 0; l < 32; ++l) {
        const uint8_t lo = L[64 * g + l], hi = L[64 * g + 32 + l];
        y[b].qs[32 * g + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
        // bit 4 of value 64g + l goes to qh[l] bit 2g, of value 64g + 32 + l to bit 2g + 1
        y[b].qh[l] |= static_cast<uint8_t>(((lo >> 4) & 1) << (2 * g));
        y[b].qh[l] |= static_cast<uint8_t>(((hi >> 4) & 1) << (2 * g + 1));
      }
  }
}

void quantize_row_q6_k(const float* x, BlockQ6_K* y, int64_t nb, QuantEffort effort) {
  constexpr int kNmax = 32;
  int8_t L[256];
  for (int64_t b = 0; b < nb; ++b, x += 256) {
    float a[16];
    float amax = 0, vmax = 0;
    for (int j = 0; j < 16; ++j) {
      a[j] = fit_symmetric(x + 16 * j, 16, kNmax, effort);
      if (std::fabs(a[j]) > amax) { amax = std::fabs(a[j]); vmax = a[j]; }
    }
    // the largest sub-block scale maps to -128, the full int8 range
    y[b].d = fp32_to_fp16(amax > 0 ? vmax / -128.0f : 0.0f);
    const float d = fp16_to_fp32(y[b].d);
    for (int j = 0; j < 16; ++j) {
      int s = d != 0 ? std::clamp(nearest_int(a[j] / d), -128, 127) : 0;
      const float* xs = x + 16 * j;
      auto err_for = [&](int sc) {
        const float de = d * static_cast<float>(sc);
        const float id = de != 0 ? 1.0f / de : 0;
        float err = 0;
        for (int i = 0; i < 16; ++i) {
          int l = std::clamp(nearest_int(xs[i] * id), -kNmax, kNmax - 1);
          float e = de * static_cast<float>(l) - xs[i];
          err += e * e;
        }
        return err;
      };
      if (effort == QuantEffort::kBest && s != 0) {
        float best = err_for(s);
        for (int ds : {-1, 1}) {
          int s2 = s + ds;
          if (s2 < -128 || s2 > 127 || s2 == 0) continue;
          float e = err_for(s2);
          if (e < best) { best = e; s = s2; }
        }
      }
      y[b].scales[j] = static_cast<int8_t>(s);
      const float de = d * static_cast<float>(s);
      const float id = de != 0 ? 1.0f / de : 0;
      for (int i = 0; i < 16; ++i) L[16 * j + i] = static_cast<int8_t>(std::clamp(nearest_int(xs[i] * id), -kNmax, kNmax - 1));
    }
    // two halves of 128: ql holds low nibbles (l and l + 64 share a byte; l + 32 and l + 96 too),
    // qh holds the 2 high bits of l, l + 32, l + 64, l + 96 in bit pairs 0, 2, 4, 6
    for (int h = 0; h < 2; ++h) {
      uint8_t* ql = y[b].ql + 64 * h;
      uint8_t* qh = y[b].qh + 32 * h;
      const int8_t* Lh = L + 128 * h;
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = static_cast<uint8_t>(Lh[l] + 32), q2 = static_cast<uint8_t>(Lh[l + 32] + 32);
        const uint8_t q3 = static_cast<uint8_t>(Lh[l + 64] + 32), q4 = static_cast<uint8_t>(Lh[l + 96] + 32);
        ql[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

}  // namespace nt
