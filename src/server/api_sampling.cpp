// server/api_sampling.cpp — the sampling fields of a request body (llama-server's names and
// defaults; OpenAI's ranges where OpenAI has one) into nt::SamplerParams.
#include <cmath>
#include <limits>

#include "core/strings.h"
#include "server/api_fields.h"

namespace nt::server::detail {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A token id given as an object key: decimal digits only, 0..INT32_MAX.
std::optional<int32_t> token_key(const std::string& k) {
  if (k.empty() || k.size() > 10) return std::nullopt;
  int64_t v = 0;
  for (char c : k) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > kInt32Max) return std::nullopt;
  return static_cast<int32_t>(v);
}

// A bias: a number in [-100, 100] (OpenAI's range), or false (ban: -inf).
Status bias_value(const std::string& name, const Json& v, float* out) {
  if (v.is_boolean() && !v.get<bool>()) {
    *out = -std::numeric_limits<float>::infinity();
    return {};
  }
  std::optional<double> d = as_number(v);
  if (!d || *d < -100 || *d > 100)
    return field_error(name, "bias must be a number between -100 and 100, or false to ban the token", v);
  *out = static_cast<float>(*d);
  return {};
}

// {"15043": 1.5, "2": false} or llama.cpp's [[15043, 1.5], [2, false]].
Status parse_logit_bias(const Json& v, std::vector<LogitBias>* out) {
  out->clear();
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::optional<int32_t> id = token_key(it.key());
      if (!id)
        return field_error("logit_bias", "keys must be token ids (0..2147483647)", Json(it.key()));
      float b = 0;
      NT_TRY(bias_value("logit_bias[\"" + it.key() + "\"]", it.value(), &b));
      out->push_back({*id, b});
    }
    return {};
  }
  if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      const Json& e = v[i];
      const std::string name = "logit_bias[" + std::to_string(i) + "]";
      if (!e.is_array() || e.size() != 2)
        return field_error(name, "must be a [token_id, bias] pair", e);
      std::optional<int64_t> id = as_int(e[0], 0, kInt32Max);
      if (!id) return field_error(name, "token id must be an integer between 0 and 2147483647", e[0]);
      float b = 0;
      NT_TRY(bias_value(name, e[1], &b));
      out->push_back({static_cast<int32_t>(*id), b});
    }
    return {};
  }
  return field_error("logit_bias",
                     "must be an object {\"token_id\": bias} or an array [[token_id, bias], ...]", v);
}

// Any 64-bit value; -1 means a random seed (as does null or absence).
Status parse_seed(const Json& body, SamplerParams* p) {
  const Json* v = field(body, "seed");
  if (!v) return {};
  const char* what = "must be an integer (a 64-bit value; -1: random)";
  if (v->is_number_unsigned()) {
    p->seed = v->get<uint64_t>();
  } else if (v->is_number_integer()) {
    const int64_t s = v->get<int64_t>();
    if (s != -1) p->seed = static_cast<uint64_t>(s);
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!std::isfinite(d) || d != std::trunc(d) || d < -0x1p63 || d >= 0x1p64)
      return field_error("seed", what, *v);
    if (d == -1) return {};
    p->seed = d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
  } else {
    return field_error("seed", what, *v);
  }
  return {};
}

}  // namespace

Status parse_sampling(const Json& body, SamplerParams* p) {
  NT_TRY(read_float(body, "temperature", 0, kInf, ">= 0 (0: greedy)", &p->temp));
  NT_TRY(read_float(body, "top_p", 0, 1, "between 0 and 1", &p->top_p));
  NT_TRY(read_float(body, "min_p", 0, 1, "between 0 and 1", &p->min_p));
  NT_TRY(read_float(body, "typical_p", 0, 1, "between 0 and 1", &p->typical_p));
  NT_TRY(read_float(body, "repeat_penalty", 0, kInf, "> 0 (1: off)", &p->repeat_penalty));
  if (p->repeat_penalty <= 0)
    return field_error("repeat_penalty", "must be a number > 0 (1: off)", body.at("repeat_penalty"));
  NT_TRY(read_float(body, "presence_penalty", -2, 2, "between -2 and 2", &p->presence_penalty));
  NT_TRY(read_float(body, "frequency_penalty", -2, 2, "between -2 and 2", &p->frequency_penalty));
  int64_t top_k = p->top_k, last_n = p->repeat_last_n;
  NT_TRY(read_int(body, "top_k", kInt32Min, kInt32Max, &top_k));
  NT_TRY(read_int(body, "repeat_last_n", -1, kInt32Max, &last_n));
  p->top_k = static_cast<int>(top_k);
  p->repeat_last_n = static_cast<int>(last_n);
  NT_TRY(parse_seed(body, p));
  if (const Json* lb = field(body, "logit_bias")) NT_TRY(parse_logit_bias(*lb, &p->logit_bias));
  return validate(*p);
}

}  // namespace nt::server::detail
