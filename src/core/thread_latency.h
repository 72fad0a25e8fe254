// core/thread_latency.h — asks the kernel to run the calling thread with a short scheduling slice.
// Why: on a machine whose cores are all busy with compute threads, a thread that wakes for a small
// piece of work (an HTTP scrape, a token write) waits for the running thread's slice to end. Linux
// 6.12+ (EEVDF) lets an unprivileged SCHED_OTHER thread ask for a shorter slice; a woken thread
// with a shorter slice than the running one preempts it at once. Throughput is unchanged: it only
// decides who runs first, and the compute threads keep their full share.
#pragma once

#include <cstdint>

namespace nt {

// Requests a slice of `slice_us` microseconds (the kernel accepts 100 to 100000) for the calling
// thread, keeping its policy and nice value. Returns false where the kernel does not support it
// (older kernels ignore or refuse the field); nothing changes then.
bool request_short_slice(uint32_t slice_us);

// The calling thread's slice in microseconds as the kernel reports it, or 0 if unknown.
uint32_t current_slice_us();

}  // namespace nt
