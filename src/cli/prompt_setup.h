// cli/prompt_setup.h — the prompt flags `run` and `check` share (-p, -f, --no-bos, --parse-special,
// --truncate) and what both do with them: read the text before the model loads, then tokenize it
// and fit it into the context (or drop tokens explicitly, with a warning).
// Must not know: sampling or how the prompt is evaluated.
#pragma once

#include <string>

#include "cli/common.h"
#include "sampling/context_plan.h"
#include "tokenizer/tokenizer.h"

namespace nt::cli {

struct PromptArgs {
  std::string prompt;
  std::string prompt_file;
  bool no_bos = false;
  bool parse_special = false;
  std::string truncate = "none";
};
void add_prompt_options(CLI::App& app, PromptArgs& a);
// Flag checks (before anything is read): -p and -f exclusive, a known --truncate mode.
Status check_prompt_args(const PromptArgs& a);
// The prompt text: -p, or the contents of -f (errors are bad input).
Result<std::string> read_prompt(const PromptArgs& a);

// Tokenizes `text` and plans prompt + n_predict within n_ctx; prints the truncation warning to
// stderr as "CMD: ...".
Result<ContextPlan> plan_prompt(const char* cmd, const std::string& text, const PromptArgs& a, const Tokenizer& tok,
                                int64_t n_predict, int64_t n_ctx);

}  // namespace nt::cli
