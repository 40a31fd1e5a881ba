// Kubernetes quantities (k8s/model/quantity.hpp): parse, print, arithmetic. Input: one quantity
// per line, two lines used. Properties, as Kubernetes' resource.Quantity keeps them:
//   - the canonical form parses back to the same value and is its own canonical form;
//   - + is commutative, a - a is zero, -(-a) == a, and away from the saturation limits
//     (a + b) - b == a and a < b exactly when a - b is negative;
//   - value() and milli_value() round away from zero (ceil of the magnitude).
#include "k8s/model/quantity.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kozmo;
using k8s::quantity;

namespace {

using i128 = quantity::nano_count;

// Far from the saturation limits (about 1.7e38 nano-units): sums and differences of two such
// values are exact.
bool small(const quantity& q) {
  constexpr i128 limit = static_cast<i128>(1) << 120;
  return q.nanos() < limit && q.nanos() > -limit;
}

// Kubernetes caps a parsed binary_si value at 2^63-1 units, but a sum may go beyond: its
// canonical form then parses to the cap (as resource.Quantity does).
constexpr i128 binary_cap = static_cast<i128>(INT64_MAX) * 1'000'000'000;

void check_one(const quantity& q) {
  if (q.format() == k8s::quantity_format::binary_si && (q.nanos() > binary_cap || q.nanos() < -binary_cap))
    return;
  std::string text = q.to_string();
  auto back = quantity::parse(text);
  fuzz::require(back.has_value(), "the canonical form of a quantity parses", text);
  fuzz::require(*back == q, "parse(to_string(q)) == q", text);
  // Not back->to_string() == text: a binary_si value that no binary suffix divides prints
  // without one, and reads back as decimal_si, which may print with a decimal suffix
  // ("9223372036854650000" then "9223372036854650k"), as in Kubernetes. It settles then.
  std::string settled = back->to_string();
  auto again = quantity::parse(settled);
  fuzz::require(again.has_value() && *again == q && again->to_string() == settled, "to_string settles after a round trip",
                text);
  fuzz::require((-(-q)) == q, "-(-q) == q", text);
  fuzz::require((q - q).is_zero(), "q - q == 0", text);

  // value() is ceil(|q|) with q's sign (Kubernetes' Value()), saturating at the int64 range.
  constexpr i128 n = 1'000'000'000;
  i128 mag = q.nanos() < 0 ? -q.nanos() : q.nanos();
  i128 units = mag / n + (mag % n != 0 ? 1 : 0);
  i128 expected = q.nanos() < 0 ? -units : units;
  if (expected >= INT64_MIN && expected <= INT64_MAX)
    fuzz::require(q.value() == static_cast<std::int64_t>(expected), "value() is ceil away from zero", text);
  i128 milli = mag / 1'000'000 + (mag % 1'000'000 != 0 ? 1 : 0);
  i128 expected_milli = q.nanos() < 0 ? -milli : milli;
  if (expected_milli >= INT64_MIN && expected_milli <= INT64_MAX)
    fuzz::require(q.milli_value() == static_cast<std::int64_t>(expected_milli), "milli_value() is ceil away from zero",
                  text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto [first, rest] = fuzz::split_once(fuzz::as_text(data, size), "\n");
  auto [second, ignored] = fuzz::split_once(rest, "\n");
  auto a = quantity::parse(first);
  if (a)
    check_one(*a);
  auto b = quantity::parse(second);
  if (b)
    check_one(*b);
  if (!a || !b)
    return 0;
  fuzz::require(*a + *b == *b + *a, "a + b == b + a");
  if (small(*a) && small(*b)) {
    fuzz::require((*a + *b) - *b == *a, "(a + b) - b == a");
    fuzz::require((*a < *b) == ((*a - *b).sign() < 0), "a < b exactly when a - b < 0");
    check_one(*a + *b);
    check_one(*a - *b);
  }
  return 0;
}
