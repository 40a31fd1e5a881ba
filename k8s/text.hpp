// Small text helpers every part needs the same way.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

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

// ASCII lower case (header names, media types, Kubernetes kinds, image references).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `s` cut at every `sep`, empty parts kept ("a//b" is three parts).
inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t from = 0;;) {
    auto at = s.find(sep, from);
    parts.push_back(s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos)
      return parts;
    from = at + 1;
  }
}

} // namespace kozmo::text
