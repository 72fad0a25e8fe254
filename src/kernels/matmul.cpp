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
// single CAS that checks the bound and moves its end). A claim takes up to half of what is left
// (at least one task), cut at `limit`: big runs while much is left, single tasks at the end.
struct alignas(64) TaskShare {
  std::atomic<uint64_t> fb{0};  // back << 32 | front
  void reset(int64_t front, int64_t back) {
    fb.store(static_cast<uint64_t>(back) << 32 | static_cast<uint64_t>(front), std::memory_order_relaxed);
  }
  // Tasks [first, first + n) from the front, n <= limit(front) - front.
  template <class Limit>
  bool take_front(int64_t& first, int64_t& n, Limit&& limit) {
    uint64_t v = fb.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t f = static_cast<int64_t>(v & 0xFFFFFFFFu), b = static_cast<int64_t>(v >> 32);
      if (f >= b) return false;
      const int64_t k = std::min(std::max<int64_t>(1, (b - f) / 2), limit(f) - f);
      if (fb.compare_exchange_weak(v, static_cast<uint64_t>(b) << 32 | static_cast<uint64_t>(f + k),
                                   std::memory_order_relaxed)) {
        first = f, n = k;
        return true;
      }
    }
  }
  // Tasks [first, first + n) from the back, first >= limit(back - 1).
  template <class Limit>
  bool take_back(int64_t& first, int64_t& n, Limit&& limit) {
    uint64_t v = fb.load(std::memory_order_relaxed);
    for (;;) {
      const int64_t f = static_cast<int64_t>(v & 0xFFFFFFFFu), b = static_cast<int64_t>(v >> 32);
      if (f >= b) return false;
      const int64_t k = std::min(std::max<int64_t>(1, (b - f) / 2), b - std::max(f, limit(b - 1)));
      if (fb.compare_exchange_weak(v, static_cast<uint64_t>(b - k) << 32 | static_cast<uint64_t>(f),
                                   std::memory_order_relaxed)) {
        first = b - k, n = k;
        return true;
      }
    }
  }
};

// Token block: the quantized activations of this many tokens stay in L2 while a row chunk's
// weights stream through L1.
constexpr int64_t kTokenBlock = 64;

// Decode row chunks of about this many weight bytes. The threads' last claims are single chunks,
// so they finish within about one chunk's read of each other instead of one thread reading alone
// at the end of each job (measurements: docs/kernels.md).
constexpr int64_t kDecodeChunkBytes = 64 * 1024;

// One output's work split: row chunks x token blocks.
struct Plan {
  const detail::MatmulKernel* k = nullptr;
  detail::MatArgs a;
  int64_t rc = 0, tb = 0, n_rc = 0, n_tb = 0;
  int64_t n_tasks() const { return n_rc * n_tb; }
  // Task `task`'s rectangle: rows [r0, r1) x tokens [t0, t1).
  void rect_of(int64_t task, int64_t& r0, int64_t& r1, int64_t& t0, int64_t& t1) const {
    const int64_t ri = task / n_tb, ti = task % n_tb;
    r0 = ri * rc, r1 = std::min(a.w.n_rows, r0 + rc);
    t0 = ti * tb, t1 = std::min(n_tokens, t0 + tb);
  }
  bool same_split(const Plan& o) const { return rc == o.rc && tb == o.tb && n_rc == o.n_rc && n_tb == o.n_tb; }
  int64_t n_tokens = 0;
};

// The epilogues (kernels.h: MatmulOut) on rows [r0, r1) x tokens [t0, t1) of output o.
void add_residual(const MatmulOut& o, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) add_inplace(o.residual + t * o.ldy + r0, o.y + t * o.ldy + r0, r1 - r0);
}
// The residual rows of a prefill rectangle, requested (for writing, into L2) before its product:
// they are short strided pieces (rc floats of each token's row) that the hardware prefetcher does
// not follow, so the add after the product waited on every line.
void prefetch_residual(const MatmulOut& o, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    const uintptr_t b = reinterpret_cast<uintptr_t>(o.residual + t * o.ldy + r0) & ~uintptr_t(63);
    const uintptr_t e = reinterpret_cast<uintptr_t>(o.residual + t * o.ldy + r1);
    for (uintptr_t p = b; p < e; p += 64) __builtin_prefetch(reinterpret_cast<const void*>(p), 1, 2);
  }
}
void swiglu(const MatmulOut& gate, const MatmulOut& up, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  for (int64_t t = t0; t < t1; ++t) {
    float* g = gate.y + t * gate.ldy + r0;
    silu_mul(g, up.y + t * up.ldy + r0, g, r1 - r0);
  }
}

constexpr int kMaxOuts = 8;  // outputs of one matmul_multi call

