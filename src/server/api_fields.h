// server/api_fields.h — internal to the request parser (api_request.cpp, api_sampling.cpp,
// api_error.cpp): typed reads of optional body fields whose errors start with the field's name,
// and the table of parameter names an error message may start with.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <nlohmann/json.hpp>
#include "core/result.h"
#include "sampling/sampler.h"

namespace nt::server::detail {

using Json = nlohmann::ordered_json;

// Every body field the parser reads (and the sampler's API names): the names to_api_error accepts
// as `param` at the start of a message. Paths into them ("messages[2].role") count too.
std::span<const std::string_view> param_names();

// The field's value, or nullptr when it is absent or null (OpenAI treats null as "not given").
const Json* field(const Json& body, const char* name);
// A short display of a value for an error message ("\"hot\"", "1.5", "[1,2,...").
std::string show(const Json& v);
// "NAME: WHAT (got VALUE)"
Error field_error(std::string_view name, std::string_view what, const Json& got);

// An integral JSON number (integers, or floats with an integral value) inside [lo, hi].
std::optional<int64_t> as_int(const Json& v, int64_t lo, int64_t hi);
// A finite JSON number (never a string or a bool).
std::optional<double> as_number(const Json& v);

// Each reads an optional field: absent/null leaves *out unchanged; a wrong type or range is an
// error "NAME: must be ...".
Status read_bool(const Json& body, const char* name, bool* out);
Status read_int(const Json& body, const char* name, int64_t lo, int64_t hi, int64_t* out);
Status read_float(const Json& body, const char* name, double lo, double hi, std::string_view range,
                  float* out);

// The sampling fields (temperature ... logit_bias, seed) into p, then nt::validate(p).
Status parse_sampling(const Json& body, SamplerParams* p);

}  // namespace nt::server::detail
