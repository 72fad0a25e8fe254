// cli/bandwidth.h — a memory read-bandwidth probe: the ceiling for decode speed (every weight byte
// is read once per generated token).
#pragma once

#include "core/thread_pool.h"

namespace nt::cli {

// Bytes per second reading a buffer of `bytes` (well above the caches) with the pool's threads;
// best of `reps` passes.
double measure_read_bandwidth(ThreadPool& pool, size_t bytes = size_t(512) << 20, int reps = 5);

}  // namespace nt::cli
