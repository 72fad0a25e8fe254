// sampling/check_report.cpp — see check_report.h.
#include "sampling/check_report.h"

#include <algorithm>
#include <set>

#include "core/strings.h"

namespace nt {

RunSetSummary summarize_runs(const std::vector<RunRecord>& runs) {
  RunSetSummary s;
  s.runs = static_cast<int>(runs.size());
  std::set<std::vector<int32_t>> distinct;
  double entropy_sum = 0.0;
  int64_t steps = 0;
  for (const RunRecord& r : runs) {
    distinct.insert(r.tokens);
    for (double e : r.entropies) entropy_sum += e;
    steps += static_cast<int64_t>(r.entropies.size());
  }
  s.distinct_outputs = static_cast<int>(distinct.size());
  s.mean_entropy = steps > 0 ? entropy_sum / static_cast<double>(steps) : 0.0;
  if (s.distinct_outputs > 1) {
    // Every pair's first difference is at least the minimum over runs of its first difference
    // from run 0, so comparing against run 0 finds the earliest divergence of any pair.
    int64_t first = INT64_MAX;
    const std::vector<int32_t>& a = runs[0].tokens;
    for (size_t i = 1; i < runs.size(); ++i) {
      const std::vector<int32_t>& b = runs[i].tokens;
      if (a == b) continue;
      const size_t n = std::min(a.size(), b.size());
      size_t k = 0;
      while (k < n && a[k] == b[k]) ++k;
      first = std::min<int64_t>(first, static_cast<int64_t>(k));
    }
    s.first_divergence = first;
  }
  return s;
}

std::string check_verdict(const CheckFacts& f) {
  std::vector<std::string> parts;
  if (f.truncated_by > 0)
    parts.push_back(str_printf("input was truncated by %lld tokens: the model did not see the "
                               "whole prompt",
                               static_cast<long long>(f.truncated_by)));
  const bool sampled_varies = f.sampled.distinct_outputs > 1;
  const bool greedy_varies = f.greedy.distinct_outputs > 1;
  if (greedy_varies) {
    parts.push_back("greedy (temperature 0) output differs between runs: the engine is not "
                    "deterministic, which is a bug to report");
  } else if (sampled_varies && !f.sampled_is_greedy) {
    parts.push_back(str_printf("the differences come from sampling: lower the temperature (or "
                               "pass --seed to reproduce one output); at temperature 0 all %d "
                               "runs agree",
                               f.greedy.runs));
  } else if (f.fixed_seed && !f.sampled_is_greedy) {
    parts.push_back("stable across runs with a fixed --seed: the same seed reproduces the same "
                    "output; the same error every time points at the prompt or the model");
  } else {
    parts.push_back("stable across runs: the same error every time points at the prompt or the "
                    "model");
  }
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += "; ";
    out += p;
  }
  return out;
}

}  // namespace nt