// The SwiGLU of a gate and its up split the same way runs per rectangle: whichever of the two
// rectangles finishes second applies it (one counter per rectangle pair). Gates split otherwise
// (or computed by the scalar level) run it on their whole output after the pass (rest()).
struct SwigluPairs {
  int gate_of[kMaxOuts];      // output i is the up of gate gate_of[i] (fused per rectangle), or -1
  bool fused[kMaxOuts] = {};  // output i is a gate fused per rectangle
  int slot[kMaxOuts];         // gate i's counters: done + slot[i] * n_tasks
  int64_t n_tasks = 0;
  std::atomic<uint8_t>* done = nullptr;

  SwigluPairs(const MatmulOut* outs, int n_outs, const Plan* plans, const bool* planned) {
    std::fill(gate_of, gate_of + kMaxOuts, -1);
    std::fill(slot, slot + kMaxOuts, -1);
    int n_pairs = 0;
    for (int i = 0; i < n_outs; ++i) {
      const int u = outs[i].swiglu_up;
      if (u >= 0 && planned[i] && planned[u] && plans[i].same_split(plans[u])) {
        fused[i] = true;
        gate_of[u] = i;
        slot[i] = n_pairs++;
        n_tasks = std::max(n_tasks, plans[i].n_tasks());
      }
    }
    thread_local std::unique_ptr<std::atomic<uint8_t>[]> counters;  // the calling thread's
    thread_local int64_t cap = 0;
    const int64_t need = n_tasks * n_pairs;
    if (cap < need) {
      counters = std::make_unique<std::atomic<uint8_t>[]>(static_cast<size_t>(need));
      cap = need;
    }
    for (int64_t j = 0; j < need; ++j) counters[j].store(0, std::memory_order_relaxed);  // published by the fork
    done = counters.get();
  }
  // Output i's tasks [c0, c0 + n) (plan p) are done.
  void finished(const MatmulOut* outs, const Plan& p, int i, int64_t c0, int64_t n) const {
    const int g = fused[i] ? i : gate_of[i];
    if (g < 0) return;
    for (int64_t c = c0; c < c0 + n; ++c) {
      // Invariant: the acq_rel counter orders the other rectangle's writes before this reader.
      if (done[slot[g] * n_tasks + c].fetch_add(1, std::memory_order_acq_rel) == 1) {
        int64_t r0, r1, t0, t1;
        p.rect_of(c, r0, r1, t0, t1);
        swiglu(outs[g], outs[outs[g].swiglu_up], r0, r1, t0, t1);
      }
    }
  }
  // After the pass: the SwiGLUs not fused per rectangle.
  void rest(const MatmulOut* outs, int n_outs, int64_t n_tokens) const {
    for (int i = 0; i < n_outs; ++i)
      if (outs[i].swiglu_up >= 0 && !fused[i]) swiglu(outs[i], outs[outs[i].swiglu_up], 0, outs[i].w->n_rows, 0, n_tokens);
  }
};

Plan make_plan(const detail::MatmulKernel* k, const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy,
               int64_t n_tokens, int n_threads, int n_outputs) {
  Plan p;
  p.k = k;
  p.a = detail::MatArgs{w, x, ldx, nullptr, y, ldy};
  p.n_tokens = n_tokens;
  const bool stream = n_tokens <= k->stream_tokens;  // rows streamed as in a decode, all tokens at once
  const int64_t n_tb0 = (n_tokens + kTokenBlock - 1) / kTokenBlock;
  p.tb = stream ? n_tokens : ((n_tokens + n_tb0 - 1) / n_tb0 + 11) / 12 * 12;  // balanced, whole tiles of 3 and 4
  p.n_tb = (n_tokens + p.tb - 1) / p.tb;
  // Row chunks (multiples of the kernel's row_align: whole tiles). Prefill: enough tasks for
  // dynamic balance across all outputs, small enough for L2 reuse. Decode: chunks of about
  // kDecodeChunkBytes, claimed in runs (TaskShare), so the threads end within one small chunk.
  // Small matrices still get 8 (decode) or 4 chunks per thread over all outputs.
  const int64_t align = k->row_align;
  const int64_t want_tasks = ((stream ? 8 : 4) * static_cast<int64_t>(n_threads) + n_outputs - 1) / n_outputs;
  const int64_t n_rc_min = (want_tasks + p.n_tb - 1) / p.n_tb;
  int64_t rc = (w.n_rows + n_rc_min - 1) / n_rc_min;
  if (stream) rc = std::min<int64_t>(rc, std::max<int64_t>(1, kDecodeChunkBytes / static_cast<int64_t>(w.row_bytes)));
  else rc = std::min<int64_t>(rc, 5 * align);
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
std::atomic<int64_t>& tile_cache_bytes() {
  static std::atomic<int64_t> bytes{0};
  return bytes;
}
uint8_t* kernel_pack_cache(size_t bytes, uint64_t call, int64_t r0, int64_t r1, bool* fresh) {
  thread_local std::vector<uint8_t> buf;
  struct Key {
    uint64_t call;
    int64_t r0, r1;
  };
  thread_local Key key{0, 0, 0};
  const bool grew = buf.size() < bytes + 64;
  if (grew) {
    buf.clear();
    buf.resize(bytes + 64);
  }
  *fresh = grew || key.call != call || key.r0 != r0 || key.r1 != r1;
  key = {call, r0, r1};
  const auto p = reinterpret_cast<uintptr_t>(buf.data());
  return buf.data() + ((64 - p % 64) % 64);
}
}  // namespace detail

