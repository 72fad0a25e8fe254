// template/interp.h — the Jinja interpreter: scopes, statement execution, expression evaluation,
// and the registries of filters, tests, methods and globals (Jinja2 + HF sandbox semantics).
// Owns: render-time state and limits. Must not know: models, GGUF, tokenizers.
#pragma once

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "template/ast.h"
#include "template/chat_template.h"
#include "template/strutil.h"
#include "template/value.h"

namespace nt::jinja {

struct Frame {
  std::shared_ptr<Frame> parent;
  std::vector<std::pair<std::string, Value>> vars;
  const Value* lookup(std::string_view name) const;
  void set(const std::string& name, Value v);
};

enum class Flow : uint8_t { Normal, Break, Continue };

class Interp {
 public:
  Interp(const Program& prog, const ChatTemplateLimits& limits, const std::tm& now);

  // Renders the program with `context` (a dict value) as the template's variables.
  std::string render(const Value& context);

  Value eval(const Expr& e);
  Flow exec(const Body& body);

  // Runtime helpers shared by filters/tests/methods (ops.cpp, filters.cpp, ...).
  Value getattr(const Value& obj, const std::string& name);
  Value getitem(const Value& obj, const Value& key);
  Value call(const Value& fn, Args& args);
  Value apply_filter(const std::string& name, const Value& subject, Args& args);
  bool apply_test(const std::string& name, const Value& subject, Args& args);
  // Method call obj.name(args); sets `found` false when obj has no such method.
  Value call_method(const Value& obj, const std::string& name, Args& args, bool& found);
  std::vector<Value> iterate(const Value& v);  // Python iter() materialized
  void check_string(size_t n) const;
  void check_collection(size_t n) const;
  void step() {
    if (++steps_ > limits_.max_steps) limit_error("the template ran too many steps (> " + std::to_string(limits_.max_steps) + ")");
  }
  [[noreturn]] void limit_error(const std::string& msg) const;
  const std::tm& now() const { return now_; }

 private:
  friend struct InterpAccess;
  Value eval_inner(const Expr& e);
  Value eval_call(const Expr& e);
  Value eval_binary(const Expr& e);
  Value eval_compare(const Expr& e);
  Flow exec_stmt(const Stmt& s);
  Flow exec_for(const Stmt& s);
  bool reaches(const Value& v, const void* target);
  void exec_set(const std::vector<std::string>& targets, Value v);
  Value call_macro(const Stmt& macro, const std::shared_ptr<Frame>& defined_in, Args& args);
  Value lookup(const std::string& name);
  std::string capture(const Body& body);
  void emit(std::string_view s);
  [[noreturn]] void rethrow_located(const std::exception& ex, uint32_t pos, uint32_t end);

  const Program& prog_;
  const ChatTemplateLimits& limits_;
  std::tm now_;
  std::shared_ptr<Frame> frame_;
  std::string* out_ = nullptr;
  uint64_t steps_ = 0;
  uint32_t call_depth_ = 0;
};

// Registries (filters.cpp, tests.cpp, methods.cpp, globals.cpp).
bool run_filter(Interp& in, const std::string& name, const Value& v, Args& args, Value& result);
bool run_test(Interp& in, const std::string& name, const Value& v, Args& args, bool& result);
bool run_method(Interp& in, const Value& obj, const std::string& name, Args& args, Value& result);
bool is_mutating_method(const Value& obj, const std::string& name);
bool has_method(const Value& obj, const std::string& name);
Value global_function(const std::string& name);  // Undefined when not a global

// Python helpers used across files.
Value py_add(Interp& in, const Value& a, const Value& b);
bool py_in(const Value& item, const Value& container);
std::string py_format(Interp& in, const std::string& fmt, Args& args);     // str.format
std::string py_percent(Interp& in, const std::string& fmt, const Value& args);  // "fmt" % args


Value py_slice(const Value& v, const Value& start, const Value& stop, const Value& step);
[[noreturn]] void undefined_error(const Value& undef);
std::string html_escape(std::string_view s);  // Markup's escape: & < > " '
const Value& arg_at(const Args& a, size_t idx, const char* name);  // Undefined when absent

}  // namespace nt::jinja
