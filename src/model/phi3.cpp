// model/phi3.cpp — the phi3 architecture (Phi-3, Phi-3.5, Phi-4-mini): fused attn_qkv and gate/up
// weights (split into views by the shared loader), partial rotary dimensions (rope.dimension_count,
// read by the shared config), and LongRoPE: per-frequency divisors rope_factors_long / _short,
// the long ones for a sequence context beyond rope.scaling.original_context_length (the forward
// pass chooses, as llama.cpp does), with rope.scaling.attn_factor scaling cos and sin.
// A sliding_window key is ignored, as llama.cpp ignores it for this architecture.
#include "model/architectures.h"

namespace nt {

Status phi3_load_model(const WeightLoader& wl, const ModelConfig& c, ModelWeights& w) {
  const int64_t n = c.rope.n_rot / 2;
  auto load = [&](const char* name, std::vector<float>& out) -> Status {
    if (!wl.has(name)) return {};
    auto r = wl.vector(name, n);
    if (!r) return r.error();
    out.assign(*r, *r + n);
    return {};
  };
  NT_TRY(load("rope_factors_long.weight", w.rope_long));
  NT_TRY(load("rope_factors_short.weight", w.rope_short));
  return {};
}

}  // namespace nt