void matmul(const MatView& w, const float* x, int64_t ldx, float* y, int64_t ldy, int64_t n_tokens,
            ThreadPool& pool) {
  MatmulOut out{&w, y, ldy};
  matmul_multi(&out, 1, x, ldx, n_tokens, pool);
}

namespace {
// The calling thread's quantized activations, kept between calls (grown to the largest asked for).
thread_local detail::XQuant t_xqs[kMaxOuts];
}  // namespace

size_t detail::matmul_scratch_bytes() {
  auto n = static_cast<size_t>(tile_cache_bytes().load(std::memory_order_relaxed));
  for (const detail::XQuant& xq : t_xqs) n += xq.buf.capacity();
  return n;
}

void matmul_multi(const MatmulOut* outs, int n_outs, const float* x, int64_t ldx, int64_t n_tokens, ThreadPool& pool) {
  if (n_tokens <= 0 || n_outs <= 0) return;
  NT_CHECK(n_outs <= kMaxOuts);
  // Activations are quantized once per distinct (offset, layout) the kernels ask for.
  detail::XQuant* xqs = t_xqs;
  int xq_offset[kMaxOuts], n_xq = 0;
  uint64_t xq_call[kMaxOuts] = {};
  detail::XLayout xq_layout[kMaxOuts];
  Plan plans[kMaxOuts];
  bool planned[kMaxOuts] = {};
  int64_t task_end[kMaxOuts];
  int64_t total = 0;
  for (int i = 0; i < n_outs; ++i) {
    const MatView& w = *outs[i].w;
    check_view(w);
    NT_CHECK(i == 0 || w.n_cols == outs[0].w->n_cols);
    const int u = outs[i].swiglu_up;
    if (u >= 0) {  // a gate: its up is another output of the same shape, gated once, no residuals
      NT_CHECK(u < n_outs && u != i && outs[u].w->n_rows == w.n_rows && outs[u].ldy == outs[i].ldy);
      NT_CHECK(!outs[i].residual && !outs[u].residual && outs[u].swiglu_up < 0);
      for (int j = 0; j < i; ++j) NT_CHECK(outs[j].swiglu_up != u);
    }
    const detail::MatmulKernel* k = w.n_rows > 0 ? pick_kernel(w.type) : nullptr;
    if (!k) {  // scalar level (or no kernel): its own pass
      if (w.n_rows > 0) matmul_scalar(w, x, ldx, outs[i].y, outs[i].ldy, n_tokens, pool);
      task_end[i] = total;
      continue;
    }
    plans[i] = make_plan(k, w, x, ldx, outs[i].y, outs[i].ldy, n_tokens, pool.n_threads(), n_outs);
    planned[i] = true;
    static std::atomic<uint64_t> next_call{1};
    plans[i].a.call = next_call.fetch_add(1, std::memory_order_relaxed);
    plans[i].a.n_tokens = n_tokens;
    if (k->quantized_x) {
      int j = 0;
      while (j < n_xq && !(xq_offset[j] == k->x_offset && xq_layout[j] == k->x_layout)) ++j;
      if (j == n_xq) {
        detail::quantize_x(x, ldx, w.n_cols, n_tokens, k->x_offset, k->x_layout, xqs[j], pool);
        xq_offset[j] = k->x_offset;
        xq_layout[j] = k->x_layout;
        xq_call[j] = next_call.fetch_add(1, std::memory_order_relaxed);
        ++n_xq;
      }
      plans[i].a.xq = &xqs[j];
      plans[i].a.x_call = xq_call[j];
    }
    total += plans[i].n_tasks();
    task_end[i] = total;
  }
  // Every planned output streams its rows (one token, or few enough for all their kernels).
  bool streamed = true;
  for (int i = 0; i < n_outs; ++i)
    if (planned[i] && n_tokens > plans[i].k->stream_tokens) streamed = false;
  const SwigluPairs pairs(outs, n_outs, plans, planned);
  auto output_of = [&](int64_t task) {
    int i = 0;
    while (task >= task_end[i]) ++i;
    return i;
  };
  // Tasks [first, first + n) of one output; in decode (one token block) consecutive tasks are
  // adjacent row chunks, computed as one rectangle.
  auto run_tasks = [&](int64_t first, int64_t n) {
    const int i = output_of(first);
    const int64_t local = first - (task_end[i] - plans[i].n_tasks());
    NT_CHECK(n == 1 || plans[i].n_tb == 1);
    int64_t r0, r1, t0, t1, first_end, last_begin;
    plans[i].rect_of(local, r0, first_end, t0, t1);          // rows from the run's first chunk
    plans[i].rect_of(local + n - 1, last_begin, r1, t0, t1);  // to its last
    if (outs[i].residual && t1 - t0 > 1) prefetch_residual(outs[i], r0, r1, t0, t1);
    plans[i].k->rect(plans[i].a, r0, r1, t0, t1);
    if (outs[i].residual) add_residual(outs[i], r0, r1, t0, t1);
    pairs.finished(outs, plans[i], i, local, n);
  };
  if (total == 1) {
    run_tasks(0, 1);
  } else if (total > 1 && streamed) {
    // Decode: each thread walks its own contiguous share of the tasks front to back (tasks are in
    // memory order: output by output, row chunks ascending), so its weights stream as one linear
    // walk and the kernels' one-group-ahead prefetch lands in its own next chunk; a thread done
    // early takes chunks from the back of the other shares. Handing tasks out in turn instead
    // sends every prefetch past a chunk's end to the other core.
    // Claims take half of what is left of a share (one output at most) as one rectangle: few
    // long rectangles while much is left, single chunks at the end (kDecodeChunkBytes).
    const int n_parts = static_cast<int>(std::min<int64_t>(pool.n_threads(), total));
    thread_local std::unique_ptr<TaskShare[]> shares;
    thread_local int n_shares = 0;
    if (n_shares < n_parts) {
      shares = std::make_unique<TaskShare[]>(static_cast<size_t>(n_parts));
      n_shares = n_parts;
    }
    TaskShare* sh = shares.get();  // this thread's: the workers' own thread_local is another
    for (int p = 0; p < n_parts; ++p) sh[p].reset(total * p / n_parts, total * (p + 1) / n_parts);
    auto output_end = [&](int64_t task) { return task_end[output_of(task)]; };
    auto output_begin = [&](int64_t task) {
      const int i = output_of(task);
      return task_end[i] - plans[i].n_tasks();
    };
    pool.run(n_parts, [&](int part, int) {
      int64_t first = 0, n = 0;
      while (sh[part].take_front(first, n, output_end)) run_tasks(first, n);
      for (int k = 1; k < n_parts; ++k)
        while (sh[(part + k) % n_parts].take_back(first, n, output_begin)) run_tasks(first, n);
    });
  } else if (total > 1) {
    // Prefill: one job runs a fused gate's chunk k and then its up's chunk k (when the up is the
    // next output), so the SwiGLU of that rectangle reads both halves from the cache of the core
    // that just computed them. In separate jobs in pass order the gate outputs had left the cache;
    // alternating jobs sent half of them to the other core.
    thread_local std::vector<std::pair<int64_t, int64_t>> jobs;  // (task, its up's task or -1)
    jobs.clear();
    for (int i = 0; i < n_outs; ++i) {
      const int64_t n = planned[i] ? plans[i].n_tasks() : 0, b = task_end[i] - n;
      if (pairs.gate_of[i] == i - 1 && i > 0 && pairs.fused[i - 1]) continue;  // run with its gate
      const bool pair = pairs.fused[i] && outs[i].swiglu_up == i + 1;
      for (int64_t k = 0; k < n; ++k) jobs.emplace_back(b + k, pair ? task_end[i] + k : -1);
    }
    const std::pair<int64_t, int64_t>* js = jobs.data();  // this thread's: the workers' own thread_local is another
    pool.run(static_cast<int>(jobs.size()), [&](int job, int) {
      run_tasks(js[job].first, 1);
      if (js[job].second >= 0) run_tasks(js[job].second, 1);
    });
  }
  // The epilogues of what did not run per rectangle (scalar passes, gates split unlike their up).
  for (int i = 0; i < n_outs; ++i)
    if (outs[i].residual && !planned[i]) add_residual(outs[i], 0, outs[i].w->n_rows, 0, n_tokens);
  pairs.rest(outs, n_outs, n_tokens);
}

}  // namespace nt
