#include "k8s/apiserver/faults.hpp"

#include "k8s/apiserver/status.hpp"

namespace kozmo::apiserver {

void fault_injector::drop_watches_now() {
  std::function<void()> hook;
  {
    std::lock_guard lock(mu_);
    hook = drop_hook_;
  }
  if (hook)
    hook();
}

void fault_injector::drop_watches_after(std::size_t events) {
  std::lock_guard lock(mu_);
  drop_after_ = events;
  ++drop_generation_;
}

void fault_injector::expire_watch_resumes(bool on) {
  std::lock_guard lock(mu_);
  expire_resumes_ = on;
}

void fault_injector::fail_next(std::size_t count, int status, std::string path_prefix, int retry_after_seconds) {
  std::lock_guard lock(mu_);
  fail_count_ = count;
  fail_status_ = status;
  fail_prefix_ = std::move(path_prefix);
  retry_after_ = retry_after_seconds;
}

void fault_injector::set_latency(std::chrono::milliseconds latency) {
  std::lock_guard lock(mu_);
  latency_ = latency;
}

void fault_injector::clear() {
  std::lock_guard lock(mu_);
  fail_count_ = 0;
  latency_ = std::chrono::milliseconds(0);
  drop_after_ = 0;
  ++drop_generation_;
  expire_resumes_ = false;
}

std::size_t fault_injector::failures_left() const {
  std::lock_guard lock(mu_);
  return fail_count_;
}

std::optional<http_response> fault_injector::take_failure(std::string_view target) {
  std::lock_guard lock(mu_);
  if (fail_count_ == 0 || target.substr(0, fail_prefix_.size()) != fail_prefix_)
    return std::nullopt;
  --fail_count_;
  api_error e;
  e.code = fail_status_;
  if (fail_status_ == 429) {
    e.reason = "TooManyRequests";
    e.message = "Too many requests, please try again later.";
    e.details = json::object{{"retryAfterSeconds", retry_after_}};
  } else if (fail_status_ == 503) {
    e.reason = "ServiceUnavailable";
    e.message = "the server is currently unable to handle the request";
  } else {
    e.reason = "InternalError";
    e.message = "Internal error occurred: injected fault";
    e.details = json::object{{"causes", json::array{json::object{{"message", "injected fault"}}}}};
  }
  auto res = status_response(e);
  if (fail_status_ == 429 || fail_status_ == 503)
    res.set_header("Retry-After", std::to_string(retry_after_));
  return res;
}

std::chrono::milliseconds fault_injector::latency() const {
  std::lock_guard lock(mu_);
  return latency_;
}

std::pair<std::size_t, std::uint64_t> fault_injector::drop_after() const {
  std::lock_guard lock(mu_);
  return {drop_after_, drop_generation_};
}

bool fault_injector::expire_resumes() const {
  std::lock_guard lock(mu_);
  return expire_resumes_;
}

void fault_injector::set_drop_hook(std::function<void()> hook) {
  std::lock_guard lock(mu_);
  drop_hook_ = std::move(hook);
}

} // namespace kozmo::apiserver
