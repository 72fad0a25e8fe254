#include "core/thread_pool.h"

#include <fstream>
#include <set>
#include <string>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NT_CPU_RELAX() _mm_pause()
#else
#define NT_CPU_RELAX() ((void)0)
#endif

namespace nt {

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
  for (int t = 1; t < n_threads_; ++t) threads_.emplace_back([this, t] { worker_loop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& th : threads_) th.join();
}

namespace {
constexpr int kTaskBits = 20;
constexpr uint64_t kTaskMask = (uint64_t(1) << kTaskBits) - 1;
constexpr uint64_t kGenMask = (uint64_t(1) << 24) - 1;
inline uint64_t job_gen(uint64_t v) { return v >> (2 * kTaskBits); }
inline uint64_t job_n(uint64_t v) { return (v >> kTaskBits) & kTaskMask; }
inline uint64_t job_next(uint64_t v) { return v & kTaskMask; }
}  // namespace

void ThreadPool::work(int thread, uint64_t gen) {
  for (;;) {
    uint64_t v = job_.load(std::memory_order_acquire);
    int task = -1;
    while (job_gen(v) == gen && job_next(v) < job_n(v)) {
      if (job_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
        task = static_cast<int>(job_next(v));
        break;
      }
    }
    if (task < 0) return;
    // Invariant: the claim succeeded for `gen`, so the owner is still waiting for this job and
    // fn_/ctx_ are the ones it published with it.
    fn_(ctx_, task, thread);
    n_done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::dispatch(int n_tasks, TaskFn fn, void* ctx) {
  // No task of the previous job can be claimed any more (all were), so these writes race with no one.
  fn_ = fn;
  ctx_ = ctx;
  gen_ = (gen_ + 1) & kGenMask;
  n_done_.store(0, std::memory_order_relaxed);
  job_.store((gen_ << (2 * kTaskBits)) | (uint64_t(n_tasks) << kTaskBits), std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  work(0, gen_);
  while (n_done_.load(std::memory_order_acquire) < n_tasks) NT_CPU_RELAX();
}

void ThreadPool::worker_loop(int thread) {
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly (decode issues many small jobs back to back), then sleep on the counter.
    uint64_t g = generation_.load(std::memory_order_acquire);
    for (int spin = 0; g == seen && spin < 20000; ++spin) {
      NT_CPU_RELAX();
      g = generation_.load(std::memory_order_acquire);
    }
    while (g == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    work(thread, job_gen(job_.load(std::memory_order_acquire)));
  }
}

int ThreadPool::default_threads() {
  // Count distinct (physical id, core id) pairs; SMT siblings share a core.
  std::ifstream f("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string line, phys = "0";
  while (std::getline(f, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "physical id") phys = val;
    if (key == "core id") cores.insert({phys, val});
  }
  int n = static_cast<int>(cores.size());
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

}  // namespace nt
