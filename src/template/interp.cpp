// template/interp.cpp — statement execution, scopes and macros (Jinja2 scoping: a `for` body
// and a macro call get their own scope; `if` does not; `set` writes the innermost scope).
#include "template/interp.h"

#include "template/lexer.h"

namespace nt::jinja {

const Value* Frame::lookup(std::string_view name) const {
  for (const Frame* f = this; f; f = f->parent.get())
    for (const auto& [k, v] : f->vars)
      if (k == name) return &v;
  return nullptr;
}

void Frame::set(const std::string& name, Value v) {
  for (auto& [k, x] : vars)
    if (k == name) { x = std::move(v); return; }
  vars.emplace_back(name, std::move(v));
}

Interp::Interp(const Program& prog, const ChatTemplateLimits& limits, const std::tm& now)
    : prog_(prog), limits_(limits), now_(now) {}

void Interp::limit_error(const std::string& msg) const {
  throw TemplateError(TemplateError::Kind::Limit, "limit exceeded: " + msg);
}
void Interp::check_string(size_t n) const {
  if (n > limits_.max_output_bytes) limit_error("a string would exceed " + std::to_string(limits_.max_output_bytes) + " bytes");
}
void Interp::check_collection(size_t n) const {
  if (n > limits_.max_collection) limit_error("a list would exceed " + std::to_string(limits_.max_collection) + " items");
}

void Interp::emit(std::string_view s) {
  out_->append(s);
  if (out_->size() > limits_.max_output_bytes)
    limit_error("output exceeds " + std::to_string(limits_.max_output_bytes) + " bytes");
}

std::string Interp::render(const Value& context) {
  auto root = std::make_shared<Frame>();
  if (context.is_dict())
    for (const auto& [k, v] : context.map().entries)
      if (k.is_string()) root->set(k.s, v);
  frame_ = root;
  std::string out;
  out_ = &out;
  exec(prog_.body);
  return out;
}

Value Interp::lookup(const std::string& name) {
  if (const Value* v = frame_->lookup(name)) return *v;
  Value g = global_function(name);
  if (!g.is_undefined()) return g;
  return Value::undefined("'" + name + "' is undefined");
}

void Interp::rethrow_located(const std::exception& ex, uint32_t pos, uint32_t end) {
  auto* te = dynamic_cast<const TemplateError*>(&ex);
  TemplateError::Kind kind = te ? te->kind : TemplateError::Kind::Runtime;
  int line = 0, col = 0;
  line_col(prog_.source, pos, line, col);
  std::string where = prog_.name + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
  std::string msg;
  if (kind == TemplateError::Kind::Raised) {
    msg = where + ex.what();
  } else {
    std::string text = prog_.source.substr(pos, end > pos ? std::min<size_t>(end - pos, 200) : 0);
    for (char& c : text) if (c == '\n') c = ' ';
    while (!text.empty() && text.back() == ' ') text.pop_back();
    if (end - pos > 200) text += "...";
    msg = where + ex.what() + (text.empty() ? "" : " (in '" + text + "')");
  }
  TemplateError located(kind, msg);
  located.located = true;
  throw located;
}

Value Interp::eval(const Expr& e) {
  step();
  try {
    return eval_inner(e);
  } catch (const TemplateError& ex) {
    if (ex.located) throw;
    rethrow_located(ex, e.pos, e.end);
  }
}

std::string Interp::capture(const Body& body) {
  std::string buf;
  std::string* saved = out_;
  out_ = &buf;
  try {
    exec(body);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  return buf;
}

Flow Interp::exec(const Body& body) {
  for (const auto& s : body) {
    Flow f = exec_stmt(*s);
    if (f != Flow::Normal) return f;
  }
  return Flow::Normal;
}

void Interp::exec_set(const std::vector<std::string>& targets, Value v) {
  if (targets.size() == 1) {
    frame_->set(targets[0], std::move(v));
    return;
  }
  std::vector<Value> items = iterate(v);
  if (items.size() != targets.size())
    throw_error(std::string("ValueError: ") + (items.size() > targets.size() ? "too many" : "not enough") +
                " values to unpack (expected " + std::to_string(targets.size()) + ", got " + std::to_string(items.size()) + ")");
  for (size_t k = 0; k < targets.size(); k++) frame_->set(targets[k], std::move(items[k]));
}

// True when `v` contains (through lists, dicts and namespaces) the container `target`; used to
// refuse reference cycles, which would recurse forever in repr() and leak.
bool Interp::reaches(const Value& v, const void* target) {
  if (v.kind != Kind::List && v.kind != Kind::Dict) return false;
  if (v.p.get() == target) return true;
  step();
  if (v.kind == Kind::List) {
    for (const Value& x : v.items())
      if (reaches(x, target)) return true;
  } else {
    for (const auto& [k, x] : v.map().entries)
      if (reaches(x, target)) return true;
  }
  return false;
}

Flow Interp::exec_stmt(const Stmt& s) {
  step();
  switch (s.kind) {
    case StmtKind::Text: emit(s.text); return Flow::Normal;
    case StmtKind::Output: {
      Value v = eval(*s.expr);
      if (v.kind == Kind::String) emit(v.s);
      else emit(to_str(v));
      return Flow::Normal;
    }
    case StmtKind::If:
      for (size_t k = 0; k < s.conds.size(); k++)
        if (truthy(eval(*s.conds[k]))) return exec(s.bodies[k]);
      if (s.bodies.size() > s.conds.size()) return exec(s.bodies.back());
      return Flow::Normal;
    case StmtKind::For: return exec_for(s);
    case StmtKind::Set: exec_set(s.targets, eval(*s.expr)); return Flow::Normal;
    case StmtKind::SetAttr: {
      Value v = eval(*s.expr);
      Value obj = lookup(s.targets[0]);
      if (!obj.is_namespace()) {
        int line = 0, col = 0;
        line_col(prog_.source, s.pos, line, col);
        TemplateError err(TemplateError::Kind::Runtime,
                          prog_.name + ":" + std::to_string(line) + ":" + std::to_string(col) +
                              ": cannot assign attribute on non-namespace object '" + s.targets[0] + "'");
        err.located = true;
        throw err;
      }
      if (reaches(v, obj.p.get())) {
        int line = 0, col = 0;
        line_col(prog_.source, s.pos, line, col);
        TemplateError err(TemplateError::Kind::Runtime, prog_.name + ":" + std::to_string(line) + ":" +
                                                            std::to_string(col) + ": cannot store namespace '" +
                                                            s.targets[0] + "' inside itself");
        err.located = true;
        throw err;
      }
      obj.map().set(s.text, std::move(v));
      return Flow::Normal;
    }
    case StmtKind::SetBlock: {
      Value v = Value::string(capture(s.bodies[0]));
      for (const auto& f : s.filters) {
        Args args;
        for (size_t k = 1; k < f->children.size(); k++) args.pos.push_back(eval(*f->children[k]));
        for (const auto& [n, x] : f->kwargs) args.kw.emplace_back(n, eval(*x));
        v = apply_filter(f->name, v, args);
      }
      frame_->set(s.targets[0], std::move(v));
      return Flow::Normal;
    }
    case StmtKind::FilterBlock: {
      Value v = Value::string(capture(s.bodies[0]));
      for (const auto& f : s.filters) {
        Args args;
        for (size_t k = 1; k < f->children.size(); k++) args.pos.push_back(eval(*f->children[k]));
        for (const auto& [n, x] : f->kwargs) args.kw.emplace_back(n, eval(*x));
        v = apply_filter(f->name, v, args);
      }
      emit(to_str(v));
      return Flow::Normal;
    }
    case StmtKind::Macro: {
      auto c = std::make_shared<Callable>();
      c->name = s.text;
      const Stmt* macro = &s;
      std::shared_ptr<Frame> defined_in = frame_;
      std::weak_ptr<Frame> weak = frame_;  // avoid a cycle frame -> macro -> frame
      c->fn = [macro, weak](Interp& in, Args& args) {
        return in.call_macro(*macro, weak.lock(), args);
      };
      frame_->set(s.text, Value::func(std::move(c)));
      return Flow::Normal;
    }
    case StmtKind::Body: return exec(s.bodies[0]);
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
  }
  return Flow::Normal;
}

Value Interp::call_macro(const Stmt& m, const std::shared_ptr<Frame>& defined_in, Args& args) {
  if (call_depth_ >= limits_.max_call_depth)
    limit_error("macro calls nested deeper than " + std::to_string(limits_.max_call_depth));
  auto f = std::make_shared<Frame>();
  f->parent = defined_in ? defined_in : frame_;
  size_t n_params = m.params.size();
  if (args.pos.size() > n_params)
    throw_type_error("macro '" + m.text + "' takes not more than " + std::to_string(n_params) + " argument(s)");
  std::vector<bool> bound(n_params, false);
  for (size_t k = 0; k < args.pos.size(); k++) { f->set(m.params[k].first, args.pos[k]); bound[k] = true; }
  Value kwargs = Value::dict();
  for (auto& [name, v] : args.kw) {
    size_t k = 0;
    while (k < n_params && m.params[k].first != name) k++;
    if (k == n_params) { kwargs.map().set(name, v); continue; }
    f->set(name, v);
    bound[k] = true;
  }
  f->set("varargs", Value::list({}, true));
  f->set("kwargs", kwargs);
  std::shared_ptr<Frame> saved = frame_;
  frame_ = f;
  call_depth_++;
  struct Restore {
    Interp* in; std::shared_ptr<Frame> saved;
    ~Restore() { in->frame_ = saved; in->call_depth_--; }
  } restore{this, saved};
  for (size_t k = 0; k < n_params; k++) {
    if (bound[k]) continue;
    const auto& [name, def] = m.params[k];
    f->set(name, def ? eval(*def) : Value::undefined("parameter '" + name + "' was not provided"));
  }
  return Value::string(capture(m.bodies[0]));
}

Flow Interp::exec_for(const Stmt& s) {
  Value seq_v = eval(*s.expr);
  std::vector<Value> raw;
  try {
    raw = iterate(seq_v);
  } catch (const TemplateError& ex) {
    if (ex.located) throw;
    rethrow_located(ex, s.expr->pos, s.expr->end);
  }
  auto state = std::make_shared<LoopState>();
  state->seq = std::make_shared<List>();
  std::shared_ptr<Frame> outer = frame_;
  struct Restore {
    Interp* in; std::shared_ptr<Frame> saved;
    ~Restore() { in->frame_ = saved; }
  } restore{this, outer};
  auto bind = [&](const Value& item) {
    if (s.targets.size() == 1) {
      frame_->vars.emplace_back(s.targets[0], item);
    } else {
      std::vector<Value> parts = iterate(item);
      if (parts.size() != s.targets.size())
        throw_error(std::string("ValueError: ") + (parts.size() > s.targets.size() ? "too many" : "not enough") +
                    " values to unpack (expected " + std::to_string(s.targets.size()) + ", got " + std::to_string(parts.size()) + ")");
      for (size_t k = 0; k < parts.size(); k++) frame_->vars.emplace_back(s.targets[k], std::move(parts[k]));
    }
  };
  if (s.cond) {
    for (auto& item : raw) {
      step();
      frame_ = std::make_shared<Frame>();
      frame_->parent = outer;
      bind(item);
      if (truthy(eval(*s.cond))) state->seq->push_back(std::move(item));
    }
  } else {
    *state->seq = std::move(raw);
  }
  Value loop_v;
  loop_v.kind = Kind::Loop;
  loop_v.p = state;
  const List& seq = *state->seq;
  // One scope object per loop, emptied each iteration: every iteration starts from a fresh scope
  // (sets do not survive to the next one), without an allocation per iteration.
  auto body_frame = std::make_shared<Frame>();
  body_frame->parent = outer;
  for (size_t k = 0; k < seq.size(); k++) {
    step();
    state->index0 = static_cast<int64_t>(k);
    frame_ = outer;
    if (body_frame.use_count() > 1) {  // still referenced elsewhere: start a new one
      body_frame = std::make_shared<Frame>();
      body_frame->parent = outer;
    }
    body_frame->vars.clear();
    frame_ = body_frame;
    bind(seq[k]);
    frame_->vars.emplace_back("loop", loop_v);
    Flow f = exec(s.bodies[0]);
    if (f == Flow::Break) break;
  }
  frame_ = outer;
  if (seq.empty() && s.bodies.size() > 1) return exec(s.bodies[1]);
  return Flow::Normal;
}

}  // namespace nt::jinja
