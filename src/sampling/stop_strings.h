// sampling/stop_strings.h — `--stop STRING` for streamed text: finds stop strings across token
// boundaries and holds back any text that could still become one, so a stop string is never
// printed (not even its first bytes). Owns: the matching and the held-back buffer.
// Must not know: tokens, tokenizers, terminals.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nt {

class StopMatcher {
 public:
  // Empty strings are ignored.
  explicit StopMatcher(std::vector<std::string> stops = {});

  // Appends generated text; returns what may be printed now. Once a stop string has appeared,
  // stopped() is true, the text from the stop string on is dropped, and later pushes return "".
  std::string push(std::string_view text);
  // End of generation without a stop: returns the held-back text.
  std::string flush();

  bool stopped() const { return stopped_; }
  // The stop string that matched (empty when none did).
  const std::string& matched() const { return matched_; }
  // Bytes currently held back (a suffix that is a prefix of some stop string).
  size_t held() const { return pending_.size(); }
  bool active() const { return !stops_.empty(); }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  std::string matched_;
  bool stopped_ = false;
};

}  // namespace nt
