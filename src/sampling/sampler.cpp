// sampling/sampler.cpp — the chain (see sampler.h for the order and the reproducibility contract).
#include "sampling/sampler.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/check.h"
#include "core/strings.h"

namespace nt {

namespace {

bool in_unit(float x) { return std::isfinite(x) && x >= 0.0f && x <= 1.0f; }

// The first index of the largest value (NaN never wins; 0 when none exceeds -inf): the maximum over
// 16 independent lanes, then the first index holding it. The one-pass scan carried every comparison
// through the running maximum (a maxss chain, ~170 us per 152k logits; the compiler does not
// vectorize the lane form, hence SSE2, which every x86-64 CPU has).
size_t first_argmax(std::span<const float> x) {
  constexpr size_t kLanes = 16;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const size_t n = x.size(), n_full = n / kLanes * kLanes;
  const float* p = x.data();
  float m = kNegInf;
#if defined(__SSE2__)
  __m128 lane[4];
  for (__m128& v : lane) v = _mm_set1_ps(kNegInf);
  for (size_t i = 0; i < n_full; i += kLanes)
    for (int k = 0; k < 4; ++k) lane[k] = _mm_max_ps(_mm_loadu_ps(p + i + 4 * k), lane[k]);  // x > lane ? x : lane
  alignas(16) float l16[kLanes];
  for (int k = 0; k < 4; ++k) _mm_store_ps(l16 + 4 * k, lane[k]);
#else
  float l16[kLanes];
  std::fill(l16, l16 + kLanes, kNegInf);
  for (size_t i = 0; i < n_full; i += kLanes)
    for (size_t l = 0; l < kLanes; ++l) l16[l] = p[i + l] > l16[l] ? p[i + l] : l16[l];
#endif
  for (float v : l16) m = v > m ? v : m;
  for (size_t i = n_full; i < n; ++i) m = p[i] > m ? p[i] : m;
  if (!(m > kNegInf)) return 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128 mv = _mm_set1_ps(m);
  for (; i < n_full; i += kLanes) {
    __m128 eq = _mm_cmpeq_ps(_mm_loadu_ps(p + i), mv);
    for (int k = 1; k < 4; ++k) eq = _mm_or_ps(eq, _mm_cmpeq_ps(_mm_loadu_ps(p + i + 4 * k), mv));
    if (_mm_movemask_ps(eq)) break;
  }
#endif
  for (; i < n; ++i)
    if (p[i] == m) return i;
  return 0;  // not reached: m is one of the values
}

}  // namespace

Status validate(const SamplerParams& p) {
  if (std::isnan(p.temp) || std::isinf(p.temp))
    return make_error("temperature must be a finite number; 0 or less means greedy (got %g)", p.temp);
  if (!in_unit(p.top_p)) return make_error("top_p must be between 0 and 1 (got %g)", p.top_p);
  if (!in_unit(p.min_p)) return make_error("min_p must be between 0 and 1 (got %g)", p.min_p);
  if (!in_unit(p.typical_p))
    return make_error("typical_p must be between 0 and 1 (got %g)", p.typical_p);
  if (!std::isfinite(p.repeat_penalty) || p.repeat_penalty <= 0.0f)
    return make_error("repeat_penalty must be a positive number; 1 = off (got %g)",
                      p.repeat_penalty);
  if (!std::isfinite(p.presence_penalty))
    return make_error("presence_penalty must be a finite number (got %g)", p.presence_penalty);
  if (!std::isfinite(p.frequency_penalty))
    return make_error("frequency_penalty must be a finite number (got %g)", p.frequency_penalty);
  if (p.repeat_last_n < -1)
    return make_error("repeat_last_n must be -1 (context size), 0 (off) or positive (got %d)",
                      p.repeat_last_n);
  for (const LogitBias& b : p.logit_bias)
    if (std::isnan(b.bias)) return make_error("logit_bias for token %d is not a number", b.token);
  return {};
}

Status validate_for_vocab(const SamplerParams& p, int32_t n_vocab) {
  for (const LogitBias& b : p.logit_bias)
    if (b.token < 0 || b.token >= n_vocab)
      return make_error("logit_bias token %d is outside the vocabulary (0..%d)", b.token, n_vocab - 1);
  return {};
}

Result<LogitBias> parse_logit_bias(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  if (i == 0 || i > 9 || i + 1 >= s.size() || (s[i] != '+' && s[i] != '-'))
    return make_error("logit_bias '%.*s': expected TOKEN_ID+BIAS or TOKEN_ID-BIAS "
                      "(e.g. 15043+1.5 or 2-inf)",
                      static_cast<int>(s.size()), s.data());
  const int32_t token = static_cast<int32_t>(std::strtol(std::string(s.substr(0, i)).c_str(),
                                                         nullptr, 10));
  const std::string rest(s.substr(i + 1));
  if (rest[0] == '+' || rest[0] == '-' || rest[0] == ' ')
    return make_error("logit_bias '%.*s': one sign only, between the token id and the bias",
                      static_cast<int>(s.size()), s.data());
  errno = 0;
  char* end = nullptr;
  const float v = std::strtof(rest.c_str(), &end);
  if (end != rest.c_str() + rest.size() || std::isnan(v) || errno == ERANGE)
    return make_error("logit_bias '%.*s': '%s' is not a number (use e.g. 1.5 or inf)",
                      static_cast<int>(s.size()), s.data(), rest.c_str());
  return LogitBias{token, s[i] == '-' ? -v : v};
}

std::string describe(const SamplerParams& p) {
  std::string out;
  auto add = [&](const std::string& stage) {
    if (!out.empty()) out += " -> ";
    out += stage;
  };
  if (!p.logit_bias.empty()) add(str_printf("logit-bias x%zu", p.logit_bias.size()));
  if (p.repeat_last_n != 0 && (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f ||
                               p.presence_penalty != 0.0f))
    add(str_printf("penalties(last %d: repeat %.2f freq %.2f presence %.2f)", p.repeat_last_n,
                   p.repeat_penalty, p.frequency_penalty, p.presence_penalty));
  if (p.top_k > 0) add(str_printf("top-k %d", p.top_k));
  if (p.typical_p < 1.0f) add(str_printf("typical %.2f", p.typical_p));
  if (p.top_p < 1.0f) add(str_printf("top-p %.2f", p.top_p));
  if (p.min_p > 0.0f) add(str_printf("min-p %.2f", p.min_p));
  add(p.temp <= 0.0f ? std::string("greedy") : str_printf("temp %.2f", p.temp));
  return out;
}

Sampler::Sampler(const SamplerParams& params, int32_t n_vocab, int32_t n_ctx)
    : params_(params), n_vocab_(n_vocab) {
  NT_CHECK(n_vocab > 0);
  NT_CHECK(validate(params).ok() && validate_for_vocab(params, n_vocab).ok());
  window_ = params.repeat_last_n < 0 ? static_cast<size_t>(std::max(n_ctx, 0))
                                     : static_cast<size_t>(params.repeat_last_n);
  seed_ = params.seed ? *params.seed : random_seed();
  rng_.reseed(seed_);
  history_.reserve(std::min<size_t>(window_, 4096));
}

void Sampler::reset() {
  history_.clear();
  history_pos_ = 0;
  rng_.reseed(seed_);
}

void Sampler::accept(int32_t token) {
  if (window_ == 0) return;
  if (history_.size() < window_) {
    history_.push_back(token);
  } else {
    history_[history_pos_] = token;
    history_pos_ = (history_pos_ + 1) % window_;
  }
}

void Sampler::accept(std::span<const int32_t> tokens) {
  // Only the last window_ tokens can matter.
  const size_t skip = tokens.size() > window_ ? tokens.size() - window_ : 0;
  for (size_t i = skip; i < tokens.size(); ++i) accept(tokens[i]);
}

int32_t Sampler::sample(std::span<const float> logits, StepInfo* info, size_t n_top) {
  NT_CHECK(logits.size() == static_cast<size_t>(n_vocab_));
  const SamplerParams& p = params_;
  const bool greedy = p.temp <= 0.0f;
  const bool penalties = window_ > 0 && !history_.empty() &&
                         (p.repeat_penalty != 1.0f || p.frequency_penalty != 0.0f ||
                          p.presence_penalty != 0.0f);
  const bool raw = p.logit_bias.empty() && !penalties;  // stages 1-2 change nothing
  if (greedy && p.typical_p >= 1.0f && info == nullptr && raw) {
    // top-k, top-p and min-p always keep the highest candidate: greedy is the raw argmax (ties
    // keep the lowest id).
    return static_cast<int32_t>(first_argmax(logits));
  }
  if (raw && p.top_k > 0) {
    cand_.assign_top_k(logits, static_cast<size_t>(p.top_k));  // == assign + apply_top_k
  } else {
    cand_.assign(logits);
    apply_logit_bias(cand_, p.logit_bias);
    apply_penalties(cand_, history_, p.repeat_penalty, p.frequency_penalty, p.presence_penalty);
    if (greedy && p.typical_p >= 1.0f && info == nullptr)
      return cand_.items[argmax_index(cand_)].id;
    apply_top_k(cand_, p.top_k);
  }
  apply_typical(cand_, p.typical_p);
  apply_top_p(cand_, p.top_p);
  apply_min_p(cand_, p.min_p);

  size_t chosen;
  if (greedy) {
    chosen = argmax_index(cand_);
    if (info) softmax(cand_, probs_);
  } else {
    apply_temperature(cand_, p.temp);
    softmax(cand_, probs_);
    // The list is in a uniquely determined order here (id order or fully sorted), so the
    // cumulative sum, and so the draw, is the same everywhere.
    NT_CHECK(cand_.id_order || cand_.fully_sorted());
    chosen = draw_index(probs_, rng_);
  }
  const int32_t token = cand_.items[chosen].id;
  if (info) {
    info->token = token;
    info->prob = probs_[chosen];
    info->entropy = entropy_bits(probs_);
    info->n_candidates = cand_.size();
    info->top.clear();
    std::vector<size_t> order(cand_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const size_t n = std::min(n_top, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<ptrdiff_t>(n), order.end(),
                      [&](size_t a, size_t b) {
                        return probs_[a] > probs_[b] ||
                               (probs_[a] == probs_[b] && cand_.items[a].id < cand_.items[b].id);
                      });
    for (size_t i = 0; i < n; ++i) info->top.push_back({cand_.items[order[i]].id, probs_[order[i]]});
  }
  return token;
}

}  // namespace nt
