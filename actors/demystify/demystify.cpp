#include "actors/demystify/demystify.hpp"

#include "k8s/model/time.hpp"

#include <vector>

namespace kozmo::demystify {
namespace {

constexpr int sigkill = 137;          // 128 + 9
constexpr int sigkill_unsigned = 247; // the same kill as some runtimes report it

verdict make(outcome what, std::string code, std::string message) {
  verdict v;
  v.what = what;
  v.code = std::move(code);
  v.message = std::move(message);
  return v;
}

verdict failure(outcome what, fault whose, std::string code, std::string message, bool cleanup) {
  auto v = make(what, std::move(code), std::move(message));
  v.whose = whose;
  v.cleanup = cleanup;
  return v;
}

// "[main] terminated with exit code (137). Reason [OOMKilled]. Message: \n<text>."
std::string terminated_line(const std::string& name, const k8s::container_state_terminated& t) {
  return "\r\n[" + name + "] terminated with exit code (" + std::to_string(t.exit_code) + "). Reason [" + t.reason +
         "]. Message: \n" + t.message + ".";
}

bool is_oom(const k8s::container_state_terminated& t) { return t.reason.find("OOMKilled") != std::string::npos; }
bool is_sigkill(const k8s::container_state_terminated& t) {
  return t.exit_code == sigkill || t.exit_code == sigkill_unsigned;
}

// The statuses of init containers first, then the others: an init container that cannot start
// is why the pod waits.
std::vector<const k8s::container_status*> all_statuses(const k8s::pod& pod) {
  std::vector<const k8s::container_status*> out;
  for (const auto& s : pod.status.init_container_statuses)
    out.push_back(&s);
  for (const auto& s : pod.status.container_statuses)
    out.push_back(&s);
  return out;
}

// "Grace period [3m0s] exceeded|<message>"
std::string after_grace(const std::string& message, milliseconds grace) {
  return "Grace period [" + k8s::format_go_duration(grace) + "] exceeded|" + message;
}

// A waiting container with a grace period: initializing until it runs out, then `fail`.
verdict within_grace(const std::string& code, const std::string& message, milliseconds grace, time_point since,
                     time_point now, verdict (*fail)(const std::string&, std::string)) {
  if (now - since >= grace)
    return fail(code, after_grace(message, grace));
  auto v = make(outcome::initializing, code, message);
  v.deadline = since + grace;
  return v;
}

// The peer's walk of a Pending pod's conditions. Returns nullopt when nothing says more than
// "scheduling".
std::optional<verdict> pending_reason(const k8s::pod& pod, const grace_periods& grace, time_point now) {
  for (const auto& c : pod.status.conditions) {
    time_point t = c.last_transition_time.value_or(now);
    if (c.type == "PodScheduled" && c.status == "False") {
      // Waiting for room (Insufficient nvidia.com/gpu, a gang that does not fit yet): not a
      // failure, the scheduler keeps trying.
      std::string why = c.reason.empty() ? "Unschedulable" : c.reason;
      return make(outcome::queued, why, c.message.empty() ? "the pod is waiting to be scheduled" : c.message);
    }
    if (c.type != "Ready" || c.status != "False")
      continue;
    for (const auto* s : all_statuses(pod)) {
      if (s->ready || !s->state.waiting)
        continue;
      const std::string& reason = s->state.waiting->reason;
      std::string message = "[" + s->name + "] " + reason +
                            (s->state.waiting->message.empty() ? "" : ": " + s->state.waiting->message);
      switch (classify_waiting(reason)) {
      case waiting_class::creating:
        return make(outcome::initializing, reason, message);
      case waiting_class::create_error:
        // Transient runtime trouble or a broken container: the platform's, retried after a
        // grace period (the peer counts it as the user's and never retries).
        return within_grace(reason, message, grace.create_container_error, t, now,
                            [](const std::string& code, std::string msg) {
                              return failure(outcome::retryable_failure, fault::system, code, std::move(msg), true);
                            });
      case waiting_class::config_error:
        return within_grace(reason, message, grace.create_container_config_error, t, now,
                            [](const std::string& code, std::string msg) {
                              return failure(outcome::permanent_failure, fault::user, code,
                                             std::move(msg) + " (check the Secrets and ConfigMaps the pod refers to)",
                                             true);
                            });
      case waiting_class::invalid_image:
        return failure(outcome::permanent_failure, fault::user, reason, message + " (fix the image name)", true);
      case waiting_class::image_pull:
        return within_grace(reason, message, grace.image_pull_backoff, t, now,
                            [](const std::string& code, std::string msg) {
                              return failure(outcome::retryable_failure, fault::user, code,
                                             std::move(msg) + " (check the image name, its tag and the pull secrets)",
                                             true);
                            });
      case waiting_class::other:
        return failure(outcome::retryable_failure, fault::system, reason, message, true);
      }
    }
  }
  return std::nullopt;
}

} // namespace

waiting_class classify_waiting(std::string_view reason) {
  if (reason == "ContainerCreating" || reason == "PodInitializing" || reason == "ErrImagePull")
    return waiting_class::creating; // ErrImagePull turns into ImagePullBackOff: wait for that
  if (reason == "ImagePullBackOff")
    return waiting_class::image_pull;
  if (reason == "InvalidImageName")
    return waiting_class::invalid_image;
  if (reason == "CreateContainerError")
    return waiting_class::create_error;
  if (reason == "CreateContainerConfigError")
    return waiting_class::config_error;
  return waiting_class::other;
}

verdict pending(const k8s::pod& pod, const grace_periods& grace, time_point now) {
  auto found = pending_reason(pod, grace, now);
  if (found && found->is_failure())
    return *found;
  verdict v = found ? *found : make(outcome::queued, "Scheduling", "the pod is waiting to be scheduled");
  // The pending timeout runs from the pod's creation: a pod no scheduler ever looks at (no
  // conditions at all) times out too (the peer measures from the last condition and never does).
  if (grace.pending_timeout.count() > 0 && pod.metadata.creation_timestamp) {
    auto deadline = *pod.metadata.creation_timestamp + grace.pending_timeout;
    if (now >= deadline)
      return failure(outcome::retryable_failure, fault::user, "PodPendingTimeout",
                     "the pod was still pending after " + k8s::format_go_duration(grace.pending_timeout) +
                         " (pod-pending-timeout): " + (v.code.empty() ? "" : v.code + ": ") + v.message,
                     true);
    if (!v.deadline || deadline < *v.deadline)
      v.deadline = deadline;
  }
  return v;
}

verdict failed(const k8s::pod& pod, std::string_view primary) {
  std::string code = pod.status.reason.empty() ? "UnknownError" : pod.status.reason;
  std::string message = pod.status.message.empty() ? "Pod failed. No message received from kubernetes."
                                                   : pod.status.message;
  // Node interruptions as providers report them: the platform's failure.
  bool system = code == "Shutdown" || code == "Terminated" || code == "NodeShutdown" || code == "NodeAffinity";
  bool explained = false; // a container's own exit says why
  for (const auto* s : all_statuses(pod)) {
    const auto& state = s->last_state.terminated ? s->last_state : s->state;
    if (!state.terminated)
      continue;
    const auto& t = *state.terminated;
    if (is_oom(t)) {
      code = "OOMKilled";
      explained = true;
    } else if (is_sigkill(t)) {
      code = "Interrupted";
      // A sidecar may be killed because the primary ended; only the primary's kill is the
      // node's doing.
      if (primary.empty() || s->name == primary)
        system = true;
      else
        explained = true;
    } else if (t.exit_code != 0) {
      // The program failed: its own reason ("Error"), unless the pod says more.
      if (code == "UnknownError")
        code = t.reason.empty() ? "Error" : t.reason;
      explained = true;
    }
    message += t.exit_code == 0 ? "\r\n[" + s->name + "] terminated with ExitCode 0." : terminated_line(s->name, t);
  }
  // Nothing explains the failure: the kubelet had no chance to say more, the node went away.
  if (code == "UnknownError" && !explained)
    system = true;
  if (system)
    code = "Interrupted";
  return failure(outcome::retryable_failure, system ? fault::system : fault::user, code, message, false);
}

verdict succeeded(const k8s::pod& pod, std::string_view primary) {
  (void)primary;
  for (const auto* s : all_statuses(pod))
    if (s->state.terminated && is_oom(*s->state.terminated))
      return failure(outcome::retryable_failure, fault::user, "OOMKilled",
                     "Pod reported success despite being OOMKilled" + terminated_line(s->name, *s->state.terminated),
                     false);
  return make(outcome::succeeded, "", "");
}

verdict primary_container(const k8s::pod& pod, std::string_view primary) {
  for (const auto& s : pod.status.container_statuses) {
    if (s.name != primary)
      continue;
    if (!s.state.terminated)
      return make(outcome::running, "", "");
    const auto& t = *s.state.terminated;
    std::string message = terminated_line(s.name, t);
    if (is_oom(t))
      return failure(outcome::retryable_failure, fault::user, "OOMKilled", message, false);
    if (is_sigkill(t))
      return failure(outcome::retryable_failure, fault::system, "Interrupted", message, false);
    if (t.exit_code != 0)
      return failure(outcome::retryable_failure, fault::user, t.reason.empty() ? "Error" : t.reason, message, false);
    return make(outcome::succeeded, "", "");
  }
  return failure(outcome::permanent_failure, fault::user, "PrimaryContainerNotFound",
                 "Primary container [" + std::string(primary) + "] not found in pod's container statuses", false);
}

verdict of_pod(const k8s::pod& pod, std::string_view primary, bool primary_decides, const grace_periods& grace,
               time_point now) {
  const std::string& phase = pod.status.phase;
  if (phase == "Succeeded")
    return succeeded(pod, primary);
  if (phase == "Failed")
    return failed(pod, primary);
  if (phase == "Pending" || phase.empty())
    return pending(pod, grace, now);
  if (phase == "Unknown")
    return make(outcome::running, "Unknown", "the pod's node does not report its state");
  // Running.
  if (primary_decides)
    return primary_container(pod, primary);
  return make(outcome::running, "", "");
}

} // namespace kozmo::demystify
