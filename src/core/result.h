// core/result.h — Result<T>: the value-or-error return type for everything that reads outside input.
// Owns: Error (a message a user can act on, and a kind a caller can map, e.g. to an HTTP status or
// an exit code) and Result<T>/Status. Must not know: any layer above core.
// Programmer errors are not Results: they are NT_CHECK aborts (see check.h).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace nt {

// What went wrong, for callers that map errors (the server to HTTP statuses, the CLI to exit codes).
enum class ErrorKind {
  InvalidArgument,  // bad input: a file, a request field, a parameter out of range (400 / exit 1)
  PromptTooLong,    // the prompt (plus what it asks to generate) can never fit the context (400)
  Capacity,         // not now: the KV cache or the queue is full; retrying later can work (429 / 503)
  Cancelled,        // the caller cancelled the request
  Internal,         // a failure that is not the caller's fault (500)
};
const char* error_kind_name(ErrorKind k);  // "invalid_argument", "prompt_too_long", ...

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::InvalidArgument;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace nt

// Propagate an error from an expression returning Result<...>/Status.
#define NT_TRY(expr)                                        \
  do {                                                      \
    auto nt_try_r_ = (expr);                                \
    if (!nt_try_r_.ok()) return ::nt::Error{nt_try_r_.error()}; \
  } while (0)
