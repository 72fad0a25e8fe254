// server/api_fields.cpp — see api_fields.h.
#include "server/api_fields.h"

#include <cmath>
#include <limits>

#include "core/strings.h"

namespace nt::server::detail {

std::span<const std::string_view> param_names() {
  static constexpr std::string_view kNames[] = {
      "model", "messages", "prompt", "stream", "stream_options", "max_tokens",
      "max_completion_tokens", "temperature", "top_p", "top_k", "min_p", "typical_p",
      "repeat_penalty", "repeat_last_n", "presence_penalty", "frequency_penalty", "seed",
      "logit_bias", "stop", "n", "ignore_eos", "logprobs", "top_logprobs", "truncate",
      "response_format", "tools", "chat_template_kwargs", "echo",
  };
  return kNames;
}

const Json* field(const Json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string show(const Json& v) {
  constexpr size_t kMax = 48;
  std::string s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > kMax) {
    size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // whole chars
    s = s.substr(0, cut) + "...";
  }
  return s;
}

Error field_error(std::string_view name, std::string_view what, const Json& got) {
  return make_error("%.*s: %.*s (got %s)", static_cast<int>(name.size()), name.data(),
                    static_cast<int>(what.size()), what.data(), show(got).c_str());
}

std::optional<int64_t> as_int(const Json& v, int64_t lo, int64_t hi) {
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    x = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    // [-2^63, 2^63) converts exactly; anything else is out of every int64 range.
    if (!std::isfinite(d) || d != std::trunc(d) || d < -0x1p63 || d >= 0x1p63) return std::nullopt;
    x = static_cast<int64_t>(d);
  } else {
    return std::nullopt;
  }
  if (x < lo || x > hi) return std::nullopt;
  return x;
}

std::optional<double> as_number(const Json& v) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

Status read_bool(const Json& body, const char* name, bool* out) {
  const Json* v = field(body, name);
  if (!v) return {};
  if (!v->is_boolean()) return field_error(name, "must be true or false", *v);
  *out = v->get<bool>();
  return {};
}

Status read_int(const Json& body, const char* name, int64_t lo, int64_t hi, int64_t* out) {
  const Json* v = field(body, name);
  if (!v) return {};
  std::optional<int64_t> x = as_int(*v, lo, hi);
  if (!x) {
    std::string what;
    if (hi == std::numeric_limits<int64_t>::max())
      what = str_printf("must be an integer >= %lld", static_cast<long long>(lo));
    else
      what = str_printf("must be an integer between %lld and %lld", static_cast<long long>(lo),
                        static_cast<long long>(hi));
    return field_error(name, what, *v);
  }
  *out = *x;
  return {};
}

Status read_float(const Json& body, const char* name, double lo, double hi, std::string_view range,
                  float* out) {
  const Json* v = field(body, name);
  if (!v) return {};
  std::optional<double> d = as_number(*v);
  // The float conversion below needs the value inside float's range.
  const double fmax = std::numeric_limits<float>::max();
  if (!d || *d < lo || *d > hi || *d < -fmax || *d > fmax)
    return field_error(name, std::string("must be a number ") + std::string(range), *v);
  *out = static_cast<float>(*d);
  return {};
}

}  // namespace nt::server::detail
