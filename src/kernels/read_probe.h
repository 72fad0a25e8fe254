// kernels/read_probe.h — the memory read-bandwidth probe: the ceiling for decode speed (decode reads
// every weight byte once per generated token). Owns: its buffer. Must not know: models, the engine.
//
// A ceiling must be an upper bound, so the probe reads the way the fastest reader on this CPU
// does: huge pages (as the weights get), the widest loads the CPU has, and 2, 4 or 8 streams per
// thread, the best of all (a plain 8-byte-load loop over 4 KiB pages read about a quarter less;
// docs/kernels.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/thread_pool.h"

namespace nt {

// Reads a buffer well above the caches with all of a pool's threads (each a contiguous part).
// The buffer is allocated and touched once, so a measurement can sit right beside the work it is
// the ceiling for: the machine's bandwidth drifts between minutes, and a ratio against a probe
// taken minutes apart measures the drift as much as the work.
class ReadProbe {
 public:
  explicit ReadProbe(ThreadPool& pool, size_t bytes = size_t(512) << 20);
  ~ReadProbe();
  ReadProbe(const ReadProbe&) = delete;
  ReadProbe& operator=(const ReadProbe&) = delete;

  // Bytes per second: the best of `passes` passes over the buffer, the passes cycling through 2,
  // 4 and 8 streams per thread (8: as many as the row-lane decode kernels read).
  double measure(int passes);
  // One pass with n_streams streams per thread; bytes per second.
  double pass(int n_streams);

 private:
  ThreadPool& pool_;
  size_t bytes_ = 0;  // a multiple of the part alignment
  uint8_t* buf_ = nullptr;
};

// XOR-fold of n_streams streams of n_lines 64-byte lines each, stream s at p + s * stride, read in
// an interleaved order (line i of every stream, then line i + 1). p and stride: 64-byte aligned.
// Returns the 64-bit XOR of all words (so the reads cannot be dropped; also the test's check).
uint64_t read_streams(const uint8_t* p, size_t n_lines, size_t stride, int n_streams);
uint64_t read_streams_ref(const uint8_t* p, size_t n_lines, size_t stride, int n_streams);

}  // namespace nt
