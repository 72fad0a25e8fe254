// hub/progress.h — download progress on stderr: a redrawn bar with bytes, rate and ETA on a
// terminal; a quiet line every few seconds otherwise (logs, CI). Must not know: HTTP, the Hub.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace nt::hub {

class Progress {
 public:
  // `label` names the file; `total` may be 0 (unknown); `start` is the bytes already present
  // (a resumed download), which do not count towards the rate.
  Progress(std::string label, uint64_t total, uint64_t start, bool enabled, bool tty, FILE* out = stderr);
  void update(uint64_t done);  // cheap; redraws at most ~10 times a second
  void finish(bool ok);        // final line

 private:
  void draw(bool final);
  std::string label_;
  uint64_t total_, start_, done_;
  bool enabled_, tty_;
  FILE* out_;
  std::chrono::steady_clock::time_point t0_, last_;
  bool drew_ = false;
};

// "1:02:03" / "4:05" / "6s"
std::string format_duration(double seconds);

}  // namespace nt::hub
