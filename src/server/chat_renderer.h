// server/chat_renderer.h — turns a conversation into prompt text the way a model expects: its own
// Jinja chat template (GGUF tokenizer.chat_template, or a template file), else a built-in format
// (engine/chat_format.h) detected from the template's text or named. Shared by `nexttok chat` and
// the server, so both render a conversation identically.
// Must not know: HTTP, terminals, the engine.
#pragma once
#include <optional>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>
#include "core/result.h"
#include "engine/chat_format.h"
#include "gguf/gguf.h"
#include "template/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace nt::server {

struct ChatRendererOptions {
  std::string chat_format;    // a built-in format by name (parse_chat_format); wins over templates
  std::string template_file;  // a Jinja template file; wins over the model's template
};

class ChatRenderer {
 public:
  // A model template that does not parse or cannot render a one-message conversation falls back
  // to the built-in format, with the reason in *warning; a --chat-template-file that fails is an error.
  static Result<ChatRenderer> create(const ChatRendererOptions& o, const Tokenizer& tok, const GgufFile& gguf,
                                     std::string* warning);

  // "jinja template (NAME)" or the built-in format's name.
  std::string name() const;
  ChatFormat format() const { return format_; }
  // End-of-turn texts of the format, used as extra stop strings (end tokens stop anyway).
  std::vector<std::string> stops() const { return chat_format_stops(format_); }

  // messages: an array of {role, content (string or null), ...}; kwargs: extra template variables
  // (an object or null; built-in formats ignore them).
  Result<std::string> render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& kwargs,
                             bool add_generation_prompt = true) const;
  Result<std::string> render(const std::vector<ChatMessage>& messages) const;

 private:
  std::optional<ChatTemplate> jinja_;
  ChatFormat format_ = ChatFormat::Plain;
  std::string bos_text_, eos_text_;    // what the built-in formats write (BOS only when the model adds it)
  std::string bos_token_, eos_token_;  // the template variables
};

}  // namespace nt::server
