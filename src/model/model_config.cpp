#include "model/model_config.h"

#include <cmath>

#include "core/strings.h"
#include "model/model_shape.h"

namespace nt {

Result<ModelConfig> read_model_config(const GgufFile& f) {
  auto shape = read_model_shape(f);
  if (!shape) return shape.error();
  const ModelShape& sh = *shape;
  ModelConfig c;
  if (!sh.architecture)
    return make_error("%s: no general.architecture key (is this a vocab-only file?)", f.path().c_str());
  c.arch_name = *sh.architecture;
  const ArchInfo* arch = find_arch(c.arch_name);
  if (!arch)
    return make_error("%s: architecture '%s' is not supported (supported: %s)", f.path().c_str(),
                      c.arch_name.c_str(), supported_arch_names().c_str());
  c.arch = arch->arch;
  c.name = sh.name.value_or("");
  const std::string p = c.arch_name + ".";

  // Required keys: present and in a sane range (the shape reader already checked their types).
  auto req = [&](const std::optional<uint64_t>& v, const char* key, int& out, uint64_t hi) -> Status {
    if (!v) return make_error("%s: missing key '%s%s'", f.path().c_str(), p.c_str(), key);
    if (*v < 1 || *v > hi)
      return make_error("%s: key '%s%s' = %llu is out of range [1, %llu]", f.path().c_str(), p.c_str(), key,
                        static_cast<unsigned long long>(*v), static_cast<unsigned long long>(hi));
    out = static_cast<int>(*v);
    return {};
  };
  NT_TRY(req(sh.n_embd, "embedding_length", c.n_embd, 1 << 20));
  NT_TRY(req(sh.n_layer, "block_count", c.n_layer, 4096));
  NT_TRY(req(sh.n_head, "attention.head_count", c.n_head, 1 << 14));
  NT_TRY(req(sh.n_ff, "feed_forward_length", c.n_ff, 1 << 22));
  NT_TRY(req(sh.n_head_kv, "attention.head_count_kv", c.n_head_kv, 1 << 14));
  NT_TRY(req(sh.head_dim, "attention.key_length", c.head_dim, 1 << 14));
  if (c.n_head % c.n_head_kv != 0)
    return make_error("%s: head_count %d is not a multiple of head_count_kv %d", f.path().c_str(), c.n_head, c.n_head_kv);
  if (sh.head_dim_v && *sh.head_dim_v != static_cast<uint64_t>(c.head_dim))
    return make_error("%s: value_length %llu differs from key_length %d (not supported)", f.path().c_str(),
                      static_cast<unsigned long long>(*sh.head_dim_v), c.head_dim);
  c.n_ctx_train = 2048;
  if (sh.n_ctx_train) NT_TRY(req(sh.n_ctx_train, "context_length", c.n_ctx_train, 1u << 30));
  // n_vocab comes from token_embd's shape in the loader (the tokenizer may pad differently).
  if (sh.rms_eps) c.rms_eps = static_cast<float>(*sh.rms_eps);

  RopeParams& r = c.rope;
  r.style = arch->rope;
  r.n_rot = c.head_dim;
  if (sh.rope_dims) NT_TRY(req(sh.rope_dims, "rope.dimension_count", r.n_rot, static_cast<uint64_t>(c.head_dim)));
  if (r.n_rot % 2 != 0) return make_error("%s: rope.dimension_count %d must be even", f.path().c_str(), r.n_rot);
  r.freq_base = static_cast<float>(sh.rope_freq_base.value_or(10000.0));
  if (!(r.freq_base > 0)) return make_error("%s: rope.freq_base must be positive", f.path().c_str());
  const std::string scaling = sh.rope_scaling_type.value_or("none");
  const double factor = sh.rope_scaling_factor.value_or(0.0);
  if (scaling == "linear" || scaling == "yarn" || scaling == "longrope") {
    if (factor > 0) r.freq_scale = static_cast<float>(1.0 / factor);
  } else if (scaling != "none" && !scaling.empty()) {
    return make_error("%s: rope scaling type '%s' is not supported (none, linear, yarn, longrope)", f.path().c_str(),
                      scaling.c_str());
  }
  // Multiplies cos and sin whatever the scaling (LongRoPE files state it; YaRN adds its own mscale).
  r.attn_factor = static_cast<float>(f.get_f64(p + "rope.scaling.attn_factor").value_or(1.0));
  r.n_ctx_orig = static_cast<int>(sh.rope_scaling_orig_ctx.value_or(static_cast<uint64_t>(c.n_ctx_train)));
  if (scaling == "yarn") {
    r.ext_factor = 1.0f;
    r.beta_fast = static_cast<float>(f.get_f64(p + "rope.scaling.yarn_beta_fast").value_or(32.0));
    r.beta_slow = static_cast<float>(f.get_f64(p + "rope.scaling.yarn_beta_slow").value_or(1.0));
  }
  c.rope_swa = r;
  if (arch->read_config) NT_TRY(arch->read_config(f, c));
  return c;
}

}  // namespace nt
