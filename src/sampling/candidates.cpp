// sampling/candidates.cpp — the chain's stages (see candidates.h for the contract of each).
#include "sampling/candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/check.h"

namespace nt {

void Candidates::assign(std::span<const float> logits) {
  items.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    // A NaN logit (a broken model) would break the total order: treat it as banned.
    items[i] = {static_cast<int32_t>(i), l == l ? l : -std::numeric_limits<float>::infinity()};
  }
  sorted_prefix = items.size() <= 1 ? items.size() : 0;
  id_order = true;
}

void Candidates::assign_top_k(std::span<const float> logits, size_t k) {
  if (k >= logits.size()) {  // apply_top_k is a no-op then: same (id) order
    assign(logits);
    return;
  }
  items.clear();
  items.reserve(k);
  // Min-heap under candidate_before: items.front() is the worst of the k best so far.
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < k; ++i)
    items.push_back({static_cast<int32_t>(i), logits[i] == logits[i] ? logits[i] : neg_inf});
  std::make_heap(items.begin(), items.end(), candidate_before);
  for (size_t i = k; i < logits.size(); ++i) {
    const Candidate x{static_cast<int32_t>(i), logits[i]};
    if (!(x.logit >= items.front().logit)) continue;  // fast reject (also skips NaN)
    if (!candidate_before(x, items.front())) continue;
    std::pop_heap(items.begin(), items.end(), candidate_before);
    items.back() = x;
    std::push_heap(items.begin(), items.end(), candidate_before);
  }
  std::sort_heap(items.begin(), items.end(), candidate_before);
  sorted_prefix = items.size();
  id_order = items.size() <= 1;
}

void Candidates::sort_prefix(size_t n) {
  n = std::min(n, items.size());
  if (n <= sorted_prefix) return;
  auto first = items.begin() + static_cast<ptrdiff_t>(sorted_prefix);
  auto mid = items.begin() + static_cast<ptrdiff_t>(n);
  if (n == items.size()) {
    std::sort(first, items.end(), candidate_before);
  } else if (n - sorted_prefix <= 128) {
    std::partial_sort(first, mid, items.end(), candidate_before);
  } else {
    std::nth_element(first, mid - 1, items.end(), candidate_before);
    std::sort(first, mid - 1, candidate_before);
  }
  sorted_prefix = n;
  // Only a full sort leaves the whole list in a uniquely determined order; the tail of a partial
  // sort is implementation-defined, so callers that partially sort must then truncate (keep_first).
  if (items.size() > 1) id_order = false;
}

void Candidates::keep_first(size_t n) {
  if (n >= items.size()) return;
  NT_CHECK(n <= sorted_prefix);
  items.resize(n);
  sorted_prefix = n;
  id_order = n <= 1;
}

float Candidates::max_logit() const {
  if (items.empty()) return -std::numeric_limits<float>::infinity();
  if (sorted_prefix > 0) return items[0].logit;
  float m = items[0].logit;
  for (const Candidate& x : items) m = std::max(m, x.logit);
  return m;
}

void apply_logit_bias(Candidates& c, std::span<const LogitBias> biases) {
  if (biases.empty()) return;
  NT_CHECK(c.id_order && c.sorted_prefix < 2);
  for (const LogitBias& b : biases) {
    if (b.token < 0 || static_cast<size_t>(b.token) >= c.size()) continue;
    c.items[static_cast<size_t>(b.token)].logit += b.bias;
  }
}

void apply_penalties(Candidates& c, std::span<const int32_t> history, float repeat_penalty,
                     float frequency_penalty, float presence_penalty) {
  if (history.empty()) return;
  if (repeat_penalty == 1.0f && frequency_penalty == 0.0f && presence_penalty == 0.0f) return;
  NT_CHECK(c.id_order && c.sorted_prefix < 2);
  std::vector<int32_t> seen(history.begin(), history.end());
  std::sort(seen.begin(), seen.end());
  for (size_t i = 0; i < seen.size();) {
    size_t j = i;
    while (j < seen.size() && seen[j] == seen[i]) ++j;
    const int32_t tok = seen[i];
    const float count = static_cast<float>(j - i);
    i = j;
    if (tok < 0 || static_cast<size_t>(tok) >= c.size()) continue;
    float& l = c.items[static_cast<size_t>(tok)].logit;
    if (repeat_penalty != 1.0f) l = l > 0.0f ? l / repeat_penalty : l * repeat_penalty;
    l -= count * frequency_penalty + presence_penalty;
  }
}

void apply_top_k(Candidates& c, int k) {
  if (k <= 0 || static_cast<size_t>(k) >= c.size()) return;
  c.sort_prefix(static_cast<size_t>(k));
  c.keep_first(static_cast<size_t>(k));
}

