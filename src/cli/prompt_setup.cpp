// cli/prompt_setup.cpp — see prompt_setup.h.
#include "cli/prompt_setup.h"

#include <cstdio>

#include "cli/generate.h"
#include "core/strings.h"

namespace nt::cli {

void add_prompt_options(CLI::App& app, PromptArgs& a) {
  app.add_option("-p,--prompt", a.prompt, "prompt text");
  app.add_option("-f,--file", a.prompt_file, "read the prompt from a file");
  app.add_flag("--no-bos", a.no_bos, "do not add the BOS token");
  app.add_flag("--parse-special", a.parse_special, "recognise special tokens written in the prompt");
  app.add_option("--truncate", a.truncate,
                 "when prompt + -n exceeds -c: none (error, default), start (drop the oldest prompt "
                 "tokens after BOS) or middle (keep the beginning and the end)");
}

Status check_prompt_args(const PromptArgs& a) {
  if (!a.prompt.empty() && !a.prompt_file.empty()) return make_error("give either -p or -f, not both");
  auto mode = parse_truncate_mode(a.truncate);
  if (!mode) return in_flag_words(mode.error());
  return {};
}

Result<std::string> read_prompt(const PromptArgs& a) {
  if (a.prompt_file.empty()) return a.prompt;
  return read_file(a.prompt_file);
}

Result<ContextPlan> plan_prompt(const char* cmd, const std::string& text, const PromptArgs& a, const Tokenizer& tok,
                                int64_t n_predict, int64_t n_ctx) {
  const std::vector<int32_t> input = tok.encode(text, !a.no_bos, a.parse_special);
  if (input.empty()) return make_error("the prompt is empty (no tokens); give -p TEXT");
  const bool has_bos = !a.no_bos && tok.bos() >= 0 && input[0] == tok.bos();
  const TruncateMode mode = parse_truncate_mode(a.truncate).value();  // checked by check_prompt_args
  auto plan = plan_context(input, has_bos, n_predict, n_ctx, mode);
  if (!plan) {
    Error e = plan.error();
    e.message += " (flags: -c, -n, --truncate start|middle)";
    return e;
  }
  if (plan->dropped > 0) std::fprintf(stderr, "%s: %s\n", cmd, truncation_warning(*plan, mode, n_ctx).c_str());
  return plan;
}

}  // namespace nt::cli
