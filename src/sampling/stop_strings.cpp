// sampling/stop_strings.cpp — see stop_strings.h.
#include "sampling/stop_strings.h"

#include <algorithm>

namespace nt {

StopMatcher::StopMatcher(std::vector<std::string> stops) {
  for (std::string& s : stops)
    if (!s.empty()) stops_.push_back(std::move(s));
}

std::string StopMatcher::push(std::string_view text) {
  if (stopped_) return {};
  if (stops_.empty()) return std::string(text);
  pending_.append(text);
  // Earliest complete stop string (ties: the longest, then the first given).
  size_t best_pos = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t pos = pending_.find(s);
    if (pos == std::string::npos) continue;
    if (pos < best_pos || (pos == best_pos && s.size() > matched_.size())) {
      best_pos = pos;
      matched_ = s;
    }
  }
  if (best_pos != std::string::npos) {
    stopped_ = true;
    std::string out = pending_.substr(0, best_pos);
    pending_.clear();
    return out;
  }
  // Hold back the longest suffix of pending_ that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    const size_t max_len = std::min(s.size() - 1, pending_.size());
    for (size_t len = max_len; len > hold; --len) {
      if (std::string_view(pending_).substr(pending_.size() - len) ==
          std::string_view(s).substr(0, len)) {
        hold = len;
        break;
      }
    }
  }
  std::string out = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return out;
}

std::string StopMatcher::flush() {
  std::string out;
  out.swap(pending_);
  return stopped_ ? std::string() : out;
}

}  // namespace nt
