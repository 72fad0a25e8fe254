// sampling/context_plan.cpp — see context_plan.h.
#include "sampling/context_plan.h"

#include "core/strings.h"

namespace nt {

Result<TruncateMode> parse_truncate_mode(std::string_view s) {
  if (iequals(s, "none")) return TruncateMode::None;
  if (iequals(s, "start")) return TruncateMode::Start;
  if (iequals(s, "middle")) return TruncateMode::Middle;
  return make_error("truncate mode '%.*s': expected start or middle (or none)",
                    static_cast<int>(s.size()), s.data());
}

const char* truncate_mode_name(TruncateMode m) {
  switch (m) {
    case TruncateMode::None: return "none";
    case TruncateMode::Start: return "start";
    case TruncateMode::Middle: return "middle";
  }
  return "?";
}

Result<ContextPlan> plan_context(const std::vector<int32_t>& prompt, bool has_bos,
                                 int64_t n_predict, int64_t n_ctx, TruncateMode mode) {
  const int64_t n_prompt = static_cast<int64_t>(prompt.size());
  const bool until_full = n_predict < 0;
  const int64_t need_gen = until_full ? 1 : n_predict;  // tokens that must fit after the prompt
  ContextPlan plan;
  const int64_t over = n_prompt + need_gen - n_ctx;
  if (over <= 0) {
    plan.prompt = prompt;
    plan.n_predict = until_full ? n_ctx - n_prompt : n_predict;
    return plan;
  }
  const std::string what =
      until_full ? str_printf("prompt (%lld tokens) + at least 1 generated token", static_cast<long long>(n_prompt))
                 : str_printf("prompt (%lld tokens) + %lld to generate = %lld tokens", static_cast<long long>(n_prompt),
                              static_cast<long long>(n_predict), static_cast<long long>(n_prompt + n_predict));
  if (mode == TruncateMode::None)
    return make_error(ErrorKind::PromptTooLong,
                      "%s does not fit the context of %lld tokens: %lld token%s over. Raise the context size, "
                      "generate fewer tokens, shorten the prompt, or truncate it (start or middle) to drop prompt "
                      "tokens",
                      what.c_str(), static_cast<long long>(n_ctx), static_cast<long long>(over),
                      over == 1 ? "" : "s");
  const int64_t keep_min = has_bos ? 2 : 1;  // BOS plus at least one prompt token
  const int64_t keep = n_prompt - over;
  if (keep < keep_min)
    return make_error(ErrorKind::PromptTooLong,
                      "%s does not fit the context of %lld tokens: %lld tokens over, and truncating would leave "
                      "no prompt. Raise the context size or generate fewer tokens",
                      what.c_str(), static_cast<long long>(n_ctx), static_cast<long long>(over));
  const int64_t first = has_bos ? 1 : 0;  // index of the first droppable token
  plan.prompt.reserve(static_cast<size_t>(keep));
  if (has_bos) plan.prompt.push_back(prompt[0]);
  if (mode == TruncateMode::Start) {
    plan.prompt.insert(plan.prompt.end(), prompt.begin() + first + over, prompt.end());
  } else {
    const int64_t body = keep - first;  // kept tokens after BOS
    const int64_t head = body / 2;
    const int64_t tail = body - head;
    plan.prompt.insert(plan.prompt.end(), prompt.begin() + first, prompt.begin() + first + head);
    plan.prompt.insert(plan.prompt.end(), prompt.end() - tail, prompt.end());
  }
  plan.dropped = over;
  plan.n_predict = until_full ? n_ctx - keep : n_predict;
  return plan;
}

std::string truncation_warning(const ContextPlan& plan, TruncateMode mode, int64_t n_ctx) {
  return str_printf("warning: prompt truncated (%s): dropped %lld token%s to fit the "
                    "context of %lld (prompt now %zu tokens, generating up to %lld)",
                    truncate_mode_name(mode), static_cast<long long>(plan.dropped),
                    plan.dropped == 1 ? "" : "s", static_cast<long long>(n_ctx), plan.prompt.size(),
                    static_cast<long long>(plan.n_predict));
}

}  // namespace nt
