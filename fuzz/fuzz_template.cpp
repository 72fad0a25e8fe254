// libFuzzer target over the chat-template parser and renderer: any template text (optionally
// followed by "\0" and a message body) must parse or fail cleanly, and any render must finish
// within the limits (no crash, hang, unbounded allocation, or leak).
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "template/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string_view src = in, content = "Explain temperature in one sentence.";
  if (size_t nul = in.find('\0'); nul != std::string_view::npos) {
    src = in.substr(0, nul);
    content = in.substr(nul + 1);
  }
  auto t = nt::ChatTemplate::parse(src, "fuzz.jinja");
  if (!t.ok()) return 0;
  // Small limits keep every input well under libFuzzer's per-input timeout.
  t->limits().max_steps = 200'000;
  t->limits().max_output_bytes = 1u << 20;
  t->limits().max_call_depth = 50;
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  messages.push_back({{"role", "system"}, {"content", "You are a helpful assistant."}});
  messages.push_back({{"role", "user"}, {"content", "Hi"}});
  messages.push_back({{"role", "assistant"}, {"content", "Hello! How can I help?"}});
  // Invalid UTF-8 in the message is fine for the engine (bytes pass through).
  messages.push_back({{"role", "user"}, {"content", std::string(content)}});
  nt::ChatTemplateOptions o;
  o.bos_token = "<s>";
  o.eos_token = "</s>";
  o.date = "2026-11-29";
  o.extra_context = {{"enable_thinking", true}};
  (void)t->render(messages, o);
  o.add_generation_prompt = false;
  o.extra_context["tools"] = nlohmann::ordered_json::parse(
      R"([{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}}])");
  (void)t->render(messages, o);
  return 0;
}
