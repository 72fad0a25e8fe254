// sampling/check_report.h — the statistics and verdict behind `nexttok check`: given the token
// outputs of repeated runs (sampled, and again at temperature 0), how many distinct outputs, where
// they first diverge, the mean per-step entropy, and a plain-language verdict.
// Owns: those statistics and the verdict wording. Must not know: models, the CLI, JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nt {

struct RunRecord {
  std::vector<int32_t> tokens;   // generated tokens
  std::vector<double> entropies;  // per-step entropy (bits) of the distribution drawn from
};

struct RunSetSummary {
  int runs = 0;
  int distinct_outputs = 0;
  std::optional<int64_t> first_divergence;  // first token index where any two runs differ
  double mean_entropy = 0.0;                // bits, over every step of every run
};

RunSetSummary summarize_runs(const std::vector<RunRecord>& runs);

struct CheckFacts {
  RunSetSummary sampled;  // with the requested settings
  RunSetSummary greedy;   // the same request at temperature 0
  bool sampled_is_greedy = false;  // the requested temperature was already <= 0
  bool fixed_seed = false;         // --seed given: every run used the same seed
  int64_t truncated_by = 0;        // prompt tokens dropped (0: none)
};

// One plain sentence (several joined by "; " when they all apply), e.g.
// "the differences come from sampling: lower the temperature".
std::string check_verdict(const CheckFacts& f);

}  // namespace nt
