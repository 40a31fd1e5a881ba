// Kubernetes timestamps: metav1.Time is RFC 3339 with whole seconds ("2026-11-21T20:01:26Z"),
// metav1.MicroTime has six fractional digits ("2026-11-21T20:01:26.123456Z"). Both are UTC on
// the wire; parsing also accepts any fraction and a numeric offset ("+02:00"), as Go does.
#pragma once

#include "k8s/error.hpp"

#include <chrono>
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

} // namespace kozmo::k8s
