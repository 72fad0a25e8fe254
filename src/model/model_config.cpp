#include "model/model_config.h"

#include <cmath>

#include "core/strings.h"

namespace nt {

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> k = {"llama", "qwen2", "qwen3"};
  return k;
}

Result<ModelConfig> read_model_config(const GgufFile& f) {
  ModelConfig c;
  auto arch = f.get_str("general.architecture");
  if (!arch) return make_error("%s: no general.architecture key (is this a vocab-only file?)", f.path().c_str());
  c.arch_name = std::string(*arch);
  if (c.arch_name == "llama") c.arch = Arch::Llama;
  else if (c.arch_name == "qwen2") c.arch = Arch::Qwen2;
  else if (c.arch_name == "qwen3") c.arch = Arch::Qwen3;
  else
    return make_error("%s: architecture '%s' is not supported (supported: llama, qwen2, qwen3)",
                      f.path().c_str(), c.arch_name.c_str());
  c.name = std::string(f.get_str("general.name").value_or(""));
  const std::string p = c.arch_name + ".";

  auto req = [&](const char* key, int& out, int lo, int hi) -> Status {
    auto v = f.get_u64(p + key);
    if (!v) return make_error("%s: missing or non-integer key '%s%s'", f.path().c_str(), p.c_str(), key);
    if (*v < static_cast<uint64_t>(lo) || *v > static_cast<uint64_t>(hi))
      return make_error("%s: key '%s%s' = %llu is out of range [%d, %d]", f.path().c_str(), p.c_str(), key,
                        static_cast<unsigned long long>(*v), lo, hi);
    out = static_cast<int>(*v);
    return {};
  };
  NT_TRY(req("embedding_length", c.n_embd, 1, 1 << 20));
  NT_TRY(req("block_count", c.n_layer, 1, 4096));
  NT_TRY(req("attention.head_count", c.n_head, 1, 1 << 14));
  NT_TRY(req("feed_forward_length", c.n_ff, 1, 1 << 22));
  c.n_head_kv = c.n_head;
  if (f.find(p + "attention.head_count_kv")) NT_TRY(req("attention.head_count_kv", c.n_head_kv, 1, 1 << 14));
  if (c.n_head % c.n_head_kv != 0)
    return make_error("%s: head_count %d is not a multiple of head_count_kv %d", f.path().c_str(), c.n_head, c.n_head_kv);
  if (f.find(p + "attention.key_length")) {
    NT_TRY(req("attention.key_length", c.head_dim, 1, 1 << 14));
  } else {
    if (c.n_embd % c.n_head != 0)
      return make_error("%s: embedding_length %d is not a multiple of head_count %d", f.path().c_str(), c.n_embd, c.n_head);
    c.head_dim = c.n_embd / c.n_head;
  }
  if (f.find(p + "attention.value_length")) {
    int vl = 0;
    NT_TRY(req("attention.value_length", vl, 1, 1 << 14));
    if (vl != c.head_dim)
      return make_error("%s: value_length %d differs from key_length %d (not supported)", f.path().c_str(), vl, c.head_dim);
  }
  c.n_ctx_train = 2048;
  if (f.find(p + "context_length")) NT_TRY(req("context_length", c.n_ctx_train, 1, 1 << 30));
  c.n_vocab = 0;
  if (f.find(p + "vocab_size")) NT_TRY(req("vocab_size", c.n_vocab, 1, 1 << 24));
  if (auto eps = f.get_f64(p + "attention.layer_norm_rms_epsilon")) c.rms_eps = static_cast<float>(*eps);

  RopeParams& r = c.rope;
  r.style = c.arch == Arch::Llama ? RopeStyle::Normal : RopeStyle::NeoX;
  r.n_rot = c.head_dim;
  if (f.find(p + "rope.dimension_count")) NT_TRY(req("rope.dimension_count", r.n_rot, 2, c.head_dim));
  if (r.n_rot % 2 != 0) return make_error("%s: rope.dimension_count %d must be even", f.path().c_str(), r.n_rot);
  r.freq_base = static_cast<float>(f.get_f64(p + "rope.freq_base").value_or(10000.0));
  if (!(r.freq_base > 0)) return make_error("%s: rope.freq_base must be positive", f.path().c_str());
  std::string scaling(f.get_str(p + "rope.scaling.type").value_or("none"));
  double factor = f.get_f64(p + "rope.scaling.factor").value_or(0.0);
  if (scaling == "linear" || scaling == "yarn") {
    if (factor > 0) r.freq_scale = static_cast<float>(1.0 / factor);
  } else if (scaling != "none" && !scaling.empty()) {
    return make_error("%s: rope scaling type '%s' is not supported (none, linear, yarn)", f.path().c_str(), scaling.c_str());
  }
  r.n_ctx_orig = static_cast<int>(f.get_u64(p + "rope.scaling.original_context_length").value_or(static_cast<uint64_t>(c.n_ctx_train)));
  if (scaling == "yarn") {
    r.ext_factor = 1.0f;
    r.attn_factor = static_cast<float>(f.get_f64(p + "rope.scaling.attn_factor").value_or(1.0));
    r.beta_fast = static_cast<float>(f.get_f64(p + "rope.scaling.yarn_beta_fast").value_or(32.0));
    r.beta_slow = static_cast<float>(f.get_f64(p + "rope.scaling.yarn_beta_slow").value_or(1.0));
  }
  c.qkv_bias = c.arch == Arch::Qwen2;
  c.qk_norm = c.arch == Arch::Qwen3;
  return c;
}

}  // namespace nt
