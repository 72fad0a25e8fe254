// kv/recurrent_state.cpp — per-sequence recurrent states (see recurrent_state.h).
#include "kv/recurrent_state.h"

#include <algorithm>

#include "core/check.h"

namespace nt {

RecurrentStatePool::Slot& RecurrentStatePool::slot(int seq) {
  NT_CHECK(seq >= 0);
  if (static_cast<size_t>(seq) >= slots_.size()) slots_.resize(static_cast<size_t>(seq) + 1);
  Slot& s = slots_[static_cast<size_t>(seq)];
  if (!s.data) {
    s.data = std::make_unique<float[]>(static_cast<size_t>(floats_per_seq_));  // zeroed
    s.pos = 0;
  }
  return s;
}

float* RecurrentStatePool::state(int seq) { return slot(seq).data.get(); }
int32_t* RecurrentStatePool::pos(int seq) { return &slot(seq).pos; }

void RecurrentStatePool::release(int seq) {
  if (seq >= 0 && static_cast<size_t>(seq) < slots_.size()) slots_[static_cast<size_t>(seq)] = Slot{};
}

void RecurrentStatePool::retain_only(std::span<const int> live) {
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].data && std::find(live.begin(), live.end(), static_cast<int>(i)) == live.end()) slots_[i] = Slot{};
}

int RecurrentStatePool::n_live() const {
  int n = 0;
  for (const Slot& s : slots_) n += s.data != nullptr;
  return n;
}

}  // namespace nt
