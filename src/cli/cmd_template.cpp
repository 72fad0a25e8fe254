// cli/cmd_template.cpp — `nexttok template`: renders a conversation with a chat template (the
// model's own, from GGUF key tokenizer.chat_template, or a file) exactly as the model will see it.
// Must not know: how templates are evaluated (uses template/chat_template.h only).
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/json_input.h"
#include "core/strings.h"
#include "gguf/gguf.h"
#include "template/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace nt::cli {

namespace {

// The text of token `key_id` (tokenizer.ggml.bos_token_id / eos_token_id) in tokenizer.ggml.tokens.
std::optional<std::string> special_token_text(const GgufFile& f, const char* key_id) {
  auto id = f.get_u64(key_id);
  const GgufValue* tokens = f.get_array("tokenizer.ggml.tokens");
  if (!id || !tokens || tokens->elem_type != GgufType::STRING || *id >= tokens->strs.size()) return std::nullopt;
  return std::string(tokens->strs[*id]);
}

Result<std::string> read_input(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  return read_file(path);
}

}  // namespace

int cmd_template(int argc, char** argv) {
  CLI::App app{"Render a conversation with a chat template, exactly as the model sees it (Hugging Face "
               "apply_chat_template semantics). The text goes to stdout with no added newline.",
               "nexttok template"};
  ModelArgs margs;
  add_model_options(app, margs);
  std::string template_file, messages_file, bos, eos, date, context_json, tools_file;
  bool add_gen = false, show_tokens = false, as_json = false;
  app.add_option("--template-file,--chat-template-file", template_file,
                 "Jinja chat template file (default: the model's tokenizer.chat_template)");
  app.add_option("--messages-file", messages_file,
                 "JSON array of {\"role\", \"content\", ...} messages (or an object with \"messages\" and "
                 "extra template variables); - reads stdin")
      ->required();
  app.add_flag("--add-generation-prompt", add_gen, "end with the assistant turn's opening");
  auto* bos_opt = app.add_option("--bos-token", bos, "BOS string (default: the model's; empty without a model)");
  auto* eos_opt = app.add_option("--eos-token", eos, "EOS string (default: the model's; empty without a model)");
  app.add_option("--date", date, "date for strftime_now, YYYY-MM-DD (default: today)");
  app.add_option("--tools-file", tools_file, "JSON array of tool definitions passed as `tools`");
  app.add_option("--context", context_json, "JSON object of extra template variables, e.g. '{\"enable_thinking\": false}'");
  app.add_flag("--show-tokens", show_tokens,
               "also print the token count to stderr, counted with the tokenizer of -m (default: the "
               "default model), which is named");
  app.add_flag("--json", as_json,
               "print one JSON document {text, n_tokens, tokenizer} instead of the raw text (n_tokens and "
               "tokenizer with --show-tokens)");
  if (int rc = parse_args(app, argc, argv); rc >= 0) return rc;

  bool need_model = template_file.empty() || show_tokens || (!margs.model.empty() || !margs.hf_repo.empty());
  std::optional<GgufFile> gguf;
  std::string model_path;
  if (need_model) {
    auto path = resolve_model(margs);
    if (!path.ok()) return fail("template", path.error().message);
    model_path = path.value();
    auto f = GgufFile::open(model_path);
    if (!f.ok()) return fail("template", f.error().message);
    gguf.emplace(std::move(f.value()));
  }

  std::string source, name;
  if (!template_file.empty()) {
    auto r = read_file(template_file);
    if (!r.ok()) return fail("template", r.error().message);
    source = std::move(r.value());
    name = template_file;
  } else {
    auto t = gguf->get_str("tokenizer.chat_template");
    if (!t) return fail("template", model_path + " has no chat template (tokenizer.chat_template); pass --template-file FILE");
    source = std::string(*t);
    name = model_path + ":tokenizer.chat_template";
  }

  ChatTemplateOptions opts;
  opts.add_generation_prompt = add_gen;
  if (gguf) {
    if (auto s = special_token_text(*gguf, "tokenizer.ggml.bos_token_id")) opts.bos_token = *s;
    if (auto s = special_token_text(*gguf, "tokenizer.ggml.eos_token_id")) opts.eos_token = *s;
  }
  if (bos_opt->count() > 0) opts.bos_token = bos;
  if (eos_opt->count() > 0) opts.eos_token = eos;
  if (!date.empty()) opts.date = date;

  auto msg_text = read_input(messages_file);
  if (!msg_text.ok()) return fail("template", msg_text.error().message);
  auto doc = parse_json_input(msg_text.value(), messages_file == "-" ? "<stdin>" : messages_file);
  if (!doc) return fail("template", doc.error().message);
  nlohmann::ordered_json messages;
  if (doc->is_object() && doc->contains("messages")) {
    messages = (*doc)["messages"];
    for (auto it = doc->begin(); it != doc->end(); ++it)
      if (it.key() != "messages") opts.extra_context[it.key()] = it.value();
  } else {
    messages = std::move(*doc);
  }
  if (!tools_file.empty()) {
    auto t = read_file(tools_file);
    if (!t.ok()) return fail("template", t.error().message);
    auto tools = parse_json_input(t.value(), tools_file);
    if (!tools) return fail("template", tools.error().message);
    opts.extra_context["tools"] = std::move(*tools);
  }
  if (!context_json.empty()) {
    auto extra = parse_json_input(context_json, "--context");
    if (!extra) return fail("template", extra.error().message);
    if (!extra->is_object()) return fail("template", "--context must be a JSON object");
    for (auto it = extra->begin(); it != extra->end(); ++it) opts.extra_context[it.key()] = it.value();
  }
  if (!messages.is_array()) return fail("template", messages_file + ": expected a JSON array of messages");

  auto tmpl = ChatTemplate::parse(source, name);
  if (!tmpl.ok()) return fail("template", tmpl.error().message);
  auto text = tmpl->render(messages, opts);
  if (!text.ok()) return fail("template", text.error().message);

  int64_t n_tokens = -1;
  if (show_tokens) {
    auto tok = Tokenizer::from_gguf(*gguf);
    if (!tok.ok()) return fail("template", tok.error().message);
    // The template writes BOS itself when the model wants one, so no special tokens are added;
    // control-token text in the render (<|im_start|> ...) is parsed as the model would.
    n_tokens = static_cast<int64_t>(tok.value()->encode(text.value(), /*add_special=*/false, /*parse_special=*/true).size());
  }
  if (as_json) {
    nlohmann::ordered_json j;
    j["text"] = text.value();
    if (n_tokens >= 0) {
      j["n_tokens"] = n_tokens;
      j["tokenizer"] = model_path;
    }
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace).c_str());
    return kExitOk;
  }
  std::fwrite(text->data(), 1, text->size(), stdout);
  std::fflush(stdout);
  if (n_tokens >= 0)
    std::fprintf(stderr, "tokens: %lld (counted with the tokenizer of %s)\n", static_cast<long long>(n_tokens),
                 model_path.c_str());
  return kExitOk;
}

}  // namespace nt::cli
