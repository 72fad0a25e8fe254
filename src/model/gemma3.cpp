// model/gemma3.cpp — the gemma3 architecture's metadata: GELU-gated FFN, embeddings scaled by
// sqrt(n_embd), the attention scale (1/sqrt(head_dim); 1/sqrt(n_embd/n_head) for the 62-layer
// 27B, as llama.cpp and gemma_pytorch decide), optional final logit soft-capping, and
// sliding-window layers: attention.sliding_window positions, on the layers that
// attention.sliding_window_pattern marks (an array of flags, or a period P: every layer but each
// P-th; default 6), rotating with rope.freq_base_swa (default 10000) and no frequency scaling.
// Q/K norms and the post-norms are this architecture's layer vectors (arch_table.cpp).
#include <cmath>

#include "core/strings.h"
#include "model/architectures.h"

namespace nt {

Status gemma3_read_config(const GgufFile& f, ModelConfig& c) {
  const std::string p = c.arch_name + ".";
  c.ffn_act = FfnAct::Gelu;
  c.embd_scale = std::sqrt(static_cast<float>(c.n_embd));
  c.attn_scale = c.n_layer == 62 ? 1.0f / std::sqrt(static_cast<float>(c.n_embd / c.n_head))
                                 : 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const double cap = f.get_f64(p + "final_logit_softcapping").value_or(0.0);
  if (cap < 0) return make_error("%s: final_logit_softcapping %g must not be negative", f.path().c_str(), cap);
  c.final_logit_softcap = static_cast<float>(cap);

  const uint64_t n_swa = f.get_u64(p + "attention.sliding_window").value_or(0);
  if (n_swa == 0) return {};
  if (n_swa > (uint64_t(1) << 30))
    return make_error("%s: attention.sliding_window %llu is out of range", f.path().c_str(),
                      static_cast<unsigned long long>(n_swa));
  c.n_swa = static_cast<int>(n_swa);
  c.swa_layers.assign(static_cast<size_t>(c.n_layer), 0);
  const std::string pat_key = p + "attention.sliding_window_pattern";
  if (const GgufValue* arr = f.get_array(pat_key)) {
    const GgufType et = arr->elem_type;
    const bool flags = et != GgufType::STRING && et != GgufType::ARRAY && et != GgufType::FLOAT32 && et != GgufType::FLOAT64;
    if (arr->n != static_cast<uint64_t>(c.n_layer) || !flags)
      return make_error("%s: %s must hold one flag per layer (%d)", f.path().c_str(), pat_key.c_str(), c.n_layer);
    for (int il = 0; il < c.n_layer; ++il)
      c.swa_layers[static_cast<size_t>(il)] = arr->elem_type == GgufType::BOOL ? arr->raw[il] != 0 : arr->int_at(uint64_t(il)) != 0;
  } else {
    const uint64_t period = f.get_u64(pat_key).value_or(6);
    for (int il = 0; il < c.n_layer; ++il)
      c.swa_layers[static_cast<size_t>(il)] = period == 0 || uint64_t(il) % period < period - 1;
  }
  c.rope_swa.freq_base = static_cast<float>(f.get_f64(p + "rope.freq_base_swa").value_or(10000.0));
  if (!(c.rope_swa.freq_base > 0)) return make_error("%s: rope.freq_base_swa must be positive", f.path().c_str());
  c.rope_swa.freq_scale = 1.0f;
  return {};
}

}  // namespace nt
