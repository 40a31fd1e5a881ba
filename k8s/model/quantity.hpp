// Kubernetes resource quantities ("500m", "8Gi", "1.5", "1e3"), held exactly: no floating point.
//
// A quantity is a signed count of nano-units in 128 bits (about ±1.7e29 units) plus the format
// its suffix asked for, which decides how it is printed:
//   - decimal_si        "m", "", "k", "M", ... (and n, u):       1.5   → "1500m", 1000 → "1k"
//   - binary_si         "Ki", "Mi", ... "Ei":                    1.5Gi → "1536Mi"
//   - decimal_exponent  "e3", "E-2":                             1e3   → "1e3"
// Parsing follows Kubernetes' resource.ParseQuantity: precision finer than one nano-unit is
// rounded up (away from zero) so that "0.1n" still asks for something, and a binary_si value
// above 2^63-1 is capped there. Printing follows Quantity.String(): no fractional digits, the
// largest suffix that loses no precision, and binary values below 1024 (or not whole) printed
// as decimal_si.
//
// Where we differ: a decimal magnitude beyond the 128-bit range, or a number with more than 60
// significant digits, is rejected with an error instead of being kept in arbitrary precision.
// Arithmetic saturates at the range limits.
#pragma once

#include "k8s/error.hpp"

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace kozmo::k8s {

enum class quantity_format { decimal_si, binary_si, decimal_exponent };

class quantity {
public:
  __extension__ typedef __int128 nano_count;

  quantity() = default; // zero, decimal_si

  // Parses a quantity string; errors use Kubernetes' wording, e.g.
  // "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'".
  static expected<quantity> parse(std::string_view text);

  static quantity from_int(std::int64_t units, quantity_format f = quantity_format::decimal_si);
  static quantity from_milli(std::int64_t milli_units, quantity_format f = quantity_format::decimal_si);
  static quantity from_nanos(nano_count nanos, quantity_format f = quantity_format::decimal_si);
  // from_nanos for a count known to be within range (no clamping): the decoders' fast path.
  static quantity from_exact_nanos(nano_count nanos, quantity_format f) {
    quantity q;
    q.nanos_ = nanos;
    q.format_ = f;
    return q;
  }

  // ceil(q), rounded away from zero like Kubernetes' Value(); saturates at the int64 range.
  std::int64_t value() const;
  // ceil(q * 1000), rounded away from zero like MilliValue(); saturates at the int64 range.
  std::int64_t milli_value() const;
  nano_count nanos() const { return nanos_; }

  quantity_format format() const { return format_; }
  bool is_zero() const { return nanos_ == 0; }
  int sign() const { return nanos_ < 0 ? -1 : (nanos_ > 0 ? 1 : 0); }

  // The canonical form Kubernetes prints ("1500m", "1536Mi", "1e3", "0").
  std::string to_string() const;

  // Adding to a zero quantity adopts the other's format, as Kubernetes' Add/Sub do.
  quantity& operator+=(const quantity& other);
  quantity& operator-=(const quantity& other);
  friend quantity operator+(quantity a, const quantity& b) { return a += b; }
  friend quantity operator-(quantity a, const quantity& b) { return a -= b; }
  quantity operator-() const;

  // Compares values only: "1Ki" == "1024".
  friend bool operator==(const quantity& a, const quantity& b) { return a.nanos_ == b.nanos_; }
  friend std::strong_ordering operator<=>(const quantity& a, const quantity& b) {
    return a.nanos_ < b.nanos_ ? std::strong_ordering::less
                               : (a.nanos_ > b.nanos_ ? std::strong_ordering::greater
                                                      : std::strong_ordering::equal);
  }

private:
  nano_count nanos_ = 0;
  quantity_format format_ = quantity_format::decimal_si;
};

} // namespace kozmo::k8s
