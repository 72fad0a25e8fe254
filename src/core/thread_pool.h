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
    dispatch(n_tasks, [](void* ctx, int task, int thread) { (*static_cast<Fn*>(ctx))(task, thread); },
             static_cast<void*>(&fn));
  }

  // Number of physical cores (best effort; falls back to hardware_concurrency).
  static int default_threads();

 private:
  using TaskFn = void (*)(void* ctx, int task, int thread);
  void dispatch(int n_tasks, TaskFn fn, void* ctx);
  void worker_loop(int thread);
  void work(int thread);

  int n_threads_;
  std::vector<std::thread> threads_;
  // Job state, published by incrementing generation_.
  TaskFn fn_ = nullptr;
  void* ctx_ = nullptr;
  int n_tasks_ = 0;
  alignas(64) std::atomic<int> next_task_{0};
  alignas(64) std::atomic<int> n_done_{0};
  alignas(64) std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace nt
