// kernels/matmul.cpp — the reference matmul, the scalar level, and the dispatcher that quantizes
// activations once and splits the output into rectangles (row chunks x token blocks) over the pool.
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "core/check.h"
#include "kernels/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/kernels_internal.h"
#include "tensor/dequant.h"

namespace nt {

void matmul_ref(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens) {
  NT_CHECK(dtype_supported(w.type));
  std::vector<float> row(static_cast<size_t>(w.n_cols));
  for (int64_t r = 0; r < w.n_rows; ++r) {
    dequantize_row(w.type, w.data + r * w.row_bytes, row.data(), w.n_cols);
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float* xt = x + t * ldx;
      double acc = 0;
      for (int64_t i = 0; i < w.n_cols; ++i) acc += static_cast<double>(row[i]) * xt[i];
      y[t * ldy + r] = static_cast<float>(acc);
    }
  }
}

namespace {

int64_t split_at(int64_t n, int64_t parts, int64_t i) { return n * i / parts; }

// Scalar level: dequantize each weight row once, dot it with every token in a fixed float order.
void matmul_scalar(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
                   ThreadPool& pool) {
  const int64_t n_tasks = std::min<int64_t>(w.n_rows, 4 * pool.n_threads());
  pool.run(static_cast<int>(n_tasks), [&](int task, int) {
    std::vector<float> row(static_cast<size_t>(w.n_cols));
    const int64_t r0 = split_at(w.n_rows, n_tasks, task), r1 = split_at(w.n_rows, n_tasks, task + 1);
    for (int64_t r = r0; r < r1; ++r) {
      dequantize_row(w.type, w.data + r * w.row_bytes, row.data(), w.n_cols);
      for (int64_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + t * ldx;
        float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t i = 0;
        for (; i + 8 <= w.n_cols; i += 8)
          for (int l = 0; l < 8; ++l) acc[l] += row[i + l] * xt[i + l];
        for (int l = 0; i < w.n_cols; ++i, ++l) acc[l] += row[i] * xt[i];
        y[t * ldy + r] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      }
    }
  });
}

// A contiguous range of task indices [front, back) taken from either end (one word: a claim is a
// single CAS that checks the bound and moves its end).
struct alignas(64) TaskShare {
  std::atomic<uint64_t> fb{0};  // back << 32 | front
  void reset(int64_t front, int64_t back) {
    fb.store(static_cast<uint64_t>(back) << 32 | static_cast<uint64_t>(front), std::memory_order_relaxed);
  }
  bool take_front(int64_t& task) {
    uint64_t v = fb.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t f = v & 0xFFFFFFFFu, b = v >> 32;
      if (f >= b) return false;
      if (fb.compare_exchange_weak(v, b << 32 | (f + 1), std::memory_order_relaxed)) {
        task = static_cast<int64_t>(f);
        return true;
      }
    }
  }
  bool take_back(int64_t& task) {
    uint64_t v = fb.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t f = v & 0xFFFFFFFFu, b = v >> 32;
      if (f >= b) return false;
      if (fb.compare_exchange_weak(v, (b - 1) << 32 | f, std::memory_order_relaxed)) {
        task = static_cast<int64_t>(b - 1);
        return true;
      }
    }
  }
};

// Token block: the quantized activations of this many tokens stay in L2 while a row chunk's
// weights stream through L1.
constexpr int64_t kTokenBlock = 64;

// One output's work split: row chunks x token blocks.
struct Plan {
  const detail::MatmulKernel* k = nullptr;
  detail::MatArgs a;
  int64_t rc = 0, tb = 0, n_rc = 0, n_tb = 0;
  int64_t n_tasks() const { return n_rc * n_tb; }
  void run_task(int64_t task) const {
    const int64_t ri = task / n_tb, ti = task % n_tb;
    const int64_t r0 = ri * rc, r1 = std::min(a.w.n_rows, r0 + rc);
    const int64_t t0 = ti * tb, t1 = std::min(n_tokens, t0 + tb);
    k->rect(a, r0, r1, t0, t1);
  }
  int64_t n_tokens = 0;
};

Plan make_plan(const detail::MatmulKernel* k, const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy,
               int64_t n_tokens, int n_threads, int n_outputs) {
  Plan p;
  p.k = k;
  p.a = detail::MatArgs{w, x, ldx, nullptr, y, ldy};
  p.n_tokens = n_tokens;
  const int64_t n_tb0 = (n_tokens + kTokenBlock - 1) / kTokenBlock;
  p.tb = ((n_tokens + n_tb0 - 1) / n_tb0 + 11) / 12 * 12;  // balanced, whole tiles of 3 and 4
  p.n_tb = (n_tokens + p.tb - 1) / p.tb;
  // Row chunks (multiples of the kernel's row_align: whole tiles): enough tasks for dynamic
  // balance across all outputs, small enough for L2 reuse in prefill.
  // Decode takes 8 per thread: finer chunks for the share scheduler's end balance (matmul_multi).
  static const int64_t dpt = getenv("NT_DPT") ? atoi(getenv("NT_DPT")) : 8;
  const int64_t per_thread = n_tokens == 1 ? dpt : 4;
  const int64_t want_tasks = (per_thread * static_cast<int64_t>(n_threads) + n_outputs - 1) / n_outputs;
  const int64_t n_rc_min = (want_tasks + p.n_tb - 1) / p.n_tb;
  const int64_t align = k->row_align;
  int64_t rc = (w.n_rows + n_rc_min - 1) / n_rc_min;
  if (n_tokens > 1) rc = std::min<int64_t>(rc, 5 * align);
  p.rc = std::max<int64_t>(align, (rc + align - 1) / align * align);
  p.n_rc = (w.n_rows + p.rc - 1) / p.rc;
  return p;
}

