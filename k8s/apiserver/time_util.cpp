// The store's timestamps in unix seconds, formatted and parsed by k8s/model/time.hpp
// (RFC 3339, UTC, whole seconds as Kubernetes writes metav1.Time).
#include "k8s/apiserver/store.hpp"
#include "k8s/model/time.hpp"

#include <chrono>

namespace kozmo::apiserver {

std::int64_t unix_now() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

std::string format_rfc3339(std::int64_t unix_seconds) {
  return k8s::format_time(k8s::time_from_seconds(unix_seconds));
}

std::string now_rfc3339() { return format_rfc3339(unix_now()); }

std::optional<std::int64_t> parse_rfc3339(std::string_view s) {
  auto t = k8s::parse_time(s);
  if (!t)
    return std::nullopt;
  return std::chrono::duration_cast<std::chrono::seconds>(t->time_since_epoch()).count();
}

} // namespace kozmo::apiserver
