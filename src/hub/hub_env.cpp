// hub/hub_env.cpp — endpoint, token and offline switch from the environment; HTTP failure messages.
#include <cstdlib>

#include "core/strings.h"
#include "hub/hub.h"

namespace nt::hub {

std::string hub_endpoint() {
  std::string e = "https://huggingface.co";
  if (const char* v = std::getenv("HF_ENDPOINT"); v && *v) e = v;
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

static std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

std::string hub_token() {
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"})
    if (const char* v = std::getenv(name); v && *v) return trimmed(v);
  std::string path;
  if (const char* v = std::getenv("HF_TOKEN_PATH"); v && *v) path = v;
  else if (const char* h = std::getenv("HF_HOME"); h && *h) path = std::string(h) + "/token";
  else if (const char* home = std::getenv("HOME"); home && *home) path = std::string(home) + "/.cache/huggingface/token";
  if (path.empty()) return "";
  auto t = read_file(path);
  return t.ok() ? trimmed(*t) : "";
}

bool hub_offline_env() {
  const char* v = std::getenv("HF_HUB_OFFLINE");
  if (!v) return false;
  std::string s = to_lower(v);
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

std::string describe_http_failure(const HttpResponse& r, const std::string& repo, const std::string& what,
                                  bool have_token, const std::string& endpoint) {
  if (!r.ok_transport())
    return r.transport_error + " (while fetching " + what + "; to use the local cache only, set HF_HUB_OFFLINE=1)";
  std::string code = r.header("x-error-code");
  std::string hub_msg = r.header("x-error-message");
  std::string tail = hub_msg.empty() ? "" : " (the Hub says: " + hub_msg + ")";
  const std::string page = endpoint + "/" + repo;
  if (code == "GatedRepo" || ((r.status == 401 || r.status == 403) && code != "RepoNotFound")) {
    if (!have_token)
      return str_printf("%ld %s for %s: %s is gated or private and needs a token; set HF_TOKEN (or pass --token) "
                        "to a token from %s/settings/tokens whose account has access (%s)",
                        r.status, r.status == 401 ? "Unauthorized" : "Forbidden", what.c_str(), repo.c_str(),
                        endpoint.c_str(), page.c_str()) + tail;
    if (r.status == 401)
      return "401 Unauthorized for " + what + ": the Hub rejected the token; check HF_TOKEN / --token" + tail;
    return "403 Forbidden for " + what + ": your token has no access to " + repo + "; request access at " + page + tail;
  }
  if (r.status == 404 || code == "RepoNotFound" || code == "EntryNotFound" || code == "RevisionNotFound") {
    std::string hint = code == "RevisionNotFound" ? "check --revision"
                       : code == "EntryNotFound"  ? "check the file name"
                                                  : "check the repo name (org/repo)";
    if (code == "RepoNotFound" && !have_token) hint += "; if it is private, set HF_TOKEN";
    return str_printf("%ld Not Found: %s does not exist on %s; %s", r.status, what.c_str(), endpoint.c_str(),
                      hint.c_str()) + tail;
  }
  if (r.status == 429) return "429 Too Many Requests for " + what + ": the Hub is rate-limiting; wait and retry" + tail;
  if (r.status >= 500) return str_printf("%ld server error for %s; try again later", r.status, what.c_str()) + tail;
  return str_printf("unexpected HTTP %ld for %s", r.status, what.c_str()) + tail;
}

}  // namespace nt::hub
