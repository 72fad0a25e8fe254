// cli/generate.h — what run, chat and check share as clients of the engine: the sampling flags
// (llama.cpp's names and defaults) and their checks, submitting a request and recording its
// events, and --show-probs formatting. The request loop itself (sample, stop strings, end of
// generation, -n, a full context) is the engine's.
// Must not know: how the prompt was built, terminals beyond colors.
#pragma once

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

// What a command keeps of one request's events (the engine runs the request; the CLI only
// submits it and prints).
struct RequestRun {
  std::vector<int32_t> tokens;     // every sampled token, a final end-of-generation token included
  std::vector<double> entropies;   // per token, bits (when the request wanted step info)
  std::string text;                // the printable text (never a stop string)
  bool finished = false;
  FinishReason reason = FinishReason::Length;
  Error error;
  RequestStats stats;
};
// Submits `params`; each event is recorded in `into` and then passed to `each` (may be empty).
// The caller runs the engine (run_until_idle) and checks into.finished / into.reason.
Result<RequestId> submit_request(Engine& eng, RequestParams params, RequestRun& into,
                                 std::function<void(const TokenEvent&)> each = {});
// The error a finished request ended with, if it ended with one.
Status request_status(const RequestRun& run);

// One --show-probs line: "[  3] ' there'  p=0.823  H=1.02 bits | ' there' 0.823 | ' a' 0.102";
// the chosen token is colored by confidence when `color`.
std::string format_step(const Tokenizer& tok, int64_t index, const StepInfo& s, bool color);

}  // namespace nt::cli
