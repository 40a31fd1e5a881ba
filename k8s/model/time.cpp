#include "k8s/model/time.hpp"

#include <cstdio>
#include <cstdlib>

namespace kozmo::k8s {
namespace {

using namespace std::chrono;

// Reads exactly `n` digits at `pos`; false if any is not a digit.
bool read_digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > s.size())
    return false;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

error bad_time(std::string_view text) {
  std::string msg = "invalid RFC 3339 time \"";
  msg += text;
  msg += "\" (expected a form like 2026-11-21T20:01:26Z)";
  return error::bad_request(std::move(msg));
}

std::string format_with_fraction(time_point t, bool micro) {
  auto day = floor<days>(t);
  year_month_day ymd{day};
  hh_mm_ss hms{floor<microseconds>(t - day)};
  char buf[48];
  int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", int(ymd.year()),
                        unsigned(ymd.month()), unsigned(ymd.day()), int(hms.hours().count()),
                        int(hms.minutes().count()), int(hms.seconds().count()));
  if (micro)
    n += std::snprintf(buf + n, sizeof buf - std::size_t(n), ".%06lld",
                       static_cast<long long>(hms.subseconds().count()));
  buf[n++] = 'Z';
  return std::string(buf, std::size_t(n));
}

} // namespace

expected<time_point> parse_time(std::string_view text) {
  int y, mo, d, h, mi, sec;
  if (!read_digits(text, 0, 4, y) || text.size() < 20 || text[4] != '-' ||
      !read_digits(text, 5, 2, mo) || text[7] != '-' || !read_digits(text, 8, 2, d) ||
      text[10] != 'T' || !read_digits(text, 11, 2, h) || text[13] != ':' ||
      !read_digits(text, 14, 2, mi) || text[16] != ':' || !read_digits(text, 17, 2, sec))
    return bad_time(text);
  year_month_day ymd{year{y}, month{unsigned(mo)}, day{unsigned(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || sec > 59)
    return bad_time(text);

  std::size_t pos = 19;
  nanoseconds frac{0};
  if (text[pos] == '.') {
    ++pos;
    std::size_t start = pos;
    long long ns = 0;
    int kept = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (kept < 9) {
        ns = ns * 10 + (text[pos] - '0');
        ++kept;
      }
      ++pos;
    }
    if (pos == start)
      return bad_time(text);
    for (; kept < 9; ++kept)
      ns *= 10;
    frac = nanoseconds{ns};
  }

  seconds offset{0};
  if (pos < text.size() && text[pos] == 'Z') {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh, om;
    if (!read_digits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !read_digits(text, pos + 4, 2, om) || oh > 23 || om > 59)
      return bad_time(text);
    offset = hours{oh} + minutes{om};
    if (text[pos] == '-')
      offset = -offset;
    pos += 6;
  } else {
    return bad_time(text);
  }
  if (pos != text.size())
    return bad_time(text);

  // In whole seconds first: years 0000..9999 do not all fit the clock's nanoseconds.
  auto local = sys_seconds{sys_days{ymd}} + hours{h} + minutes{mi} + seconds{sec} - offset;
  std::int64_t secs = local.time_since_epoch().count();
  if (secs < min_time_seconds || secs >= max_time_seconds)
    return time_from_seconds(secs);
  return time_point{duration_cast<system_clock::duration>(local.time_since_epoch() + frac)};
}

std::string format_time(time_point t) { return format_with_fraction(t, false); }

std::string format_micro_time(time_point t) { return format_with_fraction(t, true); }

} // namespace kozmo::k8s

namespace kozmo::k8s {

std::optional<time_point> time_member(const json::value& object, std::string_view key) {
  const json::value* m = object.find(key);
  if (m == nullptr || !m->is_string())
    return std::nullopt;
  auto t = parse_time(m->as_string());
  if (!t)
    return std::nullopt;
  return *t;
}

void put_time(json::value& object, std::string_view key, const std::optional<time_point>& t) {
  if (t)
    object[key] = format_time(*t);
}

expected<std::chrono::milliseconds> parse_go_duration(std::string_view text) {
  auto bad = [&] {
    return error::bad_request("\"" + std::string(text) + "\" is not a duration (examples: 250ms, 5s, 1.5m, 1h30m)");
  };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty())
    return bad();
  if (s == "0")
    return std::chrono::milliseconds{0};
  double total_ms = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t start = i;
    bool digits = false;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) {
      digits = digits || s[i] != '.';
      ++i;
    }
    if (!digits)
      return bad();
    double number = std::strtod(std::string(s.substr(start, i - start)).c_str(), nullptr);
    std::size_t unit_start = i;
    while (i < s.size() && !((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
      ++i;
    std::string_view unit = s.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit == "ns")
      scale = 1e-6;
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") // U+00B5 or U+03BC
      scale = 1e-3;
    else if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60'000;
    else if (unit == "h")
      scale = 3'600'000;
    else
      return bad();
    total_ms += number * scale;
  }
  // Go's time.Duration is int64 nanoseconds: a longer duration (or a number too long for a
  // double) is out of range there, and would not fit the conversion below.
  if (!(total_ms + 0.5 < 9'223'372'036'854.0)) {
    std::string msg = "\"";
    msg += text;
    msg += "\" is out of range: a duration is at most 2562047h47m16s";
    return error::bad_request(std::move(msg));
  }
  auto ms = static_cast<long long>(total_ms + 0.5);
  return std::chrono::milliseconds{negative ? -ms : ms};
}

std::string format_go_duration(std::chrono::milliseconds d) {
  long long ms = d.count();
  if (ms == 0)
    return "0s";
  std::string sign = ms < 0 ? "-" : "";
  if (ms < 0)
    ms = -ms;
  if (ms < 1000)
    return sign + std::to_string(ms) + "ms";
  long long h = ms / 3'600'000, m = ms / 60'000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
  std::string secs = std::to_string(s);
  if (frac) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03lld", frac);
    std::string f = buf;
    while (f.back() == '0')
      f.pop_back();
    secs += f;
  }
  std::string out = sign;
  if (h)
    out += std::to_string(h) + "h";
  if (h || m)
    out += std::to_string(m) + "m";
  return out + secs + "s";
}

} // namespace kozmo::k8s
