#include "k8s/model/quantity.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace kozmo::k8s {
namespace {

using i128 = quantity::nano_count;
__extension__ typedef unsigned __int128 u128;

constexpr i128 max_nanos = static_cast<i128>((u128(1) << 127) - 1);
constexpr i128 nanos_per_unit = 1'000'000'000;
// Kubernetes caps binary_si values at 2^63-1 units.
constexpr i128 binary_cap = static_cast<i128>(INT64_MAX) * nanos_per_unit;
constexpr std::size_t max_significant_digits = 60;

constexpr std::string_view format_regex = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

error format_wrong() {
  std::string msg = "quantities must match the regular expression '";
  msg += format_regex;
  msg += "'";
  return error::bad_request(std::move(msg));
}
error suffix_wrong() { return error::bad_request("unable to parse quantity's suffix"); }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The pieces of a quantity string, split the way Kubernetes' parseQuantityString does
// (including its leniencies: "1.G", "-" and "." are accepted).
struct scanned {
  bool positive = true;
  std::string_view num;
  std::string_view denom;
  std::string_view suffix;
};

bool scan(std::string_view s, scanned& out) {
  std::size_t pos = 0, end = s.size();
  if (s[0] == '-') {
    out.positive = false;
    ++pos;
  } else if (s[0] == '+') {
    ++pos;
  }
  while (pos < end && s[pos] == '0')
    ++pos;
  if (pos >= end) {
    out.num = "0";
    return true;
  }
  std::size_t start = pos;
  while (pos < end && is_digit(s[pos]))
    ++pos;
  out.num = s.substr(start, pos - start);
  if (pos >= end)
    return true;
  if (out.num.empty())
    out.num = "0";
  if (s[pos] == '.') {
    start = ++pos;
    while (pos < end && is_digit(s[pos]))
      ++pos;
    out.denom = s.substr(start, pos - start);
    if (pos >= end)
      return true;
  }
  std::size_t suffix_start = pos;
  while (pos < end && std::string_view("eEinumkKMGTP").find(s[pos]) != std::string_view::npos)
    ++pos;
  if (pos < end && (s[pos] == '-' || s[pos] == '+'))
    ++pos;
  while (pos < end && is_digit(s[pos]))
    ++pos;
  if (pos < end)
    return false;
  out.suffix = s.substr(suffix_start);
  return true;
}

struct suffix_meaning {
  int base = 10;
  std::int64_t exponent = 0;
  quantity_format format = quantity_format::decimal_si;
};

bool interpret(std::string_view suffix, suffix_meaning& out) {
  static constexpr std::array<std::pair<std::string_view, int>, 10> decimal{
      {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}}};
  static constexpr std::array<std::pair<std::string_view, int>, 6> binary{
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  for (auto [s, e] : decimal)
    if (s == suffix) {
      out = {10, e, quantity_format::decimal_si};
      return true;
    }
  for (auto [s, e] : binary)
    if (s == suffix) {
      out = {2, e, quantity_format::binary_si};
      return true;
    }
  if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E'))
    return false;
  std::string_view digits = suffix.substr(1);
  bool negative = false;
  if (digits[0] == '+' || digits[0] == '-') {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  std::int64_t e = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), e);
  if (digits.empty() || ec != std::errc{} || ptr != digits.data() + digits.size())
    return false;
  // Beyond ±10^6 a non-zero value is either far too large or rounds to 1n anyway.
  e = std::min<std::int64_t>(e, 1'000'000);
  out = {10, negative ? -e : e, quantity_format::decimal_exponent};
  return true;
}

