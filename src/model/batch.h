// model/batch.h — a batch of tokens for one forward pass, each with its own sequence and position
// (continuous batching mixes prefill chunks and decode steps of different sequences).
#pragma once

#include <cstdint>
#include <vector>

namespace nt {

struct Batch {
  std::vector<int32_t> tokens;  // [n_tokens]
  std::vector<int32_t> pos;     // [n_tokens] position of each token in its sequence
  std::vector<int32_t> seq;     // [n_tokens] KV-cache sequence id
  std::vector<uint8_t> logits;  // [n_tokens] 1 = produce logits for this token
  // Optional [n_tokens] (empty: no limit): recurrent layers prefill in chunked form only windows
  // ending at or before this position of the token's sequence (its prompt's end), so generated
  // tokens recomputed after a preemption go token by token, as they were decoded.
  std::vector<int32_t> chunked_until;

  void clear() { tokens.clear(); pos.clear(); seq.clear(); logits.clear(); chunked_until.clear(); }
  void add(int32_t token, int32_t p, int32_t s, bool want_logits) {
    tokens.push_back(token);
    pos.push_back(p);
    seq.push_back(s);
    logits.push_back(want_logits ? 1 : 0);
  }
  int64_t size() const { return static_cast<int64_t>(tokens.size()); }
  int64_t n_outputs() const {
    int64_t n = 0;
    for (uint8_t l : logits) n += l;
    return n;
  }
};

}  // namespace nt
