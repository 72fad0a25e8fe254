// cli/bench_concurrent.h — `bench --parallel N`: N generations at once through the engine's request
// path (scheduler, one forward pass per step for all of them, greedy sampling per request), timed
// from submission to the last token: the output tokens/s a server would see.
// Must not know: table formatting (cmd_bench.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/result.h"
#include "engine/engine.h"

namespace nt::cli {

// Nanoseconds per repetition (after one untimed warm-up) of n_parallel requests, each a distinct
// one-token prompt generating n_gen tokens (end-of-generation ignored).
Result<std::vector<double>> time_concurrent_generation(Engine& eng, int n_parallel, int n_gen, int reps);

}  // namespace nt::cli