// A fixed-width unsigned integer, just wide enough for the exact intermediate values of a
// parse (at most 60 significant digits times 2^60, or 40 digits times 2^60).
class wide_uint {
public:
  explicit wide_uint(std::string_view digits) {
    for (char c : digits) {
      mul_small(10);
      add_small(std::uint32_t(c - '0'));
    }
  }
  void mul_small(std::uint32_t m) {
    std::uint64_t carry = 0;
    for (auto& limb : limbs_) {
      std::uint64_t v = std::uint64_t(limb) * m + carry;
      limb = std::uint32_t(v);
      carry = v >> 32;
    }
  }
  void add_small(std::uint32_t a) {
    std::uint64_t carry = a;
    for (auto& limb : limbs_) {
      if (carry == 0)
        break;
      std::uint64_t v = std::uint64_t(limb) + carry;
      limb = std::uint32_t(v);
      carry = v >> 32;
    }
  }
  // Divides in place; returns the remainder.
  std::uint32_t div_small(std::uint32_t d) {
    std::uint64_t rem = 0;
    for (auto it = limbs_.rbegin(); it != limbs_.rend(); ++it) {
      std::uint64_t cur = (rem << 32) | *it;
      *it = std::uint32_t(cur / d);
      rem = cur % d;
    }
    return std::uint32_t(rem);
  }
  void shift_left(std::int64_t bits) {
    for (; bits >= 16; bits -= 16)
      mul_small(1u << 16);
    if (bits > 0)
      mul_small(1u << bits);
  }
  // The value if it fits in 127 bits.
  bool to_i128(i128& out) const {
    for (std::size_t i = 4; i < limbs_.size(); ++i)
      if (limbs_[i] != 0)
        return false;
    u128 v = 0;
    for (int i = 3; i >= 0; --i)
      v = (v << 32) | limbs_[std::size_t(i)];
    if (v > u128(max_nanos))
      return false;
    out = i128(v);
    return true;
  }

private:
  std::array<std::uint32_t, 12> limbs_{};
};

i128 pow10(int n) {
  i128 v = 1;
  while (n-- > 0)
    v *= 10;
  return v;
}

