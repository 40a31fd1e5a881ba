// Private to k8s/model: the result of one step of decoding. Success is a null pointer (cheap
// on the hot path); a failure carries the text and the field path, which is built on the
// way out ("spec" + "containers" + "[0]" + ... → "spec.containers[0].resources.limits[cpu]").
#pragma once

#include "k8s/error.hpp"

#include <string>
#include <string_view>
#include <utility>

namespace kozmo::k8s::detail {

class [[nodiscard]] dstatus {
public:
  dstatus() noexcept = default;
  dstatus(dstatus&& o) noexcept : f_(o.f_) { o.f_ = nullptr; }
  dstatus& operator=(dstatus&& o) noexcept {
    std::swap(f_, o.f_);
    return *this;
  }
  dstatus(const dstatus&) = delete;
  dstatus& operator=(const dstatus&) = delete;
  // Success holds nothing: the destructor is one inlined test on the hot path.
  ~dstatus() {
    if (f_) [[unlikely]]
      release(f_);
  }

  static dstatus fail(std::string text) {
    dstatus s;
    s.f_ = new failure{{}, std::move(text)};
    return s;
  }
  static dstatus type_error(std::string_view expected, std::string_view found) {
    std::string t = "expected ";
    t += expected;
    t += ", found ";
    t += found;
    return fail(std::move(t));
  }

  bool ok() const noexcept { return f_ == nullptr; }

  // Prepends a field name: "limits[cpu]" → "resources.limits[cpu]".
  dstatus&& in_field(std::string_view name) && {
    std::string p(name);
    if (!f_->path.empty() && f_->path.front() != '[')
      p += '.';
    f_->path.insert(0, p);
    return std::move(*this);
  }
  // Prepends an index or a map key: "[0]", "[nvidia.com/gpu]".
  dstatus&& in_index(std::size_t i) && { return std::move(*this).in_bracket(std::to_string(i)); }
  dstatus&& in_key(std::string_view key) && { return std::move(*this).in_bracket(key); }

  // "path: text" as a 400 error.
  error to_error() const {
    if (f_->path.empty())
      return error::bad_request(f_->text);
    return error::bad_request(f_->path + ": " + f_->text);
  }

private:
  struct failure {
    std::string path;
    std::string text;
  };

  [[gnu::noinline, gnu::cold]] static void release(failure* f) { delete f; }

  dstatus&& in_bracket(std::string_view inside) && {
    std::string p = "[";
    p += inside;
    p += ']';
    if (!f_->path.empty() && f_->path.front() != '[')
      p += '.';
    f_->path.insert(0, p);
    return std::move(*this);
  }

  failure* f_ = nullptr;
};

} // namespace kozmo::k8s::detail

// Returns from the enclosing function when a decoding step fails.
#define KOZMO_DTRY(...)                                                                             \
  do {                                                                                              \
    if (auto kozmo_dstatus_ = (__VA_ARGS__); !kozmo_dstatus_.ok())                                  \
      return kozmo_dstatus_;                                                                        \
  } while (0)
