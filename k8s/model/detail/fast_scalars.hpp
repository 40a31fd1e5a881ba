// Private to k8s/model: fast paths for the scalar forms the API server actually writes — a
// quantity like "8", "500m", "32Gi" and a metav1.Time like "2026-11-21T20:01:26Z". Each returns
// false for anything else, and the caller then runs the exact parser (quantity::parse,
// parse_time), which also produces the error text. The oracle test in
// tests/unit/fast_scalars_test.cpp checks both paths agree on random and edge-case inputs.
#pragma once

#include "k8s/model/quantity.hpp"
#include "k8s/model/time.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace kozmo::k8s::detail {

// "<1-15 digits><suffix>" with suffix one of "", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti":
// no sign, fraction or exponent. Such a value is exact in nano-units and needs neither the
// binary cap nor rounding.
inline bool parse_quantity_fast(std::string_view s, quantity& out) {
  std::size_t n = s.size(), i = 0;
  std::int64_t units = 0;
  while (i < n && i < 16 && static_cast<unsigned char>(s[i] - '0') <= 9) {
    units = units * 10 + (s[i] - '0');
    ++i;
  }
  if (i == 0 || i > 15)
    return false;
  using nano_count = quantity::nano_count;
  constexpr nano_count per_unit = 1'000'000'000;
  std::string_view suffix = s.substr(i);
  nano_count nanos;
  quantity_format f = quantity_format::decimal_si;
  switch (suffix.size()) {
  case 0: nanos = nano_count(units) * per_unit; break;
  case 1:
    switch (suffix[0]) {
    case 'm': nanos = nano_count(units) * 1'000'000; break;
    case 'k': nanos = nano_count(units) * per_unit * 1'000; break;
    case 'M': nanos = nano_count(units) * per_unit * 1'000'000; break;
    case 'G': nanos = nano_count(units) * per_unit * 1'000'000'000; break;
    case 'T': nanos = nano_count(units) * per_unit * 1'000'000'000'000; break;
    default: return false;
    }
    break;
  case 2: {
    if (suffix[1] != 'i')
      return false;
    int shift;
    switch (suffix[0]) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    default: return false;
    }
    // Kubernetes caps binary values at 2^63-1 units: leave those to the exact parser.
    if (units > (INT64_MAX >> shift))
      return false;
    nanos = nano_count(units << shift) * per_unit;
    f = quantity_format::binary_si;
    break;
  }
  default: return false;
  }
  // Far inside the quantity range (15 digits times 2^40 at most), so no clamping is needed.
  out = quantity::from_exact_nanos(nanos, f);
  return true;
}

