// An optional value held on the heap: for a large member that is rarely set (an env var's
// valueFrom), so that the common case costs one pointer instead of the whole object inline,
// and vectors of the enclosing type stay small. Reads like std::optional (has_value, bool,
// *, ->, emplace, reset, value_or-free); copies are deep, and == compares the values.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace kozmo::k8s {

template <class T>
class boxed {
public:
  boxed() noexcept = default;
  boxed(std::nullopt_t) noexcept {}
  boxed(const T& v) : p_(std::make_unique<T>(v)) {}
  boxed(T&& v) : p_(std::make_unique<T>(std::move(v))) {}
  boxed(const std::optional<T>& v) : p_(v ? std::make_unique<T>(*v) : nullptr) {}
  boxed(const boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  boxed(boxed&&) noexcept = default;
  boxed& operator=(const boxed& o) {
    if (this != &o)
      p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  boxed& operator=(boxed&&) noexcept = default;
  boxed& operator=(std::nullopt_t) noexcept {
    p_.reset();
    return *this;
  }
  boxed& operator=(const T& v) {
    emplace(v);
    return *this;
  }
  boxed& operator=(T&& v) {
    emplace(std::move(v));
    return *this;
  }

  bool has_value() const noexcept { return p_ != nullptr; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  T& operator*() noexcept { return *p_; }
  const T& operator*() const noexcept { return *p_; }
  T* operator->() noexcept { return p_.get(); }
  const T* operator->() const noexcept { return p_.get(); }
  T& value() {
    if (!p_)
      throw std::bad_optional_access();
    return *p_;
  }
  const T& value() const {
    if (!p_)
      throw std::bad_optional_access();
    return *p_;
  }

  template <class... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() noexcept { p_.reset(); }

  friend bool operator==(const boxed& a, const boxed& b) {
    return a.p_ && b.p_ ? *a.p_ == *b.p_ : a.p_ == b.p_;
  }
  friend bool operator==(const boxed& a, std::nullopt_t) noexcept { return !a.p_; }

private:
  std::unique_ptr<T> p_;
};

} // namespace kozmo::k8s
