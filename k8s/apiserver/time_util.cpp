// RFC 3339 timestamps as Kubernetes writes them: UTC, whole seconds ("2026-11-21T20:01:26Z").
#include "k8s/apiserver/store.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace kozmo::apiserver {

std::int64_t unix_now() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

std::string format_rfc3339(std::int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

std::string now_rfc3339() { return format_rfc3339(unix_now()); }

std::optional<std::int64_t> parse_rfc3339(std::string_view s) {
  int y, mo, d, h, mi, sec;
  if (s.size() < 19)
    return std::nullopt;
  std::string head(s.substr(0, 19));
  if (std::sscanf(head.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6)
    return std::nullopt;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  std::int64_t t = timegm(&tm);
  std::string_view rest = s.substr(19);
  if (!rest.empty() && rest[0] == '.') {
    std::size_t i = 1;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9')
      ++i;
    rest.remove_prefix(i);
  }
  if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-')) {
    int oh = 0, om = 0;
    if (std::sscanf(std::string(rest.substr(1)).c_str(), "%2d:%2d", &oh, &om) == 2) {
      std::int64_t off = oh * 3600 + om * 60;
      t += rest[0] == '+' ? -off : off;
    }
  }
  return t;
}

} // namespace kozmo::apiserver
