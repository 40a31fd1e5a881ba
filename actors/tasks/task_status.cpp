#include "actors/tasks/task_status.hpp"

#include "k8s/model/time.hpp"

namespace kozmo::tasks {
namespace {

int read_int(const json::value& obj, std::string_view key) { return static_cast<int>(obj.get_int(key, 0)); }

} // namespace

const attempt_record* task_status::current_attempt() const {
  for (const auto& a : attempts)
    if (a.attempt == attempt)
      return &a;
  return nullptr;
}

attempt_record* task_status::current_attempt() {
  for (auto& a : attempts)
    if (a.attempt == attempt)
      return &a;
  return nullptr;
}

std::optional<recorded_phase> task_status::last_recorded() const {
  if (!phase)
    return std::nullopt;
  return recorded_phase{*phase, phase_version, reason, attempt};
}

task_status status_from_json(const json::value& status) {
  task_status s;
  if (!status.is_object())
    return s;
  if (auto p = task_phase_from(status.get_string("phase")))
    s.phase = *p;
  s.phase_version = static_cast<std::uint32_t>(status.get_int("phaseVersion", 0));
  s.attempt = read_int(status, "attempt");
  s.system_failures = read_int(status, "systemFailures");
  s.reason = status.get_string("reason");
  s.message = status.get_string("message");
  s.start_time = k8s::time_member(status, "startTime");
  s.completion_time = k8s::time_member(status, "completionTime");
  s.last_transition_time = k8s::time_member(status, "lastTransitionTime");
  if (const auto* pool = status.find("pool"); pool && pool->is_object()) {
    s.pool = pool->get_string("name");
    s.pool_held = pool->get_bool("held");
    s.waiting_since = k8s::time_member(*pool, "waitingSince");
  }
  if (const auto* list = status.find("attempts"); list && list->is_array())
    for (const auto& a : list->as_array()) {
      attempt_record r;
      r.attempt = read_int(a, "attempt");
      r.pod = a.get_string("pod");
      r.job = a.get_string("job");
      r.phase = a.get_string("phase");
      r.reason = a.get_string("reason");
      r.message = a.get_string("message");
      r.interruptible = a.get_bool("interruptible");
      r.start_time = k8s::time_member(a, "startTime");
      r.end_time = k8s::time_member(a, "endTime");
      s.attempts.push_back(std::move(r));
    }
  if (const auto* list = status.find("history"); list && list->is_array())
    for (const auto& h : list->as_array()) {
      auto p = task_phase_from(h.get_string("phase"));
      auto t = k8s::time_member(h, "time");
      if (!p || !t)
        continue;
      s.history.push_back({*p, static_cast<std::uint32_t>(h.get_int("version", 0)), read_int(h, "attempt"),
                           h.get_string("reason"), *t});
    }
  if (const auto* ps = status.find("pluginState"))
    s.plugin_state = *ps;
  if (const auto* c = status.find("cache"); c && c->is_object()) {
    s.cache.key = c->get_string("key");
    s.cache.result = c->get_string("result");
    s.cache.source = c->get_string("source");
    s.cache.reserved = c->get_bool("reserved");
    s.cache.overwrite = c->get_string("overwrite");
  }
  s.outputs = status.get_string("outputs");
  s.first_attempt = read_int(status, "firstAttempt");
  return s;
}

json::value status_to_json(const task_status& s) {
  json::value out = json::object{};
  if (s.phase)
    out["phase"] = std::string(to_string(*s.phase));
  out["phaseVersion"] = static_cast<long long>(s.phase_version);
  out["attempt"] = s.attempt;
  out["systemFailures"] = s.system_failures;
  out["reason"] = s.reason;
  out["message"] = s.message;
  k8s::put_time(out, "startTime", s.start_time);
  k8s::put_time(out, "completionTime", s.completion_time);
  k8s::put_time(out, "lastTransitionTime", s.last_transition_time);
  if (!s.pool.empty()) {
    json::value pool = json::object{};
    pool["name"] = s.pool;
    pool["held"] = s.pool_held;
    k8s::put_time(pool, "waitingSince", s.waiting_since);
    out["pool"] = std::move(pool);
  }
  json::array attempts;
  for (const auto& a : s.attempts) {
    json::value r = json::object{};
    r["attempt"] = a.attempt;
    if (!a.pod.empty() || a.job.empty())
      r["pod"] = a.pod;
    if (!a.job.empty())
      r["job"] = a.job;
    r["phase"] = a.phase;
    if (!a.reason.empty())
      r["reason"] = a.reason;
    if (!a.message.empty())
      r["message"] = a.message;
    r["interruptible"] = a.interruptible;
    k8s::put_time(r, "startTime", a.start_time);
    k8s::put_time(r, "endTime", a.end_time);
    attempts.push_back(std::move(r));
  }
  out["attempts"] = std::move(attempts);
  json::array history;
  for (const auto& h : s.history) {
    json::value e = json::object{};
    e["phase"] = std::string(to_string(h.phase));
    e["version"] = static_cast<long long>(h.version);
    e["attempt"] = h.attempt;
    if (!h.reason.empty())
      e["reason"] = h.reason;
    e["time"] = k8s::format_time(h.time);
    history.push_back(std::move(e));
  }
  out["history"] = std::move(history);
  if (!s.plugin_state.is_null())
    out["pluginState"] = s.plugin_state;
  if (!s.cache.empty()) {
    json::value c = json::object{};
    c["key"] = s.cache.key;
    if (!s.cache.result.empty())
      c["result"] = s.cache.result;
    if (!s.cache.source.empty())
      c["source"] = s.cache.source;
    c["reserved"] = s.cache.reserved;
    if (!s.cache.overwrite.empty())
      c["overwrite"] = s.cache.overwrite;
    out["cache"] = std::move(c);
  }
  if (!s.outputs.empty())
    out["outputs"] = s.outputs;
  if (s.first_attempt != 0)
    out["firstAttempt"] = s.first_attempt;
  return out;
}

} // namespace kozmo::tasks
