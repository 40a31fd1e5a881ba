// Integers beyond 64 bits in JSON text. simdjson refuses them ("Problem while parsing a number");
// Go reads them as float64, and writes every float64 from 2^64 up to 1e21 in plain digits (1e20
// is 100000000000000000000), so a real API server, and Kozmo's own writer, send them. The
// parsers retry such a text with the integers widened to floating point.
#pragma once

#include <string>
#include <string_view>

namespace kozmo::json {

// The text with ".0" after every integer literal outside int64 and uint64 (strings left alone),
// or "" when it has none.
std::string widen_big_integers(std::string_view text);

} // namespace kozmo::json
