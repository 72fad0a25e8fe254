// server/api_error.cpp — OpenAI error objects: error_body and to_api_error (see api_request.h).
#include <algorithm>

#include "server/api_fields.h"
#include "server/api_request.h"

namespace nt::server {
namespace {

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '[' || c == ']' || c == '.' || c == '"';
}

// The parameter a message starts with: "temperature: ...", "top_p must ...",
// "messages[2].content: ..." -> that path when its first name is a request field; else "".
std::string leading_param(const std::string& msg) {
  size_t n = 0;
  while (n < msg.size() && ident_char(msg[n])) ++n;
  if (n == 0 || n == msg.size() || (msg[n] != ':' && msg[n] != ' ')) return "";
  const std::string path = msg.substr(0, n);
  const std::string base = path.substr(0, path.find_first_of(".[\""));
  const auto names = detail::param_names();
  if (std::find(names.begin(), names.end(), base) == names.end()) return "";
  return path;
}

}  // namespace

nlohmann::json error_body(const ApiError& e) {
  nlohmann::json err = nlohmann::json::object();
  err["message"] = e.message;
  err["type"] = e.type;
  err["param"] = e.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.param);
  err["code"] = e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.code);
  return {{"error", std::move(err)}};
}

ApiError to_api_error(const Error& e) {
  ApiError a;
  a.message = e.message;
  a.param = leading_param(e.message);
  switch (e.kind) {
    case ErrorKind::InvalidArgument:
      break;
    case ErrorKind::PromptTooLong:
      a.code = "context_length_exceeded";
      break;
    case ErrorKind::Capacity:
      a.status = 429;
      a.type = "rate_limit_error";
      a.code = "rate_limit_exceeded";
      break;
    case ErrorKind::Cancelled:
      a.status = 499;
      a.code = "request_cancelled";
      break;
    case ErrorKind::Internal:
      a.status = 500;
      a.type = "server_error";
      a.param.clear();
      break;
  }
  return a;
}

}  // namespace nt::server