void apply_typical(Candidates& c, float p, size_t min_keep) {
  if (p >= 1.0f || c.size() <= 1) return;
  c.sort_all();
  std::vector<float> probs;
  softmax(c, probs);
  double h = 0.0;  // entropy in nats
  for (float q : probs)
    if (q > 0.0f) h -= static_cast<double>(q) * std::log(static_cast<double>(q));
  struct Scored {
    double shift;
    size_t index;
  };
  std::vector<Scored> scored(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const double q = probs[i];
    const double surprisal = q > 0.0 ? -std::log(q) : std::numeric_limits<double>::infinity();
    scored[i] = {std::fabs(surprisal - h), i};
  }
  // Ties keep the logit order (index order of the sorted list): a total order.
  std::sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return a.shift < b.shift || (a.shift == b.shift && a.index < b.index);
  });
  double cum = 0.0;
  size_t keep = scored.size();
  for (size_t i = 0; i < scored.size(); ++i) {
    cum += probs[scored[i].index];
    if (cum >= p && i + 1 >= min_keep) {
      keep = i + 1;
      break;
    }
  }
  std::vector<Candidate> kept;
  kept.reserve(keep);
  for (size_t i = 0; i < keep; ++i) kept.push_back(c.items[scored[i].index]);
  std::sort(kept.begin(), kept.end(), candidate_before);
  c.items = std::move(kept);
  c.sorted_prefix = c.items.size();
  c.id_order = c.items.size() <= 1;
}

void apply_top_p(Candidates& c, float p, size_t min_keep) {
  if (p >= 1.0f || c.size() <= 1) return;
  const double max_l = c.max_logit();
  double total = 0.0;
  for (const Candidate& x : c.items) total += std::exp(static_cast<double>(x.logit) - max_l);
  const double target = static_cast<double>(p) * total;
  double cum = 0.0;
  size_t checked = 0;
  size_t want = std::min<size_t>(c.size(), 64);
  for (;;) {
    c.sort_prefix(want);
    for (; checked < want; ++checked) {
      cum += std::exp(static_cast<double>(c.items[checked].logit) - max_l);
      if (cum >= target && checked + 1 >= min_keep) {
        c.keep_first(checked + 1);
        return;
      }
    }
    if (want == c.size()) return;  // rounding: the whole list is the nucleus
    want = std::min(c.size(), want * 8);
  }
}

void apply_min_p(Candidates& c, float p, size_t min_keep) {
  if (p <= 0.0f || c.size() <= 1) return;
  const float max_l = c.max_logit();
  const float threshold = max_l + std::log(p);  // p_i >= p * p_max  <=>  l_i >= l_max + log p
  size_t n_keep = 0;
  for (const Candidate& x : c.items) n_keep += x.logit >= threshold;
  if (n_keep < min_keep) {
    c.sort_prefix(min_keep);
    c.keep_first(min_keep);
    return;
  }
  const bool was_sorted = c.fully_sorted();
  auto end = std::remove_if(c.items.begin(), c.items.end(),
                            [&](const Candidate& x) { return x.logit < threshold; });
  c.items.erase(end, c.items.end());
  c.sorted_prefix = was_sorted ? c.items.size() : 0;
}

void apply_temperature(Candidates& c, float t) {
  if (c.items.empty()) return;
  if (t <= 0.0f) {
    const size_t best = argmax_index(c);
    const Candidate keep = c.items[best];
    c.items.assign(1, keep);
    c.sorted_prefix = 1;
    c.id_order = true;
    return;
  }
  if (t == 1.0f) return;
  const float inv = 1.0f / t;
  for (Candidate& x : c.items) x.logit *= inv;
}

void softmax(const Candidates& c, std::vector<float>& probs) {
  probs.resize(c.size());
  if (c.items.empty()) return;
  const double max_l = c.max_logit();
  if (!std::isfinite(max_l)) {  // everything banned: uniform over the list (caller's choice)
    for (float& q : probs) q = 1.0f / static_cast<float>(probs.size());
    return;
  }
  double sum = 0.0;
  std::vector<double> e(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    e[i] = std::exp(static_cast<double>(c.items[i].logit) - max_l);
    sum += e[i];
  }
  for (size_t i = 0; i < c.size(); ++i) probs[i] = static_cast<float>(e[i] / sum);
}

double entropy_bits(std::span<const float> probs) {
  double h = 0.0;
  for (float q : probs)
    if (q > 0.0f) h -= static_cast<double>(q) * std::log2(static_cast<double>(q));
  return h;
}

size_t draw_index(std::span<const float> probs, Rng& rng) {
  NT_CHECK(!probs.empty());
  double total = 0.0;
  for (float q : probs) total += q;
  const double target = rng.uniform() * total;
  double cum = 0.0;
  size_t last_nonzero = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0.0f) continue;
    cum += probs[i];
    last_nonzero = i;
    if (cum > target) return i;
  }
  return last_nonzero;  // rounding at the very end of the range
}

size_t argmax_index(const Candidates& c) {
  NT_CHECK(!c.items.empty());
  if (c.sorted_prefix > 0) return 0;
  size_t best = 0;
  for (size_t i = 1; i < c.size(); ++i)
    if (candidate_before(c.items[i], c.items[best])) best = i;
  return best;
}

}  // namespace nt
