// cli/generate.h — the decode loop shared by run, chat and check: sample from the logits, stop at
// end-of-generation tokens, -n, a full context or a --stop string (matched across token
// boundaries, never emitted), and stream the printable text. Also the sampling flags every
// generating command shares (llama.cpp's names and defaults) and --show-probs formatting.
// Must not know: how the prompt was built (the caller prefilled it), terminals beyond colors.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/common.h"
#include "core/result.h"
#include "engine/engine.h"
#include "sampling/sampler.h"
#include "tokenizer/tokenizer.h"

namespace nt::cli {

// The sampling flags as CLI11 sees them; check_sampling_args validates them (before any model is
// loaded) and fills `p` (seed, logit biases included).
struct SamplingArgs {
  SamplerParams p;
  std::string seed = "-1";  // -1: random; else any unsigned 64-bit integer
  std::vector<std::string> logit_bias;
  std::vector<std::string> stops;
};
void add_sampling_options(CLI::App& app, SamplingArgs& a);
Status check_sampling_args(SamplingArgs& a);
// An error of a lower layer with its leading parameter name (top_p, logit_bias, chat format, ...)
// replaced by the CLI flag (--top-p, --logit-bias, --chat-format, ...).
Error in_flag_words(Error e);
// -n: -1 (until an end token or a full context) or a count >= min.
Status check_n_predict(int64_t n, int64_t min = 0);
// "-1" -> none (random), else the whole unsigned 64-bit range.
Result<std::optional<uint64_t>> parse_seed(const std::string& s);

struct GenerateOptions {
  int64_t n_predict = 0;           // max tokens to generate (resolved, >= 0)
  bool to_context_end = false;     // n_predict is the room left in the context (-n -1)
  std::vector<std::string> stops;  // stop strings
  size_t n_top = 0;                // > 0: fill StepInfo.top for each step (for --show-probs)
  bool want_entropy = false;       // fill entropies (costs a softmax per step)
  // Printable text as it becomes safe to print (stop strings held back).
  std::function<void(const std::string&)> on_text;
  // Each sampled token with its step info (only when n_top > 0 or want_entropy).
  std::function<void(const StepInfo&)> on_step;
  // Each sampled token with the raw logits it was sampled from ([n_vocab], valid during the call).
  std::function<void(int32_t token, const float* logits)> on_token;
};

struct GenerateResult {
  std::vector<int32_t> tokens;     // sampled tokens, including a final EOG token
  std::vector<double> entropies;   // per step, bits (when want_entropy)
  std::string text;                // the printable text (without any stop string)
  std::string stop_reason;         // "eog", "stop", "length" (-n reached), "context" (context full)
  double ttft_ms = 0;              // from `t_start` (given by the caller) to the first token
  double decode_ms = 0;            // time spent in decode forward passes
  int64_t decoded = 0;             // tokens evaluated by decode forward passes
};

// `logits` are the last prompt token's logits (from the caller's prefill); `t_start` is when the
// request began (for time to first token). Generated tokens are appended to `seq` (all but the
// last, which needs no evaluation) and accepted into the sampler's penalty window.
Result<GenerateResult> generate(Engine& eng, int seq, const Tokenizer& tok, Sampler& sampler,
                                const float* logits, const GenerateOptions& opt,
                                std::chrono::steady_clock::time_point t_start);

// One --show-probs line: "[  3] ' there'  p=0.823  H=1.02 bits | ' there' 0.823 | ' a' 0.102";
// the chosen token is colored by confidence when `color`.
std::string format_step(const Tokenizer& tok, int64_t index, const StepInfo& s, bool color);

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b);

}  // namespace nt::cli
