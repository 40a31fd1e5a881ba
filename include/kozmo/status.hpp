// Errors as values: what engine::start() and Kozmo's other calls return instead of throwing.
//
//   if (auto st = e.start(); !st)
//     std::cerr << st.err().message << "\n";   // st.err().code: the HTTP status it maps to, if any
//
// Inside Kozmo the same types carry every error: a pure core returns kozmo::expected<T>; an
// actor turns the error into a condition, an Event or an HTTP status. No exceptions cross a
// module boundary.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kozmo {

// What went wrong, for a user to read. `code` is the HTTP status the error maps to when it
// reaches the wire (0 = not an HTTP error, e.g. a parse error in a local file); `reason` is
// the Kubernetes Status reason ("NotFound", "Conflict", "BadRequest", ...), empty if none.
struct error {
  std::string message;
  int code = 0;
  std::string reason;

  static error bad_request(std::string msg) { return {std::move(msg), 400, "BadRequest"}; }
  static error not_found(std::string msg) { return {std::move(msg), 404, "NotFound"}; }
  static error conflict(std::string msg) { return {std::move(msg), 409, "Conflict"}; }
  static error invalid(std::string msg) { return {std::move(msg), 422, "Invalid"}; }
  static error internal(std::string msg) { return {std::move(msg), 500, "InternalError"}; }
};

// A value or an error. Small on purpose: has_value / value / error / operator bool.
template <class T>
class [[nodiscard]] expected {
public:
  expected(T v) : v_(std::in_place_index<0>, std::move(v)) {}
  expected(error e) : v_(std::in_place_index<1>, std::move(e)) {}
  // Builds the value in place, for a large value filled where it will stay (a decoded pod).
  template <class... A>
  explicit expected(std::in_place_t, A&&... a) : v_(std::in_place_index<0>, std::forward<A>(a)...) {}

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { assert(has_value()); return std::get<0>(v_); }
  const T& value() const& { assert(has_value()); return std::get<0>(v_); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const error& err() const { assert(!has_value()); return std::get<1>(v_); }
  error& err() { assert(!has_value()); return std::get<1>(v_); }

private:
  std::variant<T, error> v_;
};

// For operations that return nothing but may fail.
struct ok_t {};
inline constexpr ok_t ok{};
using status = expected<ok_t>;

} // namespace kozmo
