#include "k8s/json/value.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace kozmo::json {
namespace {

constexpr char hex[] = "0123456789abcdef";

// encoding/json's float64 form: shortest round-trip digits, plain decimal for 1e-6 <= |d| < 1e21
// (1e20 → 100000000000000000000), exponent form outside with "e-07" shortened to "e-7".
void write_number(std::string& out, double d) {
  if (!std::isfinite(d)) { // JSON has no NaN/Inf; Go refuses them, we write null.
    out += "null";
    return;
  }
  char buf[64];
  double abs = std::fabs(d);
  if (abs != 0 && (abs < 1e-6 || abs >= 1e21)) {
    auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::size_t n = static_cast<std::size_t>(r.ptr - buf);
    if (n >= 4 && buf[n - 4] == 'e' && buf[n - 3] == '-' && buf[n - 2] == '0') {
      buf[n - 2] = buf[n - 1];
      --n;
    }
    out.append(buf, n);
    return;
  }
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
  out.append(buf, r.ptr);
}

void write(std::string& out, const value& v, int indent, int depth);

void newline(std::string& out, int indent, int depth) {
  if (indent <= 0)
    return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent * depth), ' ');
}

void write(std::string& out, const value& v, int indent, int depth) {
  switch (v.type()) {
  case value::kind::null: out += "null"; return;
  case value::kind::boolean: out += v.as_bool() ? "true" : "false"; return;
  case value::kind::integer: {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v.as_int());
    out.append(buf, r.ptr);
    return;
  }
  case value::kind::number: write_number(out, v.as_double()); return;
  case value::kind::string: write_string(out, v.as_string()); return;
  case value::kind::array: {
    const auto& a = v.as_array();
    out += '[';
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (i)
        out += ',';
      newline(out, indent, depth + 1);
      write(out, a[i], indent, depth + 1);
    }
    if (!a.empty())
      newline(out, indent, depth);
    out += ']';
    return;
  }
  case value::kind::object: {
    const auto& o = v.as_object();
    out += '{';
    bool first = true;
    for (const auto& [k, m] : o) {
      if (!first)
        out += ',';
      first = false;
      newline(out, indent, depth + 1);
      write_string(out, k);
      out += indent > 0 ? ": " : ":";
      write(out, m, indent, depth + 1);
    }
    if (!o.empty())
      newline(out, indent, depth);
    out += '}';
    return;
  }
  }
}

} // namespace

// The bytes write_string must look at: quote, backslash and control characters, <, > and &
// (escaped as Go escapes them), and every non-ASCII byte (UTF-8 to check, U+2028 and U+2029 to
// escape). Everything else is copied in runs: a string that needs no escape is one append, not
// one push per byte.
constexpr std::array<bool, 256> special_bytes = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c)
    t[c] = true;
  for (unsigned char c : {'"', '\\', '<', '>', '&'})
    t[c] = true;
  for (int c = 0x80; c < 0x100; ++c)
    t[c] = true;
  return t;
}();

// The length of the well-formed UTF-8 sequence at s[i] (a byte >= 0x80), 0 when it is not one:
// a stray continuation byte, an overlong form, a surrogate, a code point past U+10FFFF or a
// sequence cut short (Go's utf8.DecodeRuneInString answering RuneError, 1).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i), lo = 0x80, hi = 0xBF;
  std::size_t n = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80;
    hi = c == 0xED ? 0x9F : 0xBF;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (s.size() - i < n || byte(i + 1) < lo || byte(i + 1) > hi)
    return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF)
      return 0;
  return n;
}

void write_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t run = 0; // start of the bytes not yet copied
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (!special_bytes[c]) [[likely]]
      continue;
    std::size_t seq = c >= 0x80 ? utf8_sequence(s, i) : 0;
    // A well-formed character other than U+2028 / U+2029 (E2 80 A8 / E2 80 A9, which break
    // JavaScript; Go escapes them) is copied with the run.
    if (seq > 0 && !(seq == 3 && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                     (static_cast<unsigned char>(s[i + 2]) == 0xA8 || static_cast<unsigned char>(s[i + 2]) == 0xA9))) {
      i += seq - 1;
      continue;
    }
    out.append(s.data() + run, i - run);
    run = i + 1;
    if (c >= 0x80 && seq == 0) {
      // Not UTF-8 (bytes from protobuf, YAML or a header): Go writes U+FFFD for each such byte,
      // and a JSON reader (simdjson first) refuses the text otherwise.
      out += "\\ufffd";
      continue;
    }
    switch (c) {
    case '"': out += "\\\""; continue;
    case '\\': out += "\\\\"; continue;
    case '\n': out += "\\n"; continue;
    case '\r': out += "\\r"; continue;
    case '\t': out += "\\t"; continue;
    default: break;
    }
    if (c < 0x80) { // the other control characters, <, > and &
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 0xf];
      continue;
    }
    out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
    i += 2;
    run = i + 1;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

void dump_to(std::string& out, const value& v) { write(out, v, 0, 0); }

std::string dump(const value& v) {
  std::string out;
  dump_to(out, v);
  return out;
}

std::string dump_pretty(const value& v, int indent) {
  std::string out;
  write(out, v, indent, 0);
  return out;
}

} // namespace kozmo::json
