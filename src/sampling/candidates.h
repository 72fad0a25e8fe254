// sampling/candidates.h — the sampler chain's stages as functions over a candidate list, so each
// stage can be tested on a hand-made distribution. Owns: the candidate list and every transform
// (logit bias, penalties, top-k, typical-p, top-p, min-p, temperature), softmax and the draw.
// Must not know: models, tokenizers, the CLI. The Sampler (sampler.h) chains these in order.
//
// Determinism: every ordering uses the total order (logit descending, token id ascending), so ties
// resolve the same way on every platform and standard library.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/rng.h"

namespace nt {

struct Candidate {
  int32_t id;
  float logit;
};

// The tokens still in play. Starts as the whole vocabulary in id order. The list's order is always
// uniquely determined (id order, or the total order below, or a stage's documented order), never
// left to an implementation-defined partial sort, so the draw is the same on every platform.
struct Candidates {
  std::vector<Candidate> items;
  size_t sorted_prefix = 0;  // the first sorted_prefix items are the largest, in order
  bool id_order = true;      // items are in ascending id order (true after assign)

  void assign(std::span<const float> logits);  // logits: [n_vocab]
  // Same result as assign() then apply_top_k(k) (k > 0), in one pass over the logits without
  // building the full list: a bounded heap of the k best under the total order.
  void assign_top_k(std::span<const float> logits, size_t k);
  size_t size() const { return items.size(); }
  bool fully_sorted() const { return sorted_prefix >= items.size(); }
  // Makes sure the first min(n, size) items are the n largest, in order (partial sort, O(V)).
  void sort_prefix(size_t n);
  void sort_all() { sort_prefix(items.size()); }
  // Truncates to the first n items (only valid when the first n are the sorted prefix, or n >= size).
  void keep_first(size_t n);
  // Largest logit (O(1) when sorted, else a scan).
  float max_logit() const;
};

// Orders by logit descending then id ascending (the chain's one total order).
inline bool candidate_before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

struct LogitBias {
  int32_t token;
  float bias;  // added to the logit; -inf bans the token
};

// 1. Adds each bias to its token's logit. Call on a freshly assigned list (items[i].id == i).
void apply_logit_bias(Candidates& c, std::span<const LogitBias> biases);

// 2. Penalties over the recent-token window `history` (most recent last), as llama.cpp defines
// them: for each token seen n > 0 times, logit = logit > 0 ? logit / repeat : logit * repeat;
// then logit -= n * frequency + presence. Call on a freshly assigned list (items[i].id == i).
void apply_penalties(Candidates& c, std::span<const int32_t> history, float repeat_penalty,
                     float frequency_penalty, float presence_penalty);

// 3. Keeps the k highest logits (k <= 0: no-op). Leaves the kept list sorted.
void apply_top_k(Candidates& c, int k);

// 4. Locally typical sampling (Meister et al. 2022): keeps the tokens whose surprisal is closest to
// the entropy until their probability mass reaches p (p >= 1: no-op). Leaves the list sorted by logit.
void apply_typical(Candidates& c, float p, size_t min_keep = 1);

// 5. Nucleus: keeps the smallest prefix (by probability) whose mass reaches p (p >= 1: no-op).
// Sorts only as far as needed (grows a sorted prefix until the mass is reached).
void apply_top_p(Candidates& c, float p, size_t min_keep = 1);

// 6. Keeps tokens with probability >= p * (max probability) (p <= 0: no-op). Order preserved.
void apply_min_p(Candidates& c, float p, size_t min_keep = 1);

// 7. Divides logits by t (t > 0). t <= 0 is greedy: keeps only the highest candidate.
void apply_temperature(Candidates& c, float t);

// Softmax of the candidates' logits, in the list's order: probs[i] belongs to c.items[i].
// Computed in double and returned as float; -inf logits get probability 0.
void softmax(const Candidates& c, std::vector<float>& probs);

// Shannon entropy in bits of a probability vector (zeros ignored).
double entropy_bits(std::span<const float> probs);

// Draws an index into c.items from probs (same order) with one uniform from rng: the first index
// whose cumulative probability (summed in list order, double) exceeds u * total.
size_t draw_index(std::span<const float> probs, Rng& rng);

// Index of the highest logit under the chain's total order.
size_t argmax_index(const Candidates& c);

}  // namespace nt
