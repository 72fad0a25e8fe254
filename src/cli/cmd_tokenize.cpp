// cli/cmd_tokenize.cpp — `nexttok tokenize`: text -> token ids with llama-tokenize's flags; the
// default view shows each id with its piece so the user sees where the model cuts the text.
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
#include "core/strings.h"
#include "tokenizer/tokenizer.h"

namespace nt::cli {

int cmd_tokenize(int argc, char** argv) {
  CLI::App app{"Split text into tokens, like llama-tokenize. The text is used byte for byte "
               "(no escapes processed, no newline stripped).",
               "nexttok tokenize"};
  ModelArgs margs;
  add_model_options(app, margs);
  std::string prompt, file;
  bool from_stdin = false, ids_only = false, no_bos = false, no_parse_special = false, show_count = false,
       as_json = false;
  auto* p_opt = app.add_option("-p,--prompt", prompt, "text to tokenize");
  auto* f_opt = app.add_option("-f,--file", file, "file whose bytes are tokenized");
  auto* s_opt = app.add_flag("--stdin", from_stdin, "tokenize all of standard input");
  p_opt->excludes(f_opt)->excludes(s_opt);
  f_opt->excludes(s_opt);
  app.add_flag("--ids", ids_only, "print only the ids, as [1, 2, 3]");
  app.add_flag("--no-bos", no_bos, "add no special token at all (no BOS/EOS, no [CLS]/[SEP])");
  app.add_flag("--no-parse-special", no_parse_special, "treat control-token text (<|im_end|> ...) as plain text");
  app.add_flag("--show-count", show_count, "print the number of tokens");
  app.add_flag("--json", as_json,
               "one JSON document {\"model\": path, \"tokenizer\": type, \"n_tokens\": N, \"ids\": [...], "
               "\"pieces\": [...]}");
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;
  if (p_opt->count() == 0 && f_opt->count() == 0 && !from_stdin) {
    std::fprintf(stderr, "nexttok tokenize: give the text with -p TEXT, -f FILE or --stdin\n");
    return kExitUsage;
  }

  auto path = resolve_model(margs);
  if (!path.ok()) return fail("tokenize", path.error().message);
  std::string text;
  if (p_opt->count() > 0) {
    text = prompt;
  } else if (from_stdin) {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    auto r = read_file(file);
    if (!r.ok()) return fail("tokenize", r.error().message);
    text = std::move(r.value());
  }
  auto tok = Tokenizer::from_file(path.value());
  if (!tok.ok()) return fail("tokenize", tok.error().message);
  const Tokenizer& t = *tok.value();
  std::vector<int32_t> ids = t.encode(text, !no_bos, !no_parse_special);

  if (as_json) {
    nlohmann::json j;
    j["model"] = path.value();
    j["tokenizer"] = std::string(t.model_type());
    j["n_tokens"] = ids.size();
    j["ids"] = ids;
    auto pieces = nlohmann::json::array();
    for (int32_t id : ids) pieces.push_back(t.token_to_piece(id));
    j["pieces"] = pieces;
    std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", s.c_str());
    return kExitOk;
  }
  std::string out;
  if (ids_only) {
    out = format_id_list(ids);
    out += '\n';
  } else {
    for (int32_t id : ids) out += str_printf("%6d -> '%s'\n", id, visible_piece(t.token_to_piece(id)).c_str());
  }
  if (show_count) out += str_printf("Total number of tokens: %zu\n", ids.size());
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace nt::cli
