// Private to k8s/model: the result of one step of decoding. Success is a false flag returned in
// a register (the status is trivially copyable, so the ABI passes it in one, not through
// memory: every field of every object returns one); a failure's text and field path live in a
// per-thread record, since a decode stops at its first failure and reports it before the
// thread decodes anything else. The path is built on the way out
// ("spec" + "containers" + "[0]" + ... → "spec.containers[0].resources.limits[cpu]").
#pragma once

#include "k8s/error.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace kozmo::k8s::detail {

class [[nodiscard]] dstatus {
public:
  dstatus() noexcept = default;

  // Starts a failure, replacing whatever failure this thread recorded before.
  [[gnu::cold]] static dstatus fail(std::string text) {
    failure& f = current();
    f.path.clear();
    f.text = std::move(text);
    dstatus s;
    s.failed_ = true;
    return s;
  }
  [[gnu::cold]] static dstatus type_error(std::string_view expected, std::string_view found) {
    std::string t = "expected ";
    t += expected;
    t += ", found ";
    t += found;
    return fail(std::move(t));
  }

  bool ok() const noexcept { return !failed_; }

  // Prepends a field name: "limits[cpu]" → "resources.limits[cpu]".
  [[gnu::cold]] dstatus in_field(std::string_view name) const {
    std::string& path = current().path;
    std::string p(name);
    if (!path.empty() && path.front() != '[')
      p += '.';
    path.insert(0, p);
    return *this;
  }
  // Prepends an index or a map key: "[0]", "[nvidia.com/gpu]".
  [[gnu::cold]] dstatus in_index(std::size_t i) const { return in_bracket(std::to_string(i)); }
  [[gnu::cold]] dstatus in_key(std::string_view key) const { return in_bracket(key); }

  // "path: text" as a 400 error.
  error to_error() const {
    const failure& f = current();
    if (f.path.empty())
      return error::bad_request(f.text);
    return error::bad_request(f.path + ": " + f.text);
  }

private:
  struct failure {
    std::string path;
    std::string text;
  };

  static failure& current() {
    thread_local failure f;
    return f;
  }

  dstatus in_bracket(std::string_view inside) const {
    std::string& path = current().path;
    std::string p = "[";
    p += inside;
    p += ']';
    if (!path.empty() && path.front() != '[')
      p += '.';
    path.insert(0, p);
    return *this;
  }

  bool failed_ = false;
};

} // namespace kozmo::k8s::detail

// Returns from the enclosing function when a decoding step fails.
#define KOZMO_DTRY(...)                                                                             \
  do {                                                                                              \
    if (auto kozmo_dstatus_ = (__VA_ARGS__); !kozmo_dstatus_.ok())                                  \
      return kozmo_dstatus_;                                                                        \
  } while (0)
