#include "k8s/apiserver/fault_route.hpp"

#include "k8s/json/value.hpp"

namespace kozmo::apiserver {
namespace {

server::route_reply answer(int status, const std::string& message) {
  json::value body = json::object{{"code", status}, {"message", message}};
  return {status, json::dump(body)};
}

} // namespace

server::route_reply fault_route(fault_injector& faults, const std::string& method, const std::string& body) {
  if (method != "POST")
    return answer(405, "POST a JSON body with an action");
  auto doc = json::parse(body);
  if (!doc || !doc->is_object())
    return answer(400, "the body must be a JSON object with an action");
  const std::string action = doc->get_string("action");
  auto bounded = [&](const char* key, std::int64_t lo, std::int64_t hi, std::int64_t fallback) -> std::optional<std::int64_t> {
    std::int64_t n = doc->get_int(key, fallback);
    if (n < lo || n > hi)
      return std::nullopt;
    return n;
  };
  if (action == "dropWatches") {
    faults.drop_watches_now();
  } else if (action == "dropWatchesAfter") {
    auto n = bounded("events", 0, 1000000, 0);
    if (!n)
      return answer(422, "events: 0 to 1000000");
    faults.drop_watches_after(static_cast<std::size_t>(*n));
  } else if (action == "expireResumes") {
    faults.expire_watch_resumes(doc->get_bool("on", true));
  } else if (action == "failNext") {
    auto count = bounded("count", 1, 100000, 1);
    auto status = bounded("status", 400, 599, 500);
    auto retry = bounded("retryAfter", 0, 60, 1);
    if (!count || !status || !retry)
      return answer(422, "count: 1 to 100000, status: 400 to 599, retryAfter: 0 to 60");
    faults.fail_next(static_cast<std::size_t>(*count), static_cast<int>(*status), doc->get_string("prefix"),
                     static_cast<int>(*retry));
  } else if (action == "latency") {
    auto ms = bounded("ms", 0, 10000, 0);
    if (!ms)
      return answer(422, "ms: 0 to 10000");
    faults.set_latency(std::chrono::milliseconds(*ms));
  } else if (action == "clear") {
    faults.clear();
  } else {
    return answer(422, "action \"" + action +
                           "\": use dropWatches, dropWatchesAfter, expireResumes, failNext, latency or clear");
  }
  return answer(200, "ok");
}

} // namespace kozmo::apiserver
