// engine/engine_lowlevel.cpp — the Engine's sequences outside the scheduler (bench, model tests).
#include <algorithm>

#include "core/check.h"
#include "core/strings.h"
#include "engine/engine.h"

namespace nt {

int Engine::new_seq() {
  const int s = kv_->new_seq();
  if (static_cast<size_t>(s) >= ll_tokens_.size()) ll_tokens_.resize(static_cast<size_t>(s) + 1);
  ll_tokens_[static_cast<size_t>(s)].clear();
  ll_live_.push_back(s);
  return s;
}

void Engine::free_seq(int seq) {
  kv_->free_seq(seq);
  ll_tokens_.at(static_cast<size_t>(seq)).clear();
  std::erase(ll_live_, seq);
  if (rs_) rs_->release(seq);
}

void Engine::ll_truncate(int seq, int32_t n) {
  kv_->truncate(seq, std::min(n, kv_->seq_len(seq)));
  // The cache may keep less than asked (a sliding window's evicted block empties it): follow it.
  n = std::min(n, kv_->seq_len(seq));
  auto& t = ll_tokens_.at(static_cast<size_t>(seq));
  if (static_cast<int64_t>(t.size()) > n) t.resize(static_cast<size_t>(std::max(n, 0)));
}

Result<const float*> Engine::eval(int seq, const int32_t* tokens, int64_t n) {
  if (n <= 0) return make_error(ErrorKind::Internal, "nothing to evaluate");
  const float* last = nullptr;
  const int32_t start_len = seq_len(seq);
  for (int64_t done = 0; done < n;) {
    const int64_t chunk = std::min<int64_t>(n_batch_, n - done);
    auto r = eval_batch({SeqInput{seq, tokens + done, chunk, done + chunk == n}});
    if (!r) {
      ll_truncate(seq, start_len);
      return r.error();
    }
    last = *r;
    done += chunk;
  }
  return last;
}

Result<const float*> Engine::eval_batch(const std::vector<SeqInput>& inputs) {
  auto release = [&] {  // drops the reservations made so far
    for (const auto& u : inputs) kv_->truncate(u.seq, kv_->seq_len(u.seq));
  };
  batch_.clear();
  int64_t n_out = 0;
  for (const auto& in : inputs) {
    const int32_t base = kv_->seq_len(in.seq);
    if (Status st = kv_->reserve(in.seq, static_cast<int32_t>(in.n)); !st) {
      release();
      return make_error(ErrorKind::Capacity,
                        "KV cache full: a sequence of %d tokens cannot take %lld more (the cache holds %lld tokens "
                        "in all)",
                        base, static_cast<long long>(in.n), static_cast<long long>(kv_->capacity_tokens()));
    }
    for (int64_t i = 0; i < in.n; ++i)
      batch_.add(in.tokens[i], base + static_cast<int32_t>(i), in.seq, in.want_logits && i == in.n - 1);
    n_out += in.want_logits ? 1 : 0;
  }
  const int n_vocab = config().n_vocab;
  if (static_cast<int64_t>(logits_.size()) < n_out * n_vocab) logits_.resize(static_cast<size_t>(n_out * n_vocab));
  if (Status st = fm_->forward(batch_, kv_store(), pool_, logits_.data()); !st) {
    release();
    return st.error();
  }
  for (const auto& in : inputs) {
    auto& hist = ll_tokens_.at(static_cast<size_t>(in.seq));
    hist.insert(hist.end(), in.tokens, in.tokens + in.n);
    kv_->commit(in.seq, hist, static_cast<int32_t>(in.n));
  }
  return static_cast<const float*>(logits_.data());
}

}  // namespace nt
