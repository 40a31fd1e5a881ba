#include "actors/kubelet/process_lifecycle.hpp"

#include "actors/kubelet/pod_status.hpp"

#include "k8s/client/retry.hpp"
#include "k8s/model/time.hpp"

#include <algorithm>

namespace kozmo::kubelet {
using k8s::format_time;
namespace {

constexpr duration max_backoff{300'000};

bool restarts(const std::string& policy, int exit_code) {
  return policy == "Always" || (policy == "OnFailure" && exit_code != 0);
}

} // namespace

process_lifecycle::process_lifecycle(process_pod_shape pod, clock::time_point now)
    : pod_(std::move(pod)), created_(now) {
  for (const auto& c : pod_.init_containers)
    init_.push_back(record{c, true, state::waiting, "PodInitializing", {}, {}, {}, {}, 0, {}});
  const char* first = pod_.init_containers.empty() ? "ContainerCreating" : "PodInitializing";
  for (const auto& c : pod_.containers)
    main_.push_back(record{c, false, state::waiting, first, {}, {}, {}, {}, 0, {}});
  initialized_ = init_.empty();
}

process_lifecycle::record* process_lifecycle::find(const std::string& name, bool init) {
  auto& list = init ? init_ : main_;
  for (auto& r : list)
    if (r.spec.name == name)
      return &r;
  return nullptr;
}

const process_lifecycle::record* process_lifecycle::find(const std::string& name, bool init) const {
  return const_cast<process_lifecycle*>(this)->find(name, init);
}

process_step process_lifecycle::begin(clock::time_point) {
  process_step step;
  if (!init_.empty())
    request_start(init_.front(), step);
  else
    start_mains(step);
  return step;
}

void process_lifecycle::block(std::string reason, std::string message) {
  for (auto* list : {&init_, &main_})
    for (auto& r : *list) {
      r.spec.blocked_reason = reason;
      r.spec.blocked_message = message;
      r.waiting_reason = reason;
      r.waiting_message = message;
    }
}

void process_lifecycle::request_start(record& r, process_step& step) {
  r.restart_at.reset();
  if (!r.spec.blocked_reason.empty()) {
    r.st = state::waiting;
    r.waiting_reason = r.spec.blocked_reason;
    r.waiting_message = r.spec.blocked_message;
    return;
  }
  r.st = state::starting;
  // A restart keeps showing CrashLoopBackOff until the process runs, as a kubelet's does.
  if (r.restart_count == 0) {
    r.waiting_reason = r.init ? "PodInitializing" : "ContainerCreating";
    r.waiting_message.clear();
  }
  step.start.push_back({r.spec.name, r.init, r.restart_count});
}

void process_lifecycle::start_mains(process_step& step) {
  initialized_ = true;
  for (auto& r : main_) {
    if (r.st == state::waiting && r.waiting_reason == "PodInitializing")
      r.waiting_reason = "ContainerCreating";
    request_start(r, step);
  }
}

void process_lifecycle::on_started(const std::string& name, bool init, clock::time_point now) {
  record* r = find(name, init);
  if (!r || r->st != state::starting)
    return;
  r->st = state::running;
  r->started = now;
  r->waiting_reason.clear();
  r->waiting_message.clear();
  settle_phase();
}

bool process_lifecycle::is_running(const std::string& name, bool init) const {
  const record* r = find(name, init);
  return r && (r->st == state::running || r->st == state::starting);
}

duration process_lifecycle::backoff_for(const record& r) const {
  return client::backoff_delay({pod_.restart_backoff, max_backoff, 0}, std::max(r.restart_count - 1, 0), 0);
}

process_step process_lifecycle::on_exited(const std::string& name, bool init, const process_exit& exit,
                                          clock::time_point now) {
  process_step step;
  record* r = find(name, init);
  if (!r || (r->st != state::running && r->st != state::starting))
    return step;
  termination t;
  t.exit_code = exit.exit_code;
  t.reason = !exit.reason.empty() ? exit.reason : exit.exit_code == 0 ? "Completed" : "Error";
  t.message = exit.message;
  t.started = r->st == state::running ? r->started : now;
  t.finished = now;
  t.run = r->restart_count;

  bool again = !stopping_ && (init ? exit.exit_code != 0 && pod_.restart_policy != "Never"
                                   : restarts(pod_.restart_policy, exit.exit_code));
  if (again) {
    r->last = t;
    r->current.reset();
    ++r->restart_count;
    r->st = state::waiting;
    r->restart_at = now + backoff_for(*r);
    r->waiting_reason = "CrashLoopBackOff";
    r->waiting_message = "back-off " + std::to_string(backoff_for(*r).count() / 1000) +
                         "s restarting failed container=" + r->spec.name + " pod=" + pod_.uid;
  } else {
    r->st = state::terminated;
    r->current = t;
  }

  if (init && !stopping_ && !again) {
    if (exit.exit_code != 0) {
      init_failed_ = true; // restartPolicy Never: the pod fails, the main containers never start
      for (auto& m : main_)
        m.waiting_reason = "PodInitializing";
    } else if (++next_init_ < init_.size()) {
      request_start(init_[next_init_], step);
    } else {
      start_mains(step);
    }
  }
  settle_phase();
  step.wake_after = next_wake(now);
  return step;
}

process_step process_lifecycle::on_timer(clock::time_point now) {
  process_step step;
  if (stopping_)
    return step;
  for (auto* list : {&init_, &main_})
    for (auto& r : *list)
      if (r.st == state::waiting && r.restart_at && *r.restart_at <= now)
        request_start(r, step);
  step.wake_after = next_wake(now);
  return step;
}

std::optional<duration> process_lifecycle::next_wake(clock::time_point now) const {
  std::optional<clock::time_point> earliest;
  for (const auto* list : {&init_, &main_})
    for (const auto& r : *list)
      if (r.st == state::waiting && r.restart_at && (!earliest || *r.restart_at < *earliest))
        earliest = r.restart_at;
  if (!earliest)
    return std::nullopt;
  return std::max(duration{0}, std::chrono::duration_cast<duration>(*earliest - now));
}

process_step process_lifecycle::begin_stop(clock::time_point) {
  process_step step;
  stopping_ = true;
  for (auto* list : {&init_, &main_})
    for (auto& r : *list) {
      r.restart_at.reset();
      if (r.st == state::running || r.st == state::starting)
        step.signal_running = true;
    }
  return step;
}

bool process_lifecycle::stopped() const {
  if (!stopping_)
    return false;
  for (const auto* list : {&init_, &main_})
    for (const auto& r : *list)
      if (r.st == state::running || r.st == state::starting)
        return false;
  return true;
}

void process_lifecycle::settle_phase() {
  if (init_failed_) {
    phase_ = "Failed";
    return;
  }
  if (!initialized_)
    return; // Pending
  bool any_started = false, all_done = true, any_failed = false;
  for (const auto& r : main_) {
    if (r.st == state::running || r.current || r.last)
      any_started = true;
    if (r.st != state::terminated)
      all_done = false;
    else if (r.current && r.current->exit_code != 0)
      any_failed = true;
  }
  if (all_done && !main_.empty())
    phase_ = any_failed ? "Failed" : "Succeeded";
  else if (any_started)
    phase_ = "Running";
}

json::value process_lifecycle::container_status(const record& r) const {
  auto terminated = [&](const termination& t) {
    json::value v;
    v["exitCode"] = t.exit_code;
    v["reason"] = t.reason;
    if (!t.message.empty())
      v["message"] = t.message;
    v["startedAt"] = format_time(t.started);
    v["finishedAt"] = format_time(t.finished);
    v["containerID"] = "kozmo-process://" + pod_.uid + "/" + r.spec.name + "/" + std::to_string(t.run);
    return v;
  };
  json::value s;
  s["name"] = r.spec.name;
  json::value st = json::object{};
  switch (r.st) {
  case state::waiting:
  case state::starting: {
    json::value w;
    w["reason"] = r.waiting_reason;
    if (!r.waiting_message.empty())
      w["message"] = r.waiting_message;
    st["waiting"] = std::move(w);
    break;
  }
  case state::running:
    st["running"]["startedAt"] = format_time(r.started);
    break;
  case state::terminated:
    st["terminated"] = terminated(*r.current);
    break;
  }
  s["state"] = std::move(st);
  json::value last = json::object{};
  if (r.last)
    last["terminated"] = terminated(*r.last);
  s["lastState"] = std::move(last);
  bool running = r.st == state::running;
  // A completed init container counts as ready, a main container while it runs (no probes).
  s["ready"] = r.init ? (r.st == state::terminated && r.current && r.current->exit_code == 0) : running;
  s["restartCount"] = r.restart_count;
  s["image"] = r.spec.image;
  s["imageID"] = "";
  if (r.st == state::running || r.current)
    s["containerID"] = "kozmo-process://" + pod_.uid + "/" + r.spec.name + "/" + std::to_string(r.restart_count);
  s["started"] = running;
  return s;
}

json::value process_lifecycle::conditions() const {
  bool ready = !main_.empty() && initialized_;
  for (const auto& r : main_)
    ready = ready && r.st == state::running;
  return pod_conditions_json(initialized_, ready, finished(), created_);
}

json::value process_lifecycle::status_json() const {
  json::value st = pod_status_head(phase_, conditions(), pod_.host_ip, pod_.pod_ip, created_);
  if (!init_.empty()) {
    json::array init;
    for (const auto& r : init_)
      init.push_back(container_status(r));
    st["initContainerStatuses"] = std::move(init);
  }
  json::array main;
  for (const auto& r : main_)
    main.push_back(container_status(r));
  st["containerStatuses"] = std::move(main);
  return st;
}

} // namespace kozmo::kubelet
