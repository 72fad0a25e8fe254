// template/value.h — the Jinja engine's runtime values, modelled on the Python objects Jinja2
// works with: Undefined, None, bool, int, float, str, list/tuple, dict, namespace, loop, callables.
// Owns: Python semantics of these values (truthiness, ==, ordering, str(), repr(), JSON in/out).
// Must not know: templates' syntax, rendering, models.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace nt::jinja {

// A template runtime error (internal to the engine; the API turns it into Result errors).
struct TemplateError : std::runtime_error {
  enum class Kind { Runtime, Raised, Undefined, Security, Limit };
  TemplateError(Kind k, const std::string& msg) : std::runtime_error(msg), kind(k) {}
  Kind kind;
  bool located = false;  // already carries "name:line:col"
};
[[noreturn]] void throw_error(const std::string& msg);
[[noreturn]] void throw_type_error(const std::string& msg);

// Deepest container nesting a template may build (lists in lists ...): keeps every recursive
// walk (repr, ==, tojson, destruction) far from the stack's end.
constexpr uint32_t kMaxNesting = 400;

enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Loop, Func };

struct Value;
struct Dict;
struct LoopState;
struct Callable;
using List = std::vector<Value>;

struct Value {
  Kind kind = Kind::Undefined;
  bool b = false;        // Bool; List: is a tuple; Dict: is a namespace; String: is Markup
                         // (|safe: `+` HTML-escapes plain operands); Undefined: unsafe access
  int64_t i = 0;         // Int; List: 1 = a lazy generator (map/select/... results)
  double f = 0;          // Float
  std::string s;         // String; for Undefined: the hint ("'x' is undefined")
  std::shared_ptr<void> p;  // List / Dict / LoopState / Callable
  uint32_t depth = 0;       // container nesting (bounded: kMaxNesting), so no recursion overflows

  Value() = default;
  static Value undefined(std::string hint = "") { Value v; v.s = std::move(hint); return v; }
  static Value none() { Value v; v.kind = Kind::None; return v; }
  static Value boolean(bool x) { Value v; v.kind = Kind::Bool; v.b = x; return v; }
  static Value integer(int64_t x) { Value v; v.kind = Kind::Int; v.i = x; return v; }
  static Value number(double x) { Value v; v.kind = Kind::Float; v.f = x; return v; }
  static Value string(std::string x) { Value v; v.kind = Kind::String; v.s = std::move(x); return v; }
  static Value list(List items = {}, bool tuple = false);
  static Value generator(List items) { Value v = list(std::move(items)); v.i = 1; return v; }
  static Value markup(std::string x) { Value v = string(std::move(x)); v.b = true; return v; }
  static Value dict(bool namespace_ = false);
  // Recomputes `depth` of a List/Dict from its elements; throws a limit error past kMaxNesting.
  void update_depth();
  static Value func(std::shared_ptr<Callable> c) { Value v; v.kind = Kind::Func; v.p = std::move(c); return v; }

  bool is_undefined() const { return kind == Kind::Undefined; }
  bool is_none() const { return kind == Kind::None; }
  bool is_string() const { return kind == Kind::String; }
  bool is_list() const { return kind == Kind::List; }
  bool is_tuple() const { return kind == Kind::List && b; }
  bool is_generator() const { return kind == Kind::List && i == 1; }
  bool is_markup() const { return kind == Kind::String && b; }
  bool is_dict() const { return kind == Kind::Dict; }
  bool is_namespace() const { return kind == Kind::Dict && b; }
  bool is_int() const { return kind == Kind::Int || kind == Kind::Bool; }  // Python: bool is an int
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  List& items() const { return *static_cast<List*>(p.get()); }
  Dict& map() const { return *static_cast<Dict*>(p.get()); }
  LoopState& loop() const { return *static_cast<LoopState*>(p.get()); }
  Callable& callable() const { return *static_cast<Callable*>(p.get()); }

  int64_t as_int() const { return kind == Kind::Bool ? (b ? 1 : 0) : i; }
  double as_double() const { return kind == Kind::Float ? f : static_cast<double>(as_int()); }
};

// Insertion-ordered dict (Python 3.7+ dict semantics). Keys are str/int/bool/none/float values.
struct Dict {
  std::vector<std::pair<Value, Value>> entries;
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(const Value& key, Value value);
  void set(std::string_view key, Value value) { set(Value::string(std::string(key)), std::move(value)); }
};

struct LoopState {
  std::shared_ptr<List> seq;  // the iterated items (after `if` filtering)
  int64_t index0 = 0;
  int64_t depth0 = 0;
  Value changed_last;  // for loop.changed()
  bool changed_seen = false;
};

struct Args {
  std::vector<Value> pos;
  std::vector<std::pair<std::string, Value>> kw;
  const Value* get_kw(std::string_view name) const;
};

class Interp;
struct Callable {
  std::string name;
  std::function<Value(Interp&, Args&)> fn;
};
inline Value make_func(std::string name, std::function<Value(Interp&, Args&)> fn) {
  auto c = std::make_shared<Callable>();
  c->name = std::move(name);
  c->fn = std::move(fn);
  return Value::func(std::move(c));
}

// Python semantics.
bool truthy(const Value& v);
bool equals(const Value& a, const Value& b);
// -1 / 0 / 1 as Python's <; throws TypeError for unorderable operands.
int compare(const Value& a, const Value& b);
std::string type_name(const Value& v);  // Python's type name: 'str', 'dict', 'NoneType'...
std::string to_str(const Value& v);     // str(v) (Undefined -> "")
std::string repr(const Value& v);       // repr(v)
std::string float_repr(double x);       // Python float repr: 1.0, 0.1, 1e+20, inf, nan
std::string repr_string(std::string_view s);

// JSON <-> Value.
Value from_json(const nlohmann::json& j);
Value from_json(const nlohmann::ordered_json& j);
struct JsonDumpOptions {
  int indent = -1;           // <0: none
  std::string indent_str;    // used when indent_is_str
  bool indent_is_str = false;
  std::string item_sep = ", ", key_sep = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;
};
// json.dumps(v, ...). Throws TypeError for values JSON cannot hold.
void dump_json(const Value& v, const JsonDumpOptions& o, std::string& out, int level = 0);

// UTF-8 helpers (Python str is a sequence of code points).
size_t utf8_length(std::string_view s);
std::vector<std::string_view> utf8_chars(std::string_view s);
bool is_ascii(std::string_view s);

}  // namespace nt::jinja
