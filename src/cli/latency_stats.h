// cli/latency_stats.h — percentiles of latency samples for `bench --url` (TTFT, inter-token, e2e).
// Must not know: HTTP, output formats.
#pragma once

#include <vector>

namespace nt::cli {

// The q-th percentile (0..100) of samples by linear interpolation between closest ranks (NumPy's
// default "linear" method: rank q/100 * (n-1), so p50 of {1,2,3,4} is 2.5 and p100 is the maximum).
// NaN for an empty set.
double percentile(std::vector<double> samples, double q);

struct LatencySummary {
  int count = 0;
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, max = 0;  // NaN when count is 0
};
LatencySummary summarize(const std::vector<double>& samples);

}  // namespace nt::cli
