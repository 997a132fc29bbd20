// Errors as values: Status and StatusOr<T>, used at every module boundary.
//
// A Status is ok or carries a code and a message. Messages name the problem
// precisely (with line:column for text input). StatusOr<T> holds a value or
// a non-ok Status. Neither throws.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace trench {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // Bad input: malformed text, wrong shapes, bad flags.
  kNotFound,
  kUnimplemented,  // Valid input that this component does not support.
  kInternal,       // A broken invariant of ours.
  kResourceExhausted,
  kFailedPrecondition,
  kOutOfRange,
  kDeadlineExceeded,
  kIoError,
  kCancelled,  // Stopped on request (shutdown) before it finished.
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK.
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;
  // Returns a copy whose message is prefixed by `context: `.
  Status WithContext(const std::string& context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status Unimplemented(std::string m) {
  return Status(StatusCode::kUnimplemented, std::move(m));
}
inline Status Internal(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}
inline Status ResourceExhausted(std::string m) {
  return Status(StatusCode::kResourceExhausted, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status OutOfRange(std::string m) {
  return Status(StatusCode::kOutOfRange, std::move(m));
}
inline Status IoError(std::string m) {
  return Status(StatusCode::kIoError, std::move(m));
}
inline Status Cancelled(std::string m) {
  return Status(StatusCode::kCancelled, std::move(m));
}

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design.
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "StatusOr from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // REQUIRES: for value(): ok().
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace trench

#define TRENCH_CONCAT_INNER(a, b) a##b
#define TRENCH_CONCAT(a, b) TRENCH_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` yields a non-ok Status.
#define RETURN_IF_ERROR(expr)      \
  do {                             \
    ::trench::Status _st = (expr); \
    if (!_st.ok()) return _st;     \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, Foo());` declares x from a StatusOr or returns
// its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(TRENCH_CONCAT(_so_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
