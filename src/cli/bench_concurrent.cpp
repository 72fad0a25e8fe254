// cli/bench_concurrent.cpp — see bench_concurrent.h.
#include "cli/bench_concurrent.h"

#include <algorithm>
#include <chrono>

#include "core/strings.h"

namespace nt::cli {

Result<std::vector<double>> time_concurrent_generation(Engine& eng, int n_parallel, int n_gen, int reps) {
  const int32_t n_vocab = eng.config().n_vocab;
  std::vector<double> ns;
  uint32_t salt = 1;
  for (int rep = -1; rep < reps; ++rep) {  // rep -1: warm-up
    const int n = rep < 0 ? std::min(n_gen, 4) : n_gen;
    int64_t generated = 0, failed = 0;
    std::string error;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n_parallel; ++i) {
      RequestParams p;
      // Distinct one-token prompts: no request shares another's cached blocks.
      p.prompt = {static_cast<int32_t>((salt++ * 2654435761u) % static_cast<uint32_t>(n_vocab))};
      p.sampling.temp = 0.0f;
      p.sampling.seed = 1;
      p.max_tokens = n;
      p.ignore_eos = true;
      auto id = eng.submit(std::move(p), [&](const TokenEvent& ev) {
        if (ev.token >= 0) ++generated;
        if (ev.finished && ev.finish_reason == FinishReason::Error) {
          ++failed;
          error = ev.error.message;
        }
      });
      if (!id) return id.error();
    }
    eng.run_until_idle();
    const double t = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (failed > 0) return make_error(ErrorKind::Internal, "a benchmark request failed: %s", error.c_str());
    if (generated != int64_t(n_parallel) * n)
      return make_error(ErrorKind::Internal, "the benchmark generated %lld tokens instead of %lld",
                        static_cast<long long>(generated), static_cast<long long>(int64_t(n_parallel) * n));
    if (rep >= 0) ns.push_back(t);
  }
  return ns;
}

}  // namespace nt::cli
