// engine/chat_format.cpp — see chat_format.h. Layouts follow the public model cards' formats.
#include "engine/chat_format.h"

#include "core/strings.h"

namespace nt {

Result<ChatFormat> parse_chat_format(std::string_view name) {
  for (ChatFormat f : {ChatFormat::Plain, ChatFormat::ChatML, ChatFormat::Llama2,
                       ChatFormat::Llama3, ChatFormat::Mistral})
    if (iequals(name, chat_format_name(f))) return f;
  return make_error("chat format '%.*s': expected chatml, llama2, llama3, mistral or plain",
                    static_cast<int>(name.size()), name.data());
}

const char* chat_format_name(ChatFormat f) {
  switch (f) {
    case ChatFormat::Plain: return "plain";
    case ChatFormat::ChatML: return "chatml";
    case ChatFormat::Llama2: return "llama2";
    case ChatFormat::Llama3: return "llama3";
    case ChatFormat::Mistral: return "mistral";
  }
  return "?";
}

ChatFormat detect_chat_format(std::string_view t) {
  auto has = [&](std::string_view s) { return t.find(s) != std::string_view::npos; };
  if (t.empty()) return ChatFormat::Plain;
  if (has("<|im_start|>")) return ChatFormat::ChatML;
  if (has("<|start_header_id|>")) return ChatFormat::Llama3;
  if (has("[INST]")) return has("<<SYS>>") ? ChatFormat::Llama2 : ChatFormat::Mistral;
  return ChatFormat::ChatML;
}

namespace {

std::string render_chatml(const std::vector<ChatMessage>& msgs, bool gen) {
  std::string out;
  for (const ChatMessage& m : msgs) out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (gen) out += "<|im_start|>assistant\n";
  return out;
}

std::string render_llama3(const std::vector<ChatMessage>& msgs, bool gen, std::string_view bos) {
  std::string out(bos);
  for (const ChatMessage& m : msgs)
    out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + m.content + "<|eot_id|>";
  if (gen) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

// llama2: <s>[INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {assistant} </s><s>[INST] ...
// mistral: <s>[INST] {system}\n\n{user} [/INST] {assistant}</s>[INST] ...
std::string render_inst(const std::vector<ChatMessage>& msgs, bool llama2, std::string_view bos,
                        std::string_view eos) {
  std::string out;
  std::string system;
  bool first_user = true;
  if (!llama2) out += bos;
  for (const ChatMessage& m : msgs) {
    if (m.role == "system") {
      system += (system.empty() ? "" : "\n") + m.content;
      continue;
    }
    if (m.role == "assistant") {
      out += llama2 ? " " + m.content + " " + std::string(eos) : " " + m.content + std::string(eos);
      continue;
    }
    // user (any other role is treated as user text)
    std::string text = m.content;
    if (first_user && !system.empty())
      text = llama2 ? "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + text : system + "\n\n" + text;
    first_user = false;
    if (llama2) out += bos;
    out += "[INST] " + text + " [/INST]";
  }
  return out;
}

std::string render_plain(const std::vector<ChatMessage>& msgs, std::string_view bos) {
  std::string out(bos);
  bool after_assistant = false;
  for (const ChatMessage& m : msgs) {
    if (m.role == "system") {
      out += m.content + "\n";
      continue;
    }
    if (m.role != "assistant" && after_assistant) out += "\n";
    out += m.content;
    after_assistant = m.role == "assistant";
  }
  return out;
}

}  // namespace

std::string render_chat(ChatFormat f, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt, std::string_view bos, std::string_view eos) {
  switch (f) {
    case ChatFormat::ChatML: return std::string(bos) + render_chatml(messages, add_generation_prompt);
    case ChatFormat::Llama3: return render_llama3(messages, add_generation_prompt, bos);
    case ChatFormat::Llama2: return render_inst(messages, true, bos, eos);
    case ChatFormat::Mistral: return render_inst(messages, false, bos, eos);
    case ChatFormat::Plain: return render_plain(messages, bos);
  }
  return {};
}

std::vector<std::string> chat_format_stops(ChatFormat f) {
  switch (f) {
    case ChatFormat::ChatML: return {"<|im_end|>", "<|im_start|>"};
    case ChatFormat::Llama3: return {"<|eot_id|>", "<|start_header_id|>"};
    case ChatFormat::Llama2:
    case ChatFormat::Mistral: return {"[INST]"};
    case ChatFormat::Plain: return {};
  }
  return {};
}

}  // namespace nt
