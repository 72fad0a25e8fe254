// core/thread_pool.h — the explicit compute thread pool passed to kernels.
// Owns: worker threads and the fork/join barrier. Must not know: what the work is.
//
// Determinism contract: run(n_tasks, fn) calls fn(task, thread) exactly once per task; which thread
// runs a task may vary, so a kernel must make each task's result independent of the thread (split
// outputs, never a reduction across tasks) for results to be identical at any thread count.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace nt {

class ThreadPool {
 public:
  // n_threads >= 1; the calling thread is worker 0, so n_threads - 1 threads are started.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int n_threads() const { return n_threads_; }

  // Runs fn(task, thread) for task in [0, n_tasks), tasks handed out dynamically; returns when all
  // are done. Not reentrant: call only from the owning (engine) thread.
  template <class F>
  void run(int n_tasks, F&& fn) {
    if (n_tasks <= 0) return;
    if (n_threads_ == 1 || n_tasks == 1) {
      for (int i = 0; i < n_tasks; ++i) fn(i, 0);
      return;
    }
    using Fn = std::remove_reference_t<F>;
    if (n_tasks <= kMaxJobTasks) {
      dispatch(n_tasks, [](void* ctx, int task, int thread) { (*static_cast<Fn*>(ctx))(task, thread); },
               static_cast<void*>(&fn));
      return;
    }
    // More tasks than one job word can count: each job task runs a contiguous range of them.
    struct Ranged { Fn* fn; int n; };
    Ranged r{&fn, n_tasks};
    dispatch(kMaxJobTasks, [](void* ctx, int task, int thread) {
      auto* rr = static_cast<Ranged*>(ctx);
      const int64_t a = int64_t(rr->n) * task / kMaxJobTasks, b = int64_t(rr->n) * (task + 1) / kMaxJobTasks;
      for (int64_t i = a; i < b; ++i) (*rr->fn)(static_cast<int>(i), thread);
    }, static_cast<void*>(&r));
  }

  // Number of physical cores (best effort; falls back to hardware_concurrency).
  static int default_threads();

 private:
  // The job word packs [generation:24][n_tasks:20][next task:20]. A task is claimed by a CAS that
  // checks the generation and the bound in the same word, so a late worker can never claim a task
  // of a later job with an index from an earlier one, nor read a bound that belongs to another job.
  static constexpr int kTaskBits = 20;
  static constexpr int kMaxJobTasks = (1 << kTaskBits) - 1;
  using TaskFn = void (*)(void* ctx, int task, int thread);
  void dispatch(int n_tasks, TaskFn fn, void* ctx);
  void worker_loop(int thread);
  void work(int thread, uint64_t gen);

  int n_threads_;
  std::vector<std::thread> threads_;
  // Job state: written by the owner only while no task of the previous job can still be claimed,
  // published by the release store of job_ (and read by a worker only after a successful claim).
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  uint64_t gen_ = 0;  // owner's job counter (low 24 bits go into job_)
  alignas(64) std::atomic<uint64_t> job_{0};
  alignas(64) std::atomic<int> n_done_{0};
  alignas(64) std::atomic<uint64_t> generation_{0};  // wake-up counter (futex wait)
  std::atomic<bool> stop_{false};
};

}  // namespace nt
