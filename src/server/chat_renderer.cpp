// server/chat_renderer.cpp — see chat_renderer.h.
#include "server/chat_renderer.h"

#include "core/strings.h"

namespace nt::server {

Result<ChatRenderer> ChatRenderer::create(const ChatRendererOptions& o, const Tokenizer& tok, const GgufFile& gguf,
                                          std::string* warning) {
  ChatRenderer r;
  if (tok.bos() >= 0) r.bos_token_ = std::string(tok.token_text(tok.bos()));
  if (tok.eos() >= 0) r.eos_token_ = std::string(tok.token_text(tok.eos()));
  r.bos_text_ = tok.add_bos() ? r.bos_token_ : std::string();
  r.eos_text_ = r.eos_token_;
  if (!o.chat_format.empty()) {
    auto f = parse_chat_format(o.chat_format);
    if (!f) return f.error();
    r.format_ = *f;
    return r;
  }
  std::string source, name;
  if (!o.template_file.empty()) {
    auto text = read_file(o.template_file);
    if (!text) return text.error();
    source = *text;
    name = o.template_file;
  } else if (auto t = gguf.get_str("tokenizer.chat_template")) {
    source = std::string(*t);
    name = "tokenizer.chat_template";
  }
  r.format_ = detect_chat_format(source);
  if (source.empty()) return r;
  auto parsed = ChatTemplate::parse(source, name);
  if (!parsed) {
    if (!o.template_file.empty()) return parsed.error();
    if (warning)
      *warning = "the model's template does not parse (" + parsed.error().message + "); using the built-in " +
                 chat_format_name(r.format_) + " format";
    return r;
  }
  r.jinja_ = std::move(*parsed);
  // A template that cannot render a plain conversation is no use: fall back early.
  auto probe = r.render({{"user", "hi"}});
  if (!probe) {
    if (!o.template_file.empty()) return probe.error();
    if (warning)
      *warning = "the model's template fails (" + probe.error().message + "); using the built-in " +
                 chat_format_name(r.format_) + " format";
    r.jinja_.reset();
  }
  return r;
}

std::string ChatRenderer::name() const {
  return jinja_ ? "jinja template (" + jinja_->name() + ")" : std::string(chat_format_name(format_));
}

Result<std::string> ChatRenderer::render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& kwargs,
                                         bool add_generation_prompt) const {
  if (jinja_) {
    ChatTemplateOptions opt;
    opt.add_generation_prompt = add_generation_prompt;
    opt.bos_token = bos_token_;
    opt.eos_token = eos_token_;
    if (kwargs.is_object()) opt.extra_context = kwargs;
    return jinja_->render(messages, opt);
  }
  std::vector<ChatMessage> msgs;
  for (const auto& m : messages) {
    if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
      return make_error("messages: each message needs a string role");
    const auto& c = m.contains("content") ? m["content"] : nlohmann::ordered_json();
    if (!c.is_null() && !c.is_string()) return make_error("messages: content must be a string");
    msgs.push_back({m["role"].get<std::string>(), c.is_string() ? c.get<std::string>() : std::string()});
  }
  return render_chat(format_, msgs, add_generation_prompt, bos_text_, eos_text_);
}

Result<std::string> ChatRenderer::render(const std::vector<ChatMessage>& messages) const {
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const ChatMessage& m : messages) arr.push_back({{"role", m.role}, {"content", m.content}});
  return render(arr, nlohmann::ordered_json());
}

}  // namespace nt::server