const detail::MatmulKernel* pick_kernel(DType type) {
  const SimdLevel level = simd_level();
  const detail::MatmulKernel* k = nullptr;
  if (level >= SimdLevel::Avx512) k = detail::matmul_kernel_avx512(type);
  if (!k && level >= SimdLevel::Avx2) k = detail::matmul_kernel_avx2(type);
  return k;
}

void check_view(const MatView& w) {
  NT_CHECK(dtype_supported(w.type));
  NT_CHECK(w.n_cols % dtype_info(w.type).block_size == 0);
}

}  // namespace

namespace detail {
uint8_t* kernel_scratch(size_t bytes) {
  thread_local std::vector<uint8_t> buf;
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
  const auto p = reinterpret_cast<uintptr_t>(buf.data());
  return buf.data() + ((64 - p % 64) % 64);
}
uint8_t* kernel_cache(size_t bytes, bool* grew) {
  thread_local std::vector<uint8_t> buf;
  *grew = buf.size() < bytes + 64;
  if (*grew) {
    buf.clear();
    buf.resize(bytes + 64);
  }
  const auto p = reinterpret_cast<uintptr_t>(buf.data());
  return buf.data() + ((64 - p % 64) % 64);
}
}  // namespace detail

void matmul(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
            ThreadPool& pool) {
  MatmulOut out{&w, y, ldy};
  matmul_multi(&out, 1, x, ldx, n_tokens, pool);
}

void matmul_multi(const MatmulOut* outs, int n_outs, const float* x, int64_t ldx, int64_t n_tokens, ThreadPool& pool) {
  if (n_tokens <= 0 || n_outs <= 0) return;
  constexpr int kMaxOuts = 8;
  NT_CHECK(n_outs <= kMaxOuts);
  // Activations are quantized once per distinct (offset, layout) the kernels ask for.
  thread_local detail::XQuant xqs[kMaxOuts];
  int xq_offset[kMaxOuts], n_xq = 0;
  detail::XLayout xq_layout[kMaxOuts];
  Plan plans[kMaxOuts];
  int64_t task_end[kMaxOuts];
  int64_t total = 0;
  for (int i = 0; i < n_outs; ++i) {
    const MatView& w = *outs[i].w;
    check_view(w);
    NT_CHECK(i == 0 || w.n_cols == outs[0].w->n_cols);
    const detail::MatmulKernel* k = w.n_rows > 0 ? pick_kernel(w.type) : nullptr;
    if (!k) {  // scalar level (or no kernel): its own pass
      if (w.n_rows > 0) matmul_scalar(w, x, ldx, outs[i].y, outs[i].ldy, n_tokens, pool);
      task_end[i] = total;
      continue;
    }
    plans[i] = make_plan(k, w, x, ldx, outs[i].y, outs[i].ldy, n_tokens, pool.n_threads(), n_outs);
    static std::atomic<uint64_t> next_call{1};
    plans[i].a.call = next_call.fetch_add(1, std::memory_order_relaxed);
    if (k->quantized_x) {
      int j = 0;
      while (j < n_xq && !(xq_offset[j] == k->x_offset && xq_layout[j] == k->x_layout)) ++j;
      if (j == n_xq) {
        detail::quantize_x(x, ldx, w.n_cols, n_tokens, k->x_offset, k->x_layout, xqs[j], pool);
        xq_offset[j] = k->x_offset;
        xq_layout[j] = k->x_layout;
        ++n_xq;
      }
      plans[i].a.xq = &xqs[j];
    }
    total += plans[i].n_tasks();
    task_end[i] = total;
  }
  if (total == 0) return;
  auto run = [&](int task, int) {
    int i = 0;
    while (task >= task_end[i]) ++i;
    plans[i].run_task(task - (task_end[i] - plans[i].n_tasks()));
  };
  if (total == 1) {
    run(0, 0);
  } else if (n_tokens == 1) {
    // Decode: each thread walks its own contiguous share of the tasks front to back (tasks are in
    // memory order: output by output, row chunks ascending), so its weights stream as one linear
    // walk and the kernels' one-group-ahead prefetch lands in its own next chunk; a thread done
    // early takes chunks from the back of the other shares. Handing tasks out in turn instead
    // sends every prefetch past a chunk's end to the other core. tg128 at 2 threads on the 0.6B
    // models, 5 interleaved rounds, median: Q8_0 68.9 -> 76.4 t/s, Q4_0 146.5 -> 162.4.
    const int n_parts = static_cast<int>(std::min<int64_t>(pool.n_threads(), total));
    thread_local std::unique_ptr<TaskShare[]> shares;
    thread_local int n_shares = 0;
    if (n_shares < n_parts) {
      shares = std::make_unique<TaskShare[]>(static_cast<size_t>(n_parts));
      n_shares = n_parts;
    }
    TaskShare* sh = shares.get();  // this thread's: the workers' own thread_local is another
    for (int p = 0; p < n_parts; ++p) sh[p].reset(total * p / n_parts, total * (p + 1) / n_parts);
    pool.run(n_parts, [&](int part, int) {
      int64_t task = 0;
      while (sh[part].take_front(task)) run(static_cast<int>(task), 0);
      for (int k = 1; k < n_parts; ++k)
        while (sh[(part + k) % n_parts].take_back(task)) run(static_cast<int>(task), 0);
    });
  } else {
    pool.run(static_cast<int>(total), run);
  }
}

}  // namespace nt
