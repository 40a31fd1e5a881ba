#include "actors/controller/leader_election.hpp"

#include "k8s/json/value.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>

namespace kozmo::controller {

lease_record lease_record_from(const json::value& lease) {
  lease_record r;
  const json::value* spec = lease.find("spec");
  if (!spec || !spec->is_object())
    return r;
  r.holder = spec->get_string("holderIdentity");
  r.lease_duration_s = spec->get_int("leaseDurationSeconds");
  r.acquire_time = spec->get_string("acquireTime");
  r.renew_time = spec->get_string("renewTime");
  r.transitions = spec->get_int("leaseTransitions");
  return r;
}

json::value lease_spec_json(const lease_record& r) {
  json::object spec;
  spec.set("holderIdentity", r.holder);
  spec.set("leaseDurationSeconds", r.lease_duration_s);
  if (!r.acquire_time.empty())
    spec.set("acquireTime", r.acquire_time);
  if (!r.renew_time.empty())
    spec.set("renewTime", r.renew_time);
  spec.set("leaseTransitions", r.transitions);
  return spec;
}

std::optional<std::string> check_timing(const election_timing& t) {
  using std::chrono::milliseconds;
  if (t.retry_period <= milliseconds(0))
    return "leaderElection.retryPeriod: must be greater than zero";
  if (t.renew_deadline <= milliseconds(0))
    return "leaderElection.renewDeadline: must be greater than zero";
  if (t.lease_duration <= t.renew_deadline)
    return "leaderElection.leaseDuration: must be greater than renewDeadline";
  if (t.renew_deadline.count() * 10 <= t.retry_period.count() * 12)
    return "leaderElection.renewDeadline: must be greater than retryPeriod x 1.2 (the retry's jitter)";
  return std::nullopt;
}

election_core::election_core(std::string identity, election_timing timing)
    : identity_(std::move(identity)), timing_(timing) {}

election_core::write election_core::attempt(const std::optional<lease_record>& current, const std::string& now_wall,
                                            steady now) {
  write w;
  w.record.holder = identity_;
  w.record.lease_duration_s = std::chrono::duration_cast<std::chrono::seconds>(timing_.lease_duration).count();
  w.record.acquire_time = now_wall;
  w.record.renew_time = now_wall;
  if (!current) {
    w.what = write::kind::create;
    return w;
  }
  // The expiry is timed from when this process saw the record change, on its own clock.
  if (!have_observed_ || !(*current == observed_)) {
    observed_ = *current;
    observed_at_ = now;
    have_observed_ = true;
  }
  const bool ours = current->holder == identity_;
  // As client-go: the wait is this candidate's own leaseDuration, not the record's.
  if (!current->holder.empty() && !ours && now < observed_at_ + timing_.lease_duration)
    return w; // held by another, not yet expired: wait
  if (ours) {
    w.record.acquire_time = current->acquire_time;
    w.record.transitions = current->transitions;
  } else {
    w.record.transitions = current->transitions + 1;
  }
  w.what = write::kind::update;
  return w;
}

void election_core::written(const write& w, bool succeeded, steady now) {
  if (w.what == write::kind::none || !succeeded)
    return;
  observed_ = w.record;
  observed_at_ = now;
  have_observed_ = true;
  renewed_at_ = now;
}

bool election_core::leading(steady now) const {
  return renewed_at_ && now - *renewed_at_ <= timing_.renew_deadline;
}

lease_record election_core::release_record(const std::string& now_wall) const {
  lease_record r;
  r.lease_duration_s = 1;
  r.acquire_time = now_wall;
  r.renew_time = now_wall;
  r.transitions = observed_.transitions;
  return r;
}

std::string micro_time(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  auto us = duration_cast<microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(us % 1000000));
  return buf;
}

std::string default_identity() {
  std::string base;
  if (const char* pod = std::getenv("POD_NAME"); pod && *pod) {
    base = pod;
  } else {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0)
      base = host;
    if (base.empty())
      base = "kozmo";
  }
  std::random_device rd;
  static const char digits[] = "0123456789abcdef";
  std::string suffix;
  for (int i = 0; i < 8; ++i)
    suffix += digits[rd() % 16];
  return base + "_" + suffix;
}

} // namespace kozmo::controller
