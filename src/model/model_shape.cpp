// model/model_shape.cpp — ModelShape from GGUF metadata (see model_shape.h).
#include "model/model_shape.h"

#include <algorithm>

#include "core/strings.h"
#include "model/kv_store.h"

namespace nt {

namespace {

// An unsigned integer key, or the max of an integer array (per-layer values); nullopt when absent.
Result<std::optional<uint64_t>> get_count(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (!v) return std::optional<uint64_t>();
  if (v->is_integer()) {
    if (v->i64 < 0 && v->type != GgufType::UINT64)
      return make_error("%s: metadata '%s' is negative (%lld)", f.path().c_str(), key.c_str(),
                        static_cast<long long>(v->i64));
    return std::optional<uint64_t>(v->u64);
  }
  if (v->is_array() && v->n > 0 && v->raw && v->elem_type != GgufType::FLOAT32 &&
      v->elem_type != GgufType::FLOAT64 && v->elem_type != GgufType::STRING &&
      v->elem_type != GgufType::ARRAY) {
    int64_t m = 0;
    for (uint64_t i = 0; i < v->n; ++i) m = std::max(m, v->int_at(i));
    return std::optional<uint64_t>(static_cast<uint64_t>(m));
  }
  return make_error("%s: metadata '%s' should be an integer, found %s", f.path().c_str(), key.c_str(),
                    gguf_type_name(v->type));
}

Result<std::optional<double>> get_number(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (!v) return std::optional<double>();
  if (!v->is_number())
    return make_error("%s: metadata '%s' should be a number, found %s", f.path().c_str(), key.c_str(),
                      gguf_type_name(v->type));
  return std::optional<double>(v->f64);
}

std::optional<std::string> get_string(const GgufFile& f, const std::string& key) {
  auto s = f.get_str(key);
  if (!s) return std::nullopt;
  return std::string(*s);
}

}  // namespace

#define NT_ASSIGN(dst, expr)         \
  do {                               \
    auto nt_r_ = (expr);             \
    if (!nt_r_) return nt_r_.error(); \
    dst = *nt_r_;                    \
  } while (0)

Result<ModelShape> read_model_shape(const GgufFile& f) {
  ModelShape s;
  s.architecture = get_string(f, "general.architecture");
  s.name = get_string(f, "general.name");
  s.tokenizer_model = get_string(f, "tokenizer.ggml.model");
  if (const GgufValue* toks = f.get_array("tokenizer.ggml.tokens")) s.n_vocab = toks->n;

  for (const auto& t : f.tensors()) {
    s.n_params += t.n_elements();
    s.weight_bytes += t.n_bytes;
  }
  s.n_tensors = f.tensors().size();

  if (s.architecture) {
    const std::string a = *s.architecture + ".";
    NT_ASSIGN(s.n_ctx_train, get_count(f, a + "context_length"));
    NT_ASSIGN(s.n_layer, get_count(f, a + "block_count"));
    NT_ASSIGN(s.n_embd, get_count(f, a + "embedding_length"));
    NT_ASSIGN(s.n_head, get_count(f, a + "attention.head_count"));
    NT_ASSIGN(s.n_head_kv, get_count(f, a + "attention.head_count_kv"));
    NT_ASSIGN(s.head_dim, get_count(f, a + "attention.key_length"));
    NT_ASSIGN(s.head_dim_v, get_count(f, a + "attention.value_length"));
    NT_ASSIGN(s.n_ff, get_count(f, a + "feed_forward_length"));
    NT_ASSIGN(s.rms_eps, get_number(f, a + "attention.layer_norm_rms_epsilon"));
    NT_ASSIGN(s.rope_freq_base, get_number(f, a + "rope.freq_base"));
    NT_ASSIGN(s.rope_dims, get_count(f, a + "rope.dimension_count"));
    s.rope_scaling_type = get_string(f, a + "rope.scaling.type");
    NT_ASSIGN(s.rope_scaling_factor, get_number(f, a + "rope.scaling.factor"));
    NT_ASSIGN(s.rope_scaling_orig_ctx, get_count(f, a + "rope.scaling.original_context_length"));
    if (!s.n_vocab) NT_ASSIGN(s.n_vocab, get_count(f, a + "vocab_size"));

    if (s.n_head && *s.n_head == 0)
      return make_error("%s: %sattention.head_count is 0", f.path().c_str(), a.c_str());
    if (s.n_head && !s.n_head_kv) s.n_head_kv = s.n_head;
    if (!s.head_dim && s.n_embd && s.n_head) {
      if (*s.n_embd % *s.n_head != 0)
        return make_error("%s: n_embd %llu is not a multiple of n_head %llu and no %sattention.key_length is given",
                          f.path().c_str(), static_cast<unsigned long long>(*s.n_embd),
                          static_cast<unsigned long long>(*s.n_head), a.c_str());
      s.head_dim = *s.n_embd / *s.n_head;
    }
    if (!s.head_dim_v) s.head_dim_v = s.head_dim;
  }
  return s;
}

std::optional<uint64_t> ModelShape::kv_bytes_per_token(DType k_type, DType v_type) const {
  if (!n_layer || !n_head_kv || !head_dim || !head_dim_v) return std::nullopt;
  return nt::kv_bytes_per_token(*n_layer, *n_head_kv, *head_dim, *head_dim_v, k_type, v_type);
}

}  // namespace nt
