#include "k8s/model/time.hpp"

#include <cstdio>

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

  auto local = sys_days{ymd} + hours{h} + minutes{mi} + seconds{sec} + frac - offset;
  return time_point{duration_cast<system_clock::duration>(local.time_since_epoch())};
}

std::string format_time(time_point t) { return format_with_fraction(t, false); }

std::string format_micro_time(time_point t) { return format_with_fraction(t, true); }

} // namespace kozmo::k8s
