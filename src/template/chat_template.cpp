// template/chat_template.cpp — the public ChatTemplate API over the parser and interpreter:
// builds HF's render context, fixes the date for strftime_now, turns engine errors into Results.
#include "template/chat_template.h"

#include <ctime>

#include "core/strings.h"
#include "template/interp.h"
#include "template/lexer.h"
#include "template/parser.h"

namespace nt {

Result<ChatTemplate> ChatTemplate::parse(std::string_view source, std::string_view name) {
  jinja::ParseError err;
  auto prog = jinja::parse_program(source, name, err);
  if (!prog) {
    int line = 0, col = 0;
    jinja::line_col(jinja::normalize_source(source), err.pos, line, col);
    return make_error("%.*s:%d:%d: template syntax error: %s", static_cast<int>(name.size()), name.data(),
                      line, col, err.message.c_str());
  }
  ChatTemplate t;
  t.program_ = std::move(prog);
  t.name_ = std::string(name);
  return t;
}

static Result<std::tm> resolve_date(const std::optional<std::string>& date) {
  std::tm tm{};
  if (!date) {
    std::time_t now = std::time(nullptr);
    localtime_r(&now, &tm);
    return tm;
  }
  int y = 0, m = 0, d = 0;
  char extra = 0;
  if (std::sscanf(date->c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &extra) != 3 || m < 1 || m > 12 || d < 1 || d > 31 ||
      y < 1900 || y > 9999)
    return make_error("invalid date '%s' (expected YYYY-MM-DD)", date->c_str());
  tm.tm_year = y - 1900;
  tm.tm_mon = m - 1;
  tm.tm_mday = d;
  std::tm check = tm;
  std::time_t t = timegm(&check);  // normalizes and fills tm_wday / tm_yday
  if (t == static_cast<std::time_t>(-1) || check.tm_mday != d)
    return make_error("invalid date '%s' (no such day)", date->c_str());
  return check;
}

Result<std::string> ChatTemplate::render_context(const nlohmann::ordered_json& context,
                                                 const std::optional<std::string>& date) const {
  if (!program_) return make_error("chat template not parsed");
  if (!context.is_object()) return make_error("template context must be a JSON object");
  auto now = resolve_date(date);
  if (!now) return now.error();
  jinja::Value ctx = jinja::from_json(context);
  jinja::Interp interp(*program_, limits_, *now);
  try {
    return interp.render(ctx);
  } catch (const jinja::TemplateError& e) {
    if (e.located) return Error{e.what()};
    return Error{name_ + ": " + e.what()};
  } catch (const std::bad_alloc&) {
    return Error{name_ + ": out of memory while rendering"};
  } catch (const std::exception& e) {
    return Error{name_ + ": " + e.what()};
  }
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& messages,
                                         const ChatTemplateOptions& opts) const {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = messages;
  ctx["tools"] = nullptr;
  ctx["documents"] = nullptr;
  ctx["add_generation_prompt"] = opts.add_generation_prompt;
  ctx["bos_token"] = opts.bos_token;
  ctx["eos_token"] = opts.eos_token;
  if (opts.extra_context.is_object())
    for (auto it = opts.extra_context.begin(); it != opts.extra_context.end(); ++it) ctx[it.key()] = it.value();
  else if (!opts.extra_context.is_null())
    return make_error("extra template context must be a JSON object");
  return render_context(ctx, opts.date);
}

Result<std::string> ChatTemplate::render(const nlohmann::json& messages, const ChatTemplateOptions& opts) const {
  return render(nlohmann::ordered_json(messages), opts);
}

}  // namespace nt
