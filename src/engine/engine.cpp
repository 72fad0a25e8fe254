#include "engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "core/check.h"
#include "core/strings.h"
#include "kernels/kv_types.h"

namespace nt {

uint64_t available_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

Engine::Engine(std::unique_ptr<Model> model, KvCache kv, int n_threads, int64_t n_ctx, int n_batch)
    : model_(std::move(model)), kv_(std::move(kv)), pool_(n_threads), n_ctx_(n_ctx), n_batch_(n_batch) {}

Result<std::unique_ptr<Engine>> Engine::create(std::unique_ptr<Model> model, const EngineOptions& opt) {
  NT_CHECK(model != nullptr);
  const ModelConfig& c = model->config();
  if (opt.n_batch < 1) return make_error("batch size -b must be at least 1 (got %d)", opt.n_batch);
  if (opt.n_ctx < 0) return make_error("context size -c must not be negative");
  for (DType t : {opt.cache_k, opt.cache_v})
    if (Status s = check_kv_cache_type(t, c.head_dim); !s) return s.error();
  KvLayout lay;
  lay.n_layer = c.n_layer;
  lay.n_head_kv = c.n_head_kv;
  lay.head_dim = c.head_dim;
  lay.k_type = opt.cache_k;
  lay.v_type = opt.cache_v;
  int64_t n_ctx = opt.n_ctx;
  bool capped = false;
  if (n_ctx == 0) {
    n_ctx = c.n_ctx_train;
    // Cap the default to half of the available memory, so a 128k-context model still starts.
    const uint64_t avail = available_memory_bytes();
    if (avail > 0) {
      const int64_t fit = static_cast<int64_t>(avail / 2 / lay.bytes_per_token());
      if (fit < n_ctx) {
        n_ctx = std::max<int64_t>(fit / lay.block_size * lay.block_size, lay.block_size);
        capped = true;
      }
    }
  }
  auto kv = KvCache::create(lay, n_ctx);
  if (!kv) return kv.error();
  int n_threads = opt.n_threads > 0 ? opt.n_threads : ThreadPool::default_threads();
  std::unique_ptr<Engine> e(new Engine(std::move(model), std::move(*kv), n_threads, n_ctx, opt.n_batch));
  e->ctx_capped_ = capped;
  return e;
}

int Engine::new_sequence() {
  int s = kv_.new_sequence();
  if (static_cast<size_t>(s) >= tokens_.size()) tokens_.resize(static_cast<size_t>(s) + 1);
  tokens_[static_cast<size_t>(s)].clear();
  return s;
}

void Engine::free_sequence(int seq) {
  kv_.free_sequence(seq);
  tokens_[static_cast<size_t>(seq)].clear();
}

const std::vector<int32_t>& Engine::seq_tokens(int seq) const { return tokens_.at(static_cast<size_t>(seq)); }

void Engine::truncate(int seq, int32_t n) {
  kv_.truncate(seq, n);
  auto& t = tokens_[static_cast<size_t>(seq)];
  if (static_cast<int64_t>(t.size()) > n) t.resize(static_cast<size_t>(std::max(n, 0)));
}

int32_t Engine::keep_common_prefix(int seq, const std::vector<int32_t>& tokens) {
  const auto& have = tokens_[static_cast<size_t>(seq)];
  size_t n = 0;
  while (n < have.size() && n < tokens.size() && have[n] == tokens[n]) ++n;
  // Invariant: at least one token of the new input is evaluated, to produce its logits.
  if (n == tokens.size() && n > 0) --n;
  truncate(seq, static_cast<int32_t>(n));
  return static_cast<int32_t>(n);
}

Result<const float*> Engine::append(int seq, const int32_t* tokens, int64_t n) {
  if (n <= 0) return make_error("nothing to evaluate");
  const float* last = nullptr;
  const int32_t start_len = seq_len(seq);
  for (int64_t done = 0; done < n;) {
    const int64_t chunk = std::min<int64_t>(n_batch_, n - done);
    auto r = step({SeqInput{seq, tokens + done, chunk, done + chunk == n}});
    if (!r) {
      truncate(seq, start_len);
      return r.error();
    }
    last = *r;
    done += chunk;
  }
  return last;
}

Result<const float*> Engine::step(const std::vector<SeqInput>& inputs) {
  const auto t0 = std::chrono::steady_clock::now();
  batch_.clear();
  int64_t n_out = 0;
  for (const auto& in : inputs) {
    const int32_t base = kv_.seq_len(in.seq);
    if (auto st = kv_.reserve(in.seq, static_cast<int32_t>(in.n)); !st) {
      for (const auto& u : inputs) kv_.truncate(u.seq, kv_.seq_len(u.seq));  // release reservations
      return Error{st.error().message + str_printf(" (context size -c is %lld)", static_cast<long long>(n_ctx_))};
    }
    for (int64_t i = 0; i < in.n; ++i)
      batch_.add(in.tokens[i], base + static_cast<int32_t>(i), in.seq, in.want_logits && i == in.n - 1);
    n_out += in.want_logits ? 1 : 0;
  }
  const int n_vocab = model_->config().n_vocab;
  if (static_cast<int64_t>(logits_.size()) < n_out * n_vocab) logits_.resize(static_cast<size_t>(n_out * n_vocab));
  if (auto st = model_->forward(batch_, kv_, pool_, scratch_, logits_.data()); !st) {
    for (const auto& u : inputs) kv_.truncate(u.seq, kv_.seq_len(u.seq));
    return st.error();
  }
  int64_t n_tok = 0;
  for (const auto& in : inputs) {
    kv_.set_len(in.seq, kv_.seq_len(in.seq) + static_cast<int32_t>(in.n));
    auto& hist = tokens_[static_cast<size_t>(in.seq)];
    hist.insert(hist.end(), in.tokens, in.tokens + in.n);
    n_tok += in.n;
  }
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (n_tok == static_cast<int64_t>(inputs.size())) {
    counters_.decode_tokens += n_tok;
    counters_.decode_seconds += dt;
  } else {
    counters_.prefill_tokens += n_tok;
    counters_.prefill_seconds += dt;
  }
  return static_cast<const float*>(logits_.data());
}

}  // namespace nt
