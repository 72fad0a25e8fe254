// hub/progress.cpp — progress rendering.
#include "hub/progress.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"

namespace nt::hub {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  auto t = static_cast<uint64_t>(s + 0.5);
  if (t < 60) return std::to_string(t) + "s";
  if (t < 3600) return str_printf("%u:%02u", unsigned(t / 60), unsigned(t % 60));
  return str_printf("%u:%02u:%02u", unsigned(t / 3600), unsigned(t / 60 % 60), unsigned(t % 60));
}

Progress::Progress(std::string label, uint64_t total, uint64_t start, bool enabled, bool tty, FILE* out)
    : label_(std::move(label)), total_(total), start_(start), done_(start), enabled_(enabled), tty_(tty), out_(out) {
  t0_ = last_ = std::chrono::steady_clock::now();
  if (enabled_ && !tty_) {
    std::fprintf(out_, "downloading %s (%s)%s\n", label_.c_str(), total_ ? format_bytes(total_).c_str() : "size unknown",
                 start_ ? (", resuming at " + format_bytes(start_)).c_str() : "");
    std::fflush(out_);
  }
}

void Progress::update(uint64_t done) {
  done_ = done;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  double since = std::chrono::duration<double>(now - last_).count();
  if (since < (tty_ ? 0.1 : 10.0)) return;
  last_ = now;
  draw(false);
}

void Progress::draw(bool final) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  double rate = elapsed > 0 ? static_cast<double>(done_ - std::min(done_, start_)) / elapsed : 0;
  std::string rate_s = format_bytes(static_cast<uint64_t>(rate)) + "/s";
  double eta = (rate > 0 && total_ > done_) ? static_cast<double>(total_ - done_) / rate : 0;
  double frac = total_ ? std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_)) : 0;
  if (tty_) {
    constexpr int kWidth = 24;
    std::string bar;
    int fill = static_cast<int>(frac * kWidth);
    for (int i = 0; i < kWidth; ++i) bar += i < fill ? "#" : (i == fill && !final ? ">" : "-");
    std::string eta_s = final ? format_duration(elapsed) : "ETA " + (rate > 0 ? format_duration(eta) : std::string("?"));
    std::fprintf(out_, "\r%s [%s] %3d%% %s / %s  %s  %s\033[K", label_.c_str(), bar.c_str(),
                 static_cast<int>(frac * 100), format_bytes(done_).c_str(),
                 total_ ? format_bytes(total_).c_str() : "?", rate_s.c_str(), eta_s.c_str());
    if (final) std::fputc('\n', out_);
  } else if (final) {
    std::fprintf(out_, "downloaded %s: %s in %s (%s)\n", label_.c_str(), format_bytes(done_).c_str(),
                 format_duration(elapsed).c_str(), rate_s.c_str());
  } else {
    std::fprintf(out_, "  %s: %d%% (%s of %s), %s, ETA %s\n", label_.c_str(), static_cast<int>(frac * 100),
                 format_bytes(done_).c_str(), total_ ? format_bytes(total_).c_str() : "?", rate_s.c_str(),
                 rate > 0 ? format_duration(eta).c_str() : "?");
  }
  std::fflush(out_);
  drew_ = true;
}

void Progress::finish(bool ok) {
  if (!enabled_) return;
  if (ok) {
    draw(true);
  } else if (tty_ && drew_) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
}

}  // namespace nt::hub
