// sampling/sampler.h — the sampler chain: turns one step's logits into the next token.
// Owns: sampling parameters (llama.cpp's names and defaults), the per-request random stream, the
// recent-token window for penalties, and what --show-probs displays (the candidates after every
// transform, the chosen token's probability, the step's entropy).
// Must not know: models, tokenizers, the CLI's flag parsing (it only parses one --logit-bias value).
//
// The chain, always in this order (each stage optional):
//   1 logit bias   2 repetition/frequency/presence penalties over the last repeat_last_n tokens
//   3 top-k        4 typical-p     5 top-p     6 min-p     7 temperature     8 draw
// Temperature <= 0 is greedy: the highest remaining candidate (ties -> lowest id). With the default
// filters (which always keep the top token) and no bias/penalty, greedy is the raw argmax.
// Reproducibility: the same logits, history, parameters and seed give the same token on every
// platform (own PRNG, total orders everywhere, double accumulation in a fixed order).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sampling/candidates.h"
#include "sampling/rng.h"

namespace nt {

struct SamplerParams {
  float temp = 0.8f;               // --temp; <= 0 greedy
  int top_k = 40;                  // --top-k; <= 0 disabled
  float top_p = 0.95f;             // --top-p; >= 1 disabled
  float min_p = 0.05f;             // --min-p; <= 0 disabled
  float typical_p = 1.0f;          // --typical; >= 1 disabled
  float repeat_penalty = 1.0f;     // --repeat-penalty; 1 disabled
  int repeat_last_n = 64;          // --repeat-last-n; 0 disabled, -1 = context size
  float presence_penalty = 0.0f;   // --presence-penalty; 0 disabled
  float frequency_penalty = 0.0f;  // --frequency-penalty; 0 disabled
  std::optional<uint64_t> seed;    // --seed, any 64-bit value; none (-1): a fresh random seed
  std::vector<LogitBias> logit_bias;  // --logit-bias ID(+|-)BIAS, repeatable
};

// Checks ranges (temp finite, top_p/min_p/typical in [0,1], penalties finite, repeat_last_n >= -1,
// biases not NaN): what can be checked before a model is loaded. The message starts with the
// parameter's API name (temperature, top_p, min_p, typical_p, repeat_penalty, repeat_last_n,
// presence_penalty, frequency_penalty, logit_bias), which callers may map to their own names.
Status validate(const SamplerParams& p);
// The bias tokens are inside a vocabulary of n_vocab tokens.
Status validate_for_vocab(const SamplerParams& p, int32_t n_vocab);

// Parses one --logit-bias value: "ID+BIAS" or "ID-BIAS" (BIAS a number or "inf"), e.g. "15043+1.5",
// "2-inf" (ban token 2).
Result<LogitBias> parse_logit_bias(std::string_view s);

// One line describing the active chain, e.g. "top-k 40 -> top-p 0.95 -> min-p 0.05 -> temp 0.80".
std::string describe(const SamplerParams& p);

struct TokenProb {
  int32_t token;
  float prob;
};

// What one step looked like after all transforms (for --show-probs and `check`).
struct StepInfo {
  int32_t token = -1;
  float prob = 0.0f;     // the chosen token's probability in the final distribution
  double entropy = 0.0;  // bits, of the final distribution (see below)
  size_t n_candidates = 0;         // tokens left after the filters
  std::vector<TokenProb> top;      // the most probable candidates, descending (up to n_top)
};
// With temp > 0 the final distribution is the one the token was drawn from. With temp <= 0
// (greedy) it is the distribution of the candidates the filters kept, at temperature 1, so
// --show-probs still shows how sure the model was; the chosen token is its most probable one.

class Sampler {
 public:
  // n_ctx resolves repeat_last_n = -1. Params must pass both validations; no seed draws one.
  Sampler(const SamplerParams& params, int32_t n_vocab, int32_t n_ctx);

  // Picks the next token from logits [n_vocab]. When info is non-null, fills it with the top
  // n_top candidates (costs a softmax over the kept candidates, nothing over the vocabulary).
  int32_t sample(std::span<const float> logits, StepInfo* info = nullptr, size_t n_top = 0);
  // Records a token in the penalty window (prompt tokens and generated tokens alike).
  void accept(int32_t token);
  void accept(std::span<const int32_t> tokens);
  // Forgets the penalty window and restarts the random stream from the seed.
  void reset();

  uint64_t seed() const { return seed_; }  // the seed in use (the drawn one when random)
  const SamplerParams& params() const { return params_; }

 private:
  SamplerParams params_;
  int32_t n_vocab_;
  size_t window_;  // penalty window length
  uint64_t seed_;
  Rng rng_;
  std::vector<int32_t> history_;  // ring of the last window_ tokens
  size_t history_pos_ = 0;
  Candidates cand_;
  std::vector<float> probs_;
};

}  // namespace nt
