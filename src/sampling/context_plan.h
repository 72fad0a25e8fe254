// sampling/context_plan.h — context is never silently cut: decides whether prompt + -n fits in
// -c, and when --truncate asks for it, which prompt tokens to drop (BOS always kept).
// Owns: the fit check, the truncation modes and the user-facing messages.
// Must not know: models, tokenizers (BOS presence is passed in), the CLI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace nt {

enum class TruncateMode { None, Start, Middle };

// "none" | "start" | "middle" (case-insensitive).
Result<TruncateMode> parse_truncate_mode(std::string_view s);
const char* truncate_mode_name(TruncateMode m);

struct ContextPlan {
  std::vector<int32_t> prompt;  // the prompt to prefill (the input, or a truncated copy)
  int64_t n_predict = 0;        // tokens to generate (resolved: -1 -> until the context is full)
  int64_t dropped = 0;          // prompt tokens dropped (0: not truncated)
};

// n_predict < 0 means "until end of generation or a full context" (then at least one token must
// fit). Errors (exit 1 in the CLI): over the context without --truncate (the message says by how
// many tokens), or nothing left to keep. `has_bos`: prompt[0] is BOS and must be kept.
Result<ContextPlan> plan_context(const std::vector<int32_t>& prompt, bool has_bos,
                                 int64_t n_predict, int64_t n_ctx, TruncateMode mode);

// The stderr warning for a truncated prompt: contains "truncated" and the number dropped.
std::string truncation_warning(const ContextPlan& plan, TruncateMode mode, int64_t n_ctx);

}  // namespace nt