// Exactly "YYYY-MM-DDTHH:MM:SSZ" with a valid date and time of day.
inline bool parse_time_fast(std::string_view s, time_point& out) {
  if (s.size() != 20)
    return false;
  // The separators, all at once: "????-??-" "??T??:??" ":??Z" with the digits masked out
  // (masks for a little-endian load; elsewhere the exact parser does the work).
  if constexpr (std::endian::native != std::endian::little)
    return false;
  std::uint64_t head, mid;
  std::uint32_t tail;
  std::memcpy(&head, s.data(), 8);
  std::memcpy(&mid, s.data() + 8, 8);
  std::memcpy(&tail, s.data() + 16, 4);
  constexpr std::uint64_t head_mask = 0xFF00'00FF'0000'0000, head_want = 0x2D00'002D'0000'0000; // '-' at 4, 7
  constexpr std::uint64_t mid_mask = 0x0000'FF00'00FF'0000, mid_want = 0x0000'3A00'0054'0000;   // 'T' at 10, ':' at 13
  constexpr std::uint32_t tail_mask = 0xFF00'00FF, tail_want = 0x5A00'003A;                      // ':' at 16, 'Z' at 19
  if ((head & head_mask) != head_want || (mid & mid_mask) != mid_want || (tail & tail_mask) != tail_want)
    return false;
  // Eight characters at a time: separators become '0', every byte must then be a digit (high
  // nibble 3, low nibble at most 9), and byte i of 10*v + (v >> 8) is the two-digit number at i.
  constexpr std::uint64_t zeros = 0x3030'3030'3030'3030, high = 0xF0F0'F0F0'F0F0'F0F0, six = 0x0606'0606'0606'0606;
  auto pairs = [&](std::uint64_t w, std::uint64_t separators, bool& ok) {
    w = (w & ~separators) | (zeros & separators);
    ok = ok && (w & high) == zeros && ((w + six) & high) == zeros;
    std::uint64_t v = w - zeros;
    return v * 10 + (v >> 8);
  };
  bool ok = true;
  std::uint64_t a = pairs(head, head_mask, ok), b = pairs(mid, mid_mask, ok), c = pairs(tail, 0xFFFF'FFFF'0000'0000 | tail_mask, ok);
  if (!ok)
    return false;
  auto byte = [](std::uint64_t w, int i) { return int((w >> (8 * i)) & 0xFF); };
  int y = byte(a, 0) * 100 + byte(a, 2);
  int mo = byte(a, 5);
  int d = byte(b, 0);
  int h = byte(b, 3);
  int mi = byte(b, 6);
  int sec = byte(c, 1);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59)
    return false;
  static constexpr int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (d > month_days[mo - 1]) {
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (!(mo == 2 && d == 29 && leap))
      return false;
  }
  // Days since 1970-01-01 of a proleptic Gregorian date (years 0..9999 here), counting years
  // from March so that the leap day falls at the end of a year.
  int ym = mo <= 2 ? y - 1 : y;
  int era = (ym >= 0 ? ym : ym - 399) / 400;
  int yoe = ym - era * 400;
  int doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1;
  int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  std::int64_t days = std::int64_t(era) * 146097 + doe - 719468;
  std::int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec;
  out = time_from_seconds(secs); // clamped, as parse_time does
  return true;
}

// parse_time_fast behind a small per-thread memo of the last two texts: an object repeats its
// timestamps (a pod's creationTimestamp, its conditions' lastTransitionTime and its startTime
// are usually the same second or two), so most lookups are three word compares. Returns false
// exactly when parse_time_fast does.
inline bool parse_time_memo(std::string_view s, time_point& out) {
  struct entry {
    std::uint64_t head, mid;
    std::uint32_t tail;
    time_point value;
  };
  struct memo {
    entry slots[2];
    unsigned next;
  };
  // Both slots start as the epoch, which is what its text parses to.
  constexpr auto word = [](const char* p, int n) {
    std::uint64_t w = 0;
    for (int i = n - 1; i >= 0; --i)
      w = (w << 8) | static_cast<unsigned char>(p[i]);
    return w;
  };
  constexpr const char* epoch = "1970-01-01T00:00:00Z";
  constexpr entry start{word(epoch, 8), word(epoch + 8, 8), static_cast<std::uint32_t>(word(epoch + 16, 4)), time_point{}};
  thread_local memo m{{start, start}, 0};
  if (std::endian::native != std::endian::little || s.size() != 20) // the words above are little-endian
    return parse_time_fast(s, out);
  std::uint64_t head, mid;
  std::uint32_t tail;
  std::memcpy(&head, s.data(), 8);
  std::memcpy(&mid, s.data() + 8, 8);
  std::memcpy(&tail, s.data() + 16, 4);
  for (const entry& e : m.slots) {
    if (((e.head ^ head) | (e.mid ^ mid) | (e.tail ^ tail)) == 0) {
      out = e.value;
      return true;
    }
  }
  if (!parse_time_fast(s, out))
    return false;
  entry& e = m.slots[m.next];
  m.next ^= 1;
  e = entry{head, mid, tail, out};
  return true;
}

} // namespace kozmo::k8s::detail
