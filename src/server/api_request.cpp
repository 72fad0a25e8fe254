// server/api_request.cpp — parse_api_request: a /v1/chat/completions or /v1/completions body into
// an ApiRequest. Every failure is a 400 whose message starts with the parameter's name; no
// exception leaves this file.
#include "server/api_request.h"

#include <limits>
#include <new>

#include "core/strings.h"
#include "server/api_fields.h"

namespace nt::server {
namespace {

using detail::field;
using detail::field_error;
using detail::Json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

std::string clip(std::string s, size_t n) {
  if (s.size() > n) s = s.substr(0, n) + "...";
  return s;
}

// The nesting of [ and { outside strings, checked before parsing so that a megabyte of '[' costs
// one linear scan (and the parser never builds a deep tree).
Status check_depth(std::string_view s, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        return make_error("request body nests deeper than %zu levels (at byte %zu)", max_depth, i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

Result<Json> parse_body(std::string_view body, const ParseLimits& limits) {
  NT_TRY(check_depth(body, limits.max_depth));
  Json j;
  try {
    j = Json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the offending character (or one past the end).
    const size_t at = e.byte > 0 ? std::min<size_t>(e.byte - 1, body.size()) : 0;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at; ++i) {
      if (body[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    if (what.find("ill-formed UTF-8") != std::string::npos)
      return make_error("invalid JSON at line %zu, column %zu: the body is not valid UTF-8", line, col);
    // "[json.exception.parse_error.101] parse error at line L, column C: syntax error while
    // parsing value - invalid literal; last read: '...'": keep the reason, clipped.
    const size_t cut = what.find("syntax error");
    if (cut != std::string::npos) what = what.substr(cut);
    return make_error("invalid JSON at line %zu, column %zu: %s", line, col, clip(what, 160).c_str());
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406 "number overflow parsing '1e400'".
    std::string what = e.what();
    const size_t cut = what.find("] ");
    if (cut != std::string::npos) what = what.substr(cut + 2);
    return make_error("invalid JSON: %s", clip(what, 160).c_str());
  }
  if (!j.is_object()) return make_error("request body must be a JSON object (got %s)", j.type_name());
  return j;
}

const char* kMessagesShape = "must be a non-empty array of {\"role\", \"content\"} objects";

// Text parts joined into one string; other part types are refused.
Status join_parts(const std::string& at, const Json& parts, std::string* out) {
  out->clear();
  for (size_t i = 0; i < parts.size(); ++i) {
    const Json& p = parts[i];
    const std::string name = at + "[" + std::to_string(i) + "]";
    if (!p.is_object()) return field_error(name, "must be an object {\"type\": \"text\", \"text\": ...}", p);
    auto type = p.find("type");
    if (type == p.end() || !type->is_string() || *type != "text")
      return field_error(name + ".type", "only text parts are supported",
                         type == p.end() ? Json(nullptr) : *type);
    auto text = p.find("text");
    if (text == p.end() || !text->is_string())
      return field_error(name + ".text", "must be a string", text == p.end() ? Json(nullptr) : *text);
    *out += text->get_ref<const std::string&>();
  }
  return {};
}

// Validates body.messages in place (content made a string) and moves it out.
Status parse_messages(Json& body, const ParseLimits& limits, Json* out) {
  auto it = body.find("messages");
  if (it == body.end() || it->is_null()) return make_error("messages: required; %s", kMessagesShape);
  Json& msgs = *it;
  if (!msgs.is_array() || msgs.empty()) return field_error("messages", kMessagesShape, msgs);
  if (msgs.size() > limits.max_messages)
    return make_error("messages: at most %zu messages are supported (got %zu)", limits.max_messages,
                      msgs.size());
  for (size_t i = 0; i < msgs.size(); ++i) {
    Json& m = msgs[i];
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return field_error(at, "must be an object with \"role\" and \"content\"", m);
    auto role = m.find("role");
    if (role == m.end() || !role->is_string())
      return field_error(at + ".role", "must be a string such as \"user\"",
                         role == m.end() ? Json(nullptr) : *role);
    const bool assistant = *role == "assistant";
    auto content = m.find("content");
    if (content == m.end() || content->is_null()) {
      if (!assistant)
        return make_error("%s.content: required (a string or an array of text parts)", at.c_str());
      m["content"] = "";  // an assistant turn without text (templates expect a string)
    } else if (content->is_array()) {
      std::string joined;
      NT_TRY(join_parts(at + ".content", *content, &joined));
      *content = std::move(joined);
    } else if (!content->is_string()) {
      return field_error(at + ".content", "must be a string or an array of text parts", *content);
    }
  }
  *out = std::move(msgs);
  return {};
}

Status token_ids(const Json& a, std::vector<int32_t>* out) {
  out->clear();
  out->reserve(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    std::optional<int64_t> id = detail::as_int(a[i], 0, kInt32Max);
    if (!id)
      return make_error("prompt: token ids must be integers between 0 and 2147483647 (got %s at index %zu)",
                        detail::show(a[i]).c_str(), i);
    out->push_back(static_cast<int32_t>(*id));
  }
  return {};
}

// A string, an array of token ids, or an array holding exactly one of those.
Status parse_prompt(const Json& body, ApiRequest* r) {
  const char* shape = "must be a non-empty string or a non-empty array of token ids";
  const Json* p = field(body, "prompt");
  if (!p) return make_error("prompt: required; %s", shape);
  if (p->is_array() && !p->empty() && ((*p)[0].is_string() || (*p)[0].is_array())) {
    if (p->size() > 1) return make_error("prompt: only one prompt per request is supported");
    p = &(*p)[0];
  }
  if (p->is_string()) {
    if (p->get_ref<const std::string&>().empty()) return field_error("prompt", shape, *p);
    r->prompt_text = p->get<std::string>();
    return {};
  }
  if (!p->is_array() || p->empty()) return field_error("prompt", shape, *p);
  return token_ids(*p, &r->prompt_ids);
}

Status parse_stop(const Json& body, const ParseLimits& limits, std::vector<std::string>* out) {
  const Json* v = field(body, "stop");
  if (!v) return {};
  const char* shape = "must be a string or an array of strings";
  std::vector<const Json*> items;
  if (v->is_string()) {
    items.push_back(v);
  } else if (v->is_array()) {
    if (v->size() > limits.max_stop)
      return make_error("stop: at most %zu stop strings are supported (got %zu)", limits.max_stop, v->size());
    for (const Json& s : *v) items.push_back(&s);
  } else {
    return field_error("stop", shape, *v);
  }
  for (const Json* s : items) {
    if (!s->is_string()) return field_error("stop", shape, *s);
    const std::string& str = s->get_ref<const std::string&>();
    if (str.size() > limits.max_stop_bytes)
      return make_error("stop: each stop string must be at most %zu bytes (got %zu)", limits.max_stop_bytes,
                        str.size());
    if (!str.empty()) out->push_back(str);
  }
  return {};
}

// chat: logprobs (bool) + top_logprobs (0..max, needs logprobs); completions: logprobs (0..max).
Status parse_logprobs(const Json& body, const ParseLimits& limits, ApiRequest* r) {
  const int64_t max_top = limits.max_top_logprobs;
  if (r->kind == ApiKind::Chat) {
    NT_TRY(detail::read_bool(body, "logprobs", &r->logprobs));
    int64_t top = -1;
    NT_TRY(detail::read_int(body, "top_logprobs", 0, max_top, &top));
    if (top >= 0 && !r->logprobs)
      return make_error("top_logprobs: requires logprobs to be true");
    r->top_logprobs = top < 0 ? 0 : static_cast<int>(top);
  } else if (const Json* v = field(body, "logprobs")) {
    if (v->is_boolean()) {
      r->logprobs = v->get<bool>();
    } else {
      std::optional<int64_t> k = detail::as_int(*v, 0, max_top);
      if (!k)
        return field_error("logprobs", str_printf("must be an integer between 0 and %d", limits.max_top_logprobs), *v);
      r->logprobs = true;
      r->top_logprobs = static_cast<int>(*k);
    }
  }
  r->params.n_logprobs = r->logprobs ? r->top_logprobs : -1;
  return {};
}

// Fields OpenAI clients send that would change the answer if silently ignored.
Status check_unsupported(const Json& body) {
  if (const Json* n = field(body, "n"); n && detail::as_int(*n, 1, 1) != 1)
    return make_error("n: only 1 choice per request is supported (got %s)", detail::show(*n).c_str());
  if (const Json* t = field(body, "tools"); t && !(t->is_array() && t->empty()))
    return make_error("tools: tool calls are not supported");
  if (const Json* f = field(body, "response_format")) {
    const bool text = f->is_object() && f->contains("type") && (*f)["type"] == "text";
    if (!text) return field_error("response_format", "only {\"type\": \"text\"} is supported", *f);
  }
  if (const Json* e = field(body, "echo"); e && !(e->is_boolean() && !e->get<bool>()))
    return field_error("echo", "returning the prompt is not supported", *e);
  return {};
}

Status parse_common(const Json& body, const ParseLimits& limits, ApiRequest* r) {
  NT_TRY(check_unsupported(body));
  if (const Json* m = field(body, "model")) {
    if (!m->is_string()) return field_error("model", "must be a string", *m);
    r->model = m->get<std::string>();
  }
  NT_TRY(detail::read_bool(body, "stream", &r->stream));
  if (const Json* so = field(body, "stream_options")) {
    if (!so->is_object()) return field_error("stream_options", "must be an object {\"include_usage\": bool}", *so);
    bool usage = false;
    if (const Json* u = field(*so, "include_usage")) {
      if (!u->is_boolean()) return field_error("stream_options.include_usage", "must be true or false", *u);
      usage = u->get<bool>();
    }
    r->include_usage = r->stream && usage;
  }
  int64_t max_tokens = -1, max_completion = -1;
  NT_TRY(detail::read_int(body, "max_tokens", 0, kInt64Max, &max_tokens));
  NT_TRY(detail::read_int(body, "max_completion_tokens", 0, kInt64Max, &max_completion));
  r->params.max_tokens = max_completion >= 0 ? max_completion : max_tokens;
  NT_TRY(detail::parse_sampling(body, &r->params.sampling));
  NT_TRY(parse_stop(body, limits, &r->params.stop));
  NT_TRY(detail::read_bool(body, "ignore_eos", &r->params.ignore_eos));
  NT_TRY(parse_logprobs(body, limits, r));
  if (const Json* t = field(body, "truncate")) {
    if (*t == "start") r->truncate = Truncate::Start;
    else if (*t == "middle") r->truncate = Truncate::Middle;
    else if (*t != "none") return field_error("truncate", "must be \"start\", \"middle\" or \"none\"", *t);
  }
  return {};
}

Result<ApiRequest> parse_impl(ApiKind kind, std::string_view text, const ParseLimits& limits) {
  Result<Json> body = parse_body(text, limits);
  if (!body.ok()) return body.error();
  ApiRequest r;
  r.kind = kind;
  NT_TRY(parse_common(*body, limits, &r));
  if (kind == ApiKind::Chat) {
    NT_TRY(parse_messages(*body, limits, &r.messages));
    if (const Json* k = field(*body, "chat_template_kwargs")) {
      if (!k->is_object()) return field_error("chat_template_kwargs", "must be an object", *k);
      r.chat_template_kwargs = *k;
    }
  } else {
    NT_TRY(parse_prompt(*body, &r));
  }
  return r;
}

}  // namespace

Result<ApiRequest> parse_api_request(ApiKind kind, std::string_view body, const ParseLimits& limits) {
  try {
    return parse_impl(kind, body, limits);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::Internal, "out of memory while parsing the request");
  } catch (const std::exception& e) {
    // Not expected (every access is type-checked first), but no exception may leave the parser.
    return make_error("invalid request: %s", clip(e.what(), 160).c_str());
  }
}

}  // namespace nt::server
