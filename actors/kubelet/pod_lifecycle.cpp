#include "actors/kubelet/pod_lifecycle.hpp"

#include "actors/kubelet/image_reference.hpp"
#include "actors/kubelet/pod_status.hpp"

#include "k8s/client/retry.hpp"
#include "k8s/model/time.hpp"

#include <algorithm>

namespace kozmo::kubelet {
using k8s::format_time;
namespace {

constexpr duration max_backoff{300'000};
constexpr duration image_pull_backoff_after{1000}; // ErrImagePull → ImagePullBackOff

} // namespace

pod_lifecycle::pod_lifecycle(sim_pod pod, pod_script script, clock::time_point now)
    : pod_(std::move(pod)), script_(script), created_(now) {
  // As a kubelet does before it pulls: an image it cannot parse stays InvalidImageName.
  for (const auto* list : {&pod_.init_containers, &pod_.containers})
    for (const auto& c : *list)
      if (!image_error_)
        image_error_ = invalid_image_message(c.image);
}

std::optional<duration> pod_lifecycle::advance(clock::time_point now) {
  switch (stage_) {
  case stage::creating:
    if (image_error_) {
      stage_ = stage::stuck;
      waiting_reason_ = "InvalidImageName";
      waiting_message_ = *image_error_;
      return std::nullopt;
    }
    switch (script_.failure) {
    case scripted_failure::image_pull_backoff:
      stage_ = stage::image_pull_error;
      waiting_reason_ = "ErrImagePull";
      waiting_message_ = "rpc error: code = NotFound desc = failed to pull and unpack image \"" +
                         (pod_.containers.empty() ? std::string() : pod_.containers.front().image) +
                         "\": not found (simulated)";
      return image_pull_backoff_after;
    case scripted_failure::invalid_image_name:
      stage_ = stage::stuck;
      waiting_reason_ = "InvalidImageName";
      waiting_message_ = "Failed to apply default image tag \"" +
                         (pod_.containers.empty() ? std::string() : pod_.containers.front().image) +
                         "\": couldn't parse image reference (simulated)";
      return std::nullopt;
    case scripted_failure::create_container_config_error:
      stage_ = stage::stuck;
      waiting_reason_ = "CreateContainerConfigError";
      waiting_message_ = script_.failure_message.empty()
                             ? "configmap or secret referenced by the container not found (simulated)"
                             : script_.failure_message;
      return std::nullopt;
    default:
      break;
    }
    [[fallthrough]];
  case stage::backoff:
    stage_ = stage::running;
    phase_ = "Running";
    run_started_ = now;
    if (script_.run_forever)
      return std::nullopt;
    return script_.run_duration;
  case stage::image_pull_error:
    stage_ = stage::stuck;
    waiting_reason_ = "ImagePullBackOff";
    waiting_message_ = "Back-off pulling image \"" +
                       (pod_.containers.empty() ? std::string() : pod_.containers.front().image) + "\"";
    return std::nullopt;
  case stage::running:
    terminate_run(now);
    if (stage_ == stage::backoff)
      return backoff_delay();
    return std::nullopt;
  case stage::stopping:
    stage_ = stage::gone;
    return std::nullopt;
  case stage::stuck:
  case stage::finished:
  case stage::gone:
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<duration> pod_lifecycle::resume_running(clock::time_point started, int restarts, clock::time_point now) {
  if (stage_ != stage::creating || image_error_ || script_.failure == scripted_failure::image_pull_backoff ||
      script_.failure == scripted_failure::invalid_image_name ||
      script_.failure == scripted_failure::create_container_config_error)
    return advance(now); // scripted never to run: as a fresh start
  stage_ = stage::running;
  phase_ = "Running";
  run_started_ = std::min(started, now);
  restart_count_ = std::max(0, restarts);
  runs_ = restart_count_;
  if (script_.run_forever)
    return std::nullopt;
  auto elapsed = std::chrono::duration_cast<duration>(now - run_started_);
  return elapsed >= script_.run_duration ? duration(0) : script_.run_duration - elapsed;
}

void pod_lifecycle::terminate_run(clock::time_point now) {
  termination t;
  t.started = run_started_;
  t.finished = now;
  bool fails = script_.fail_times < 0 || runs_ < script_.fail_times;
  if (script_.failure == scripted_failure::oom_killed && fails) {
    t.exit_code = 137;
    t.reason = "OOMKilled";
  } else {
    t.exit_code = fails ? script_.exit_code : 0;
    t.reason = t.exit_code == 0 ? "Completed" : "Error";
  }
  ++runs_;
  bool restart = pod_.restart_policy == "Always" ||
                 (pod_.restart_policy == "OnFailure" && t.exit_code != 0);
  if (restart) {
    ++restart_count_;
    last_ = t;
    stage_ = stage::backoff;
    waiting_reason_ = "CrashLoopBackOff";
    waiting_message_ = "back-off " + std::to_string(backoff_delay().count() / 1000) +
                       "s restarting failed container";
    return;
  }
  final_ = t;
  stage_ = stage::finished;
  phase_ = t.exit_code == 0 ? "Succeeded" : "Failed";
}

// The kubelet's CrashLoopBackOff: the first delay doubling per restart, capped at 5 minutes.
duration pod_lifecycle::backoff_delay() const {
  return client::backoff_delay({script_.restart_backoff, max_backoff, 0}, std::max(restart_count_ - 1, 0), 0);
}

duration pod_lifecycle::begin_stop(clock::time_point now, duration grace) {
  if (stage_ == stage::gone || stage_ == stage::stopping)
    return duration{0};
  if (stage_ == stage::running) {
    // A container killed by SIGTERM reports 143 (128 + 15), as runc does.
    final_ = termination{143, "Error", run_started_, now};
  }
  stage_ = stage::stopping;
  return std::min(script_.stop_duration, grace);
}

std::string pod_lifecycle::phase() const { return phase_; }

json::value pod_lifecycle::container_status(const sim_pod::container& c, bool init) const {
  auto terminated = [](const termination& t) {
    json::value v;
    v["exitCode"] = t.exit_code;
    v["reason"] = t.reason;
    v["startedAt"] = format_time(t.started);
    v["finishedAt"] = format_time(t.finished);
    return v;
  };
  json::value s;
  s["name"] = c.name;
  json::value state = json::object{};
  bool ready = false;
  bool started = false;
  if (init) {
    // Init containers complete before the main containers start; a real kubelet runs them
    // in order, the simulation finishes them all when the first run starts.
    if (stage_ == stage::creating || stage_ == stage::image_pull_error || stage_ == stage::stuck) {
      state["waiting"]["reason"] = "PodInitializing";
    } else {
      state["terminated"] = terminated(termination{0, "Completed", created_, run_started_});
    }
  } else {
    switch (stage_) {
    case stage::creating:
    case stage::image_pull_error:
    case stage::stuck:
    case stage::backoff: {
      json::value w;
      w["reason"] = waiting_reason_;
      if (!waiting_message_.empty())
        w["message"] = waiting_message_;
      state["waiting"] = std::move(w);
      break;
    }
    case stage::running:
      state["running"]["startedAt"] = format_time(run_started_);
      ready = true;
      started = true;
      break;
    case stage::finished:
    case stage::stopping:
    case stage::gone:
      if (final_)
        state["terminated"] = terminated(*final_);
      else
        state["waiting"]["reason"] = waiting_reason_;
      break;
    }
  }
  s["state"] = std::move(state);
  json::value last = json::object{};
  if (!init && last_)
    last["terminated"] = terminated(*last_);
  s["lastState"] = std::move(last);
  s["ready"] = ready;
  s["restartCount"] = init ? 0 : restart_count_;
  s["image"] = c.image;
  s["imageID"] = "kozmo-sim://" + c.image;
  s["containerID"] = "kozmo-sim://" + pod_.uid + "/" + c.name + "/" + std::to_string(runs_);
  s["started"] = started;
  return s;
}

json::value pod_lifecycle::conditions() const {
  bool initialized = stage_ != stage::creating && stage_ != stage::image_pull_error && stage_ != stage::stuck;
  if (pod_.init_containers.empty())
    initialized = true;
  bool ready = stage_ == stage::running;
  return pod_conditions_json(initialized, ready, stage_ == stage::finished, created_);
}

json::value pod_lifecycle::status_json() const {
  json::value st = pod_status_head(phase_, conditions(), pod_.host_ip, stage_ != stage::creating ? pod_.pod_ip : "",
                                   created_);
  if (!pod_.init_containers.empty()) {
    json::array init;
    for (const auto& c : pod_.init_containers)
      init.push_back(container_status(c, true));
    st["initContainerStatuses"] = std::move(init);
  }
  json::array main;
  for (const auto& c : pod_.containers)
    main.push_back(container_status(c, false));
  st["containerStatuses"] = std::move(main);
  return st;
}

} // namespace kozmo::kubelet