// The magnitude in nano-units of sig * 10^w * 2^b (sig a digit string without leading or
// trailing zeros), rounded up. False when it does not fit in 127 bits.
bool magnitude_nanos(std::string_view sig, std::int64_t w, std::int64_t b, i128& out) {
  auto len = std::int64_t(sig.size());
  if (len + w > 40)
    return false;
  // Below one nano-unit even after the largest binary multiplier: rounds up to 1n.
  if (len + w < -25) {
    out = 1;
    return true;
  }
  if (len <= 18 && w >= 0 && len + w <= 36) {
    std::uint64_t s = 0;
    std::from_chars(sig.data(), sig.data() + sig.size(), s);
    i128 v = i128(s) * pow10(int(w));
    if (b > 0 && v > (max_nanos >> b))
      return false;
    out = v << b;
    return true;
  }
  wide_uint big(sig);
  big.shift_left(b);
  bool inexact = false;
  for (; w >= 9; w -= 9)
    big.mul_small(1'000'000'000);
  for (; w > 0; --w)
    big.mul_small(10);
  for (; w <= -9; w += 9)
    inexact |= big.div_small(1'000'000'000) != 0;
  for (; w < 0; ++w)
    inexact |= big.div_small(10) != 0;
  if (inexact)
    big.add_small(1);
  return big.to_i128(out);
}

i128 saturate_add(i128 a, i128 b) {
  i128 r;
  if (__builtin_add_overflow(a, b, &r) || r > max_nanos || r < -max_nanos)
    return (b > 0) ? max_nanos : -max_nanos;
  return r;
}

void append_u128(std::string& out, u128 v) {
  char buf[48];
  std::size_t n = 0;
  do {
    buf[n++] = char('0' + int(v % 10));
    v /= 10;
  } while (v != 0);
  while (n > 0)
    out.push_back(buf[--n]);
}

std::int64_t ceil_scaled(i128 nanos, i128 divisor) {
  i128 q = nanos / divisor;
  if (nanos % divisor != 0)
    q += nanos > 0 ? 1 : -1;
  if (q > INT64_MAX)
    return INT64_MAX;
  if (q < INT64_MIN)
    return INT64_MIN;
  return std::int64_t(q);
}

} // namespace

expected<quantity> quantity::parse(std::string_view text) {
  if (text.empty())
    return format_wrong();
  scanned parts;
  if (!scan(text, parts))
    return format_wrong();
  suffix_meaning meaning;
  if (!interpret(parts.suffix, meaning))
    return suffix_wrong();

  // value = digits * 10^dec_exp * 2^bin_exp units, digits = num followed by denom.
  std::string digits;
  digits.reserve(parts.num.size() + parts.denom.size());
  digits.append(parts.num).append(parts.denom);
  std::int64_t dec_exp = -std::int64_t(parts.denom.size());
  std::int64_t bin_exp = 0;
  if (meaning.base == 10)
    dec_exp += meaning.exponent;
  else
    bin_exp = meaning.exponent;

  std::string_view sig = digits;
  while (!sig.empty() && sig.front() == '0')
    sig.remove_prefix(1);
  while (!sig.empty() && sig.back() == '0') {
    sig.remove_suffix(1);
    ++dec_exp;
  }
  quantity q;
  q.format_ = meaning.format;
  if (sig.empty())
    return q;
  if (sig.size() > max_significant_digits)
    return error::bad_request("quantity \"" + std::string(text) + "\" has more than 60 significant digits");

  i128 magnitude = 0;
  bool fits = magnitude_nanos(sig, dec_exp + 9, bin_exp, magnitude);
  if (meaning.format == quantity_format::binary_si && (!fits || magnitude > binary_cap)) {
    magnitude = binary_cap;
    fits = true;
  }
  if (!fits)
    return error::bad_request("quantity \"" + std::string(text) + "\" is too large");
  if (meaning.format == quantity_format::binary_si && magnitude < nanos_per_unit)
    q.format_ = quantity_format::decimal_si; // as Kubernetes does for 0 < |v| < 1
  q.nanos_ = parts.positive ? magnitude : -magnitude;
  return q;
}

quantity quantity::from_int(std::int64_t units, quantity_format f) {
  return from_nanos(i128(units) * nanos_per_unit, f);
}

quantity quantity::from_milli(std::int64_t milli_units, quantity_format f) {
  return from_nanos(i128(milli_units) * 1'000'000, f);
}

quantity quantity::from_nanos(nano_count nanos, quantity_format f) {
  quantity q;
  q.nanos_ = std::clamp(nanos, -max_nanos, max_nanos);
  q.format_ = f;
  return q;
}

std::int64_t quantity::value() const { return ceil_scaled(nanos_, nanos_per_unit); }

std::int64_t quantity::milli_value() const { return ceil_scaled(nanos_, 1'000'000); }

std::string quantity::to_string() const {
  if (nanos_ == 0)
    return "0";
  std::string out;
  if (nanos_ < 0)
    out.push_back('-');
  u128 mag = nanos_ < 0 ? u128(-nanos_) : u128(nanos_);

  quantity_format f = format_;
  if (f == quantity_format::binary_si &&
      (mag < u128(1024) * u128(nanos_per_unit) || mag % u128(nanos_per_unit) != 0))
    f = quantity_format::decimal_si;

  if (f == quantity_format::binary_si) {
    static constexpr std::array<std::string_view, 7> suffixes{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    u128 units = mag / u128(nanos_per_unit);
    std::size_t e = 0;
    while (e + 1 < suffixes.size() && units % 1024 == 0) {
      units /= 1024;
      ++e;
    }
    append_u128(out, units);
    out += suffixes[e];
    return out;
  }

  // Strip factors of ten, then bring the exponent to a multiple of three.
  int e = -9;
  while (mag % 10 == 0) {
    mag /= 10;
    ++e;
  }
  int r = e % 3;
  if (r == 1 || r == -2) {
    mag *= 10;
    e -= 1;
  } else if (r == 2 || r == -1) {
    mag *= 100;
    e -= 2;
  }
  if (f == quantity_format::decimal_exponent) {
    append_u128(out, mag);
    if (e != 0)
      out += "e" + std::to_string(e);
    return out;
  }
  for (; e > 18; e -= 3)
    mag *= 1000;
  static constexpr std::array<std::string_view, 10> suffixes{"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  append_u128(out, mag);
  out += suffixes[std::size_t((e + 9) / 3)];
  return out;
}

quantity& quantity::operator+=(const quantity& other) {
  if (nanos_ == 0)
    format_ = other.format_;
  nanos_ = saturate_add(nanos_, other.nanos_);
  return *this;
}

quantity& quantity::operator-=(const quantity& other) {
  if (nanos_ == 0)
    format_ = other.format_;
  nanos_ = saturate_add(nanos_, -other.nanos_);
  return *this;
}

quantity quantity::operator-() const {
  quantity q = *this;
  q.nanos_ = -q.nanos_;
  return q;
}

} // namespace kozmo::k8s
