// Small text helpers every part needs the same way.
#pragma once

#include <cctype>
#include <string_view>

namespace kozmo::text {

// ASCII case-insensitive equality (HTTP header names, JSON keys matched the Go way, template
// variable names).
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

} // namespace kozmo::text
