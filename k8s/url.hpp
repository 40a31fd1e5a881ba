// Percent-encoding of URL paths and query strings (RFC 3986), the one copy every part uses:
// the client escapes query values, the embedded API server decodes paths and queries, and
// the inspect and extender routes decode names (a default group is named "<ns>/<pod>").
#pragma once

#include <string>
#include <string_view>

namespace kozmo::url {

// Everything but the RFC 3986 unreserved characters (ALPHA DIGIT - . _ ~) becomes %XX.
inline std::string encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                      c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
      continue;
    }
    out += '%';
    out += hex[c >> 4];
    out += hex[c & 0xf];
  }
  return out;
}

// %XX becomes its byte; a '%' not followed by two hex digits stays as it is. With
// `plus_is_space` (query strings: kubectl sends "a+in+%28b%2Cc%29") '+' becomes ' '.
inline std::string decode(std::string_view s, bool plus_is_space = false) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
      continue;
    }
    out += plus_is_space && s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

} // namespace kozmo::url
