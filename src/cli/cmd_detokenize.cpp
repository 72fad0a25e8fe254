// cli/cmd_detokenize.cpp — `nexttok detokenize -m FILE IDS...`: token ids -> the exact text.
// Must not know: how tokenizers work (uses tokenizer/tokenizer.h only).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/tokenizer_cli.h"
#include "tokenizer/tokenizer.h"

namespace nt::cli {

int cmd_detokenize(int argc, char** argv) {
  CLI::App app{"Turn token ids back into text. IDS: '1 2 3', '[1, 2, 3]' or '1,2,3' (or --stdin). "
               "The text is written byte for byte, with no newline added.",
               "nexttok detokenize"};
  ModelArgs margs;
  add_model_options(app, margs);
  std::vector<std::string> id_args;
  bool from_stdin = false, skip_special = false, as_json = false;
  app.add_option("ids", id_args, "token ids");
  app.add_flag("--stdin", from_stdin, "read the ids from standard input");
  app.add_flag("--skip-special", skip_special, "leave control tokens (BOS, EOS, ...) out of the text");
  app.add_flag("--json", as_json, "one JSON document: {\"text\": ..., \"n_tokens\": ...}");
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (from_stdin)
    id_args.emplace_back(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (id_args.empty()) {
    std::fprintf(stderr, "nexttok detokenize: give token ids (e.g. 1 15043 3186) or --stdin\n");
    return kExitUsage;
  }
  auto ids = parse_id_list(id_args);
  if (!ids.ok()) return fail("detokenize", ids.error().message);
  auto path = resolve_model(margs);
  if (!path.ok()) return fail("detokenize", path.error().message);
  auto tok = Tokenizer::from_file(path.value());
  if (!tok.ok()) return fail("detokenize", tok.error().message);
  const Tokenizer& t = *tok.value();
  for (int32_t id : ids.value())
    if (id >= t.n_vocab())
      return fail("detokenize", "token id " + std::to_string(id) + " is out of range (n_vocab = " +
                                    std::to_string(t.n_vocab()) + ")");
  std::string text = t.decode(ids.value(), skip_special);
  if (as_json) {
    nlohmann::json j;
    j["text"] = text;
    j["n_tokens"] = ids->size();
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (stdout_is_tty() && (text.empty() || text.back() != '\n')) std::fputc('\n', stdout);
  return kExitOk;
}

}  // namespace nt::cli
