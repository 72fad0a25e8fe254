// engine/chat_format.h — the built-in chat formats (chatml, llama2, llama3, mistral, plain
// continuation), chosen from a GGUF's tokenizer.chat_template by heuristics or by name, for models
// whose own Jinja template is absent or not wanted. Owns: those layouts and the detection rules.
// Must not know: tokenizers (BOS/EOS text is passed in), the Jinja engine, the CLI.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace nt {

enum class ChatFormat { Plain, ChatML, Llama2, Llama3, Mistral };

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// "plain" | "chatml" | "llama2" | "llama3" | "mistral" (case-insensitive).
Result<ChatFormat> parse_chat_format(std::string_view name);
const char* chat_format_name(ChatFormat f);

// Heuristics on a Jinja template's text: <|im_start|> -> chatml, <|start_header_id|> -> llama3,
// [INST] with <<SYS>> -> llama2, [INST] -> mistral, other non-empty -> chatml (the most common),
// empty (no template, e.g. stories15M) -> plain continuation.
ChatFormat detect_chat_format(std::string_view jinja_template);

// Renders a conversation. `bos`/`eos` are the model's special-token texts (may be empty); the
// result is meant to be tokenized with special tokens parsed and without adding BOS again.
// add_generation_prompt opens the assistant's turn at the end. Plain continuation concatenates the
// contents (a user turn after an assistant turn starts on a new line) after `bos`.
// Rendering a prefix of the conversation gives a prefix of the full rendering whenever the
// prefix ends with an assistant turn, so the KV cache of earlier turns can be reused.
std::string render_chat(ChatFormat f, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt, std::string_view bos, std::string_view eos);

// Text that ends an assistant turn in this format (used as an extra stop string besides the
// model's end-of-generation tokens); empty for plain.
std::vector<std::string> chat_format_stops(ChatFormat f);

}  // namespace nt
