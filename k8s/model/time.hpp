// Kubernetes timestamps: metav1.Time is RFC 3339 with whole seconds ("2026-11-21T20:01:26Z"),
// metav1.MicroTime has six fractional digits ("2026-11-21T20:01:26.123456Z"). Both are UTC on
// the wire; parsing also accepts any fraction and a numeric offset ("+02:00"), as Go does.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kozmo::k8s {

using time_point = std::chrono::system_clock::time_point;

// The times Kozmo holds: whole days within what a time_point (int64 nanoseconds since 1970) can
// count, 1677-09-22T00:00:00Z to 2262-04-11T00:00:00Z. Kubernetes takes any year 0000-9999 (and
// protobuf any int64 seconds); times outside are clamped to these.
inline constexpr std::int64_t min_time_seconds = -106'751LL * 86'400;
inline constexpr std::int64_t max_time_seconds = 106'751LL * 86'400;

// Seconds since 1970 as a time_point, clamped to the range above.
inline time_point time_from_seconds(std::int64_t seconds) {
  seconds = seconds < min_time_seconds ? min_time_seconds : (seconds > max_time_seconds ? max_time_seconds : seconds);
  return time_point{std::chrono::seconds{seconds}};
}

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)". Fractions finer than the clock's
// resolution are truncated; a time beyond the clock's range is clamped to it (see above).
expected<time_point> parse_time(std::string_view text);

// "2026-11-21T20:01:26Z" (metav1.Time): sub-second precision is dropped, as Kubernetes does.
std::string format_time(time_point t);

// "2026-11-21T20:01:26.123456Z" (metav1.MicroTime): always six fractional digits.
std::string format_micro_time(time_point t);

// A timestamp member of a JSON object (a status's startTime): nullopt when missing or malformed.
std::optional<time_point> time_member(const json::value& object, std::string_view key);
// Sets it (metav1.Time form) when `t` holds a time.
void put_time(json::value& object, std::string_view key, const std::optional<time_point>& t);

// Go's time.ParseDuration: a sequence of decimal numbers with units ("300ms", "1.5h", "2h45m";
// units ns, us, µs, ms, s, m, h; a bare "0"; a leading sign), to milliseconds (finer parts
// are rounded). Errors quote the text and give examples.
expected<std::chrono::milliseconds> parse_go_duration(std::string_view text);

// Go's Duration.String(): "3m0s", "1h0m0s", "1.5s", "250ms", "0s".
std::string format_go_duration(std::chrono::milliseconds d);

} // namespace kozmo::k8s
