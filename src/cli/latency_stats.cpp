// cli/latency_stats.cpp — see latency_stats.h.
#include "cli/latency_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nt::cli {

double percentile(std::vector<double> samples, double q) {
  if (samples.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(samples.begin(), samples.end());
  const double rank = std::clamp(q, 0.0, 100.0) / 100.0 * static_cast<double>(samples.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, samples.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return samples[lo] + (samples[hi] - samples[lo]) * frac;
}

LatencySummary summarize(const std::vector<double>& samples) {
  LatencySummary s;
  s.count = static_cast<int>(samples.size());
  s.p50 = percentile(samples, 50);
  s.p90 = percentile(samples, 90);
  s.p99 = percentile(samples, 99);
  if (samples.empty()) {
    s.mean = s.max = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  double sum = 0;
  for (double x : samples) sum += x;
  s.mean = sum / static_cast<double>(samples.size());
  s.max = *std::max_element(samples.begin(), samples.end());
  return s;
}

}  // namespace nt::cli
