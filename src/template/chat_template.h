// template/chat_template.h — chat templates: the public API over the Jinja engine.
// Owns: parsing a Jinja chat template once and rendering conversations with it, with the
// semantics Hugging Face transformers uses (Jinja2 ImmutableSandboxedEnvironment, trim_blocks,
// lstrip_blocks, HF's tojson, raise_exception, strftime_now, {% generation %}, loop controls).
// Must not know: models, GGUF, tokenizers (callers pass BOS/EOS strings and the template text).
//
// Errors are Results: parse errors name the template, line and column; raise_exception(msg)
// surfaces msg; runtime errors name the failing expression. Work is bounded (loop iterations,
// output size, recursion depth), so no template can hang or exhaust memory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace nt {

namespace jinja {
struct Program;  // parsed template (template/ast.h)
}

struct ChatTemplateOptions {
  bool add_generation_prompt = true;
  std::string bos_token, eos_token;
  // YYYY-MM-DD used by strftime_now (midnight of that day); unset = the current local date/time.
  std::optional<std::string> date;
  // Extra template variables (tools, documents, enable_thinking, ...): a JSON object whose keys
  // become variables. `tools` and `documents` default to none, as HF passes them. Ordered, so
  // dicts keep their key order as Python's do (a plain nlohmann::json converts implicitly).
  nlohmann::ordered_json extra_context;
};

// Limits that bound any render (defaults are far above what real templates need).
struct ChatTemplateLimits {
  uint64_t max_steps = 2'000'000;        // evaluated nodes + loop iterations, per render
  uint64_t max_output_bytes = 16u << 20; // rendered text, and any single string value
  uint32_t max_call_depth = 200;         // nested macro calls
  uint64_t max_collection = 1'000'000;   // elements in one list/dict built by the template
};

// Parses once, renders many times (render is const and thread-compatible).
class ChatTemplate {
 public:
  static Result<ChatTemplate> parse(std::string_view source, std::string_view name);

  // messages: a JSON array of message objects ({"role": ..., "content": ...}, any extra keys).
  // Prefer ordered_json (parse with nlohmann::ordered_json::parse): nlohmann::json sorts object
  // keys, so `message|tojson` or `.items()` would see them in a different order than HF does.
  Result<std::string> render(const nlohmann::ordered_json& messages, const ChatTemplateOptions& opts) const;
  Result<std::string> render(const nlohmann::json& messages, const ChatTemplateOptions& opts) const;
  // Renders with a JSON object as the whole context (no HF defaults added).
  Result<std::string> render_context(const nlohmann::ordered_json& context,
                                     const std::optional<std::string>& date = std::nullopt) const;

  const std::string& name() const { return name_; }
  ChatTemplateLimits& limits() { return limits_; }

 private:
  std::shared_ptr<const jinja::Program> program_;
  std::string name_;
  ChatTemplateLimits limits_;
};

}  // namespace nt
