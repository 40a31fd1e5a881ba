// Kubernetes timestamps: metav1.Time is RFC 3339 with whole seconds ("2026-11-21T20:01:26Z"),
// metav1.MicroTime has six fractional digits ("2026-11-21T20:01:26.123456Z"). Both are UTC on
// the wire; parsing also accepts any fraction and a numeric offset ("+02:00"), as Go does.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace kozmo::k8s {

using time_point = std::chrono::system_clock::time_point;

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)". Fractions finer than the clock's
// resolution are truncated.
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
