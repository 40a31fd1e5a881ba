#include "actors/scheduler/pod_reporter.hpp"

#include "k8s/client/client.hpp"
#include "k8s/model/pod_patches.hpp"

#include <spdlog/spdlog.h>

namespace kozmo::scheduler {

pod_reporter::pod_reporter(std::shared_ptr<client::client> cli, std::function<void(controller::event_note)> record,
                           std::string component, double refreshes_per_second)
    : cli_(std::move(cli)), record_(std::move(record)), component_(std::move(component)),
      rate_(refreshes_per_second > 0 ? refreshes_per_second : 1), tokens_(rate_) {}

void pod_reporter::event(const pod_ref& pod, const char* type, const std::string& reason, const std::string& message) {
  record_(controller::pod_note(pod.ns, pod.name, pod.uid, {component_, ""}, type, reason, message));
}

void pod_reporter::unschedulable(const pod_ref& pod, const std::string& reason, const std::string& message) {
  cli_->patch_status({"", "v1", "pods", pod.ns, pod.name, ""}, client::patch_type::strategic,
                     k8s::pod_scheduled_false(reason, message), {}, [](expected<json::value> r) {
                       if (!r)
                         spdlog::debug("scheduler could not patch a pod condition: {}", r.err().message);
                     });
}

void pod_reporter::write_wait(const pod_ref& pod, const std::string& reason) {
  spdlog::info("scheduler pod={}/{} waiting: {}", pod.ns, pod.name, reason);
  unschedulable(pod, "Unschedulable", reason);
  event(pod, "Warning", "FailedScheduling", reason);
}

void pod_reporter::waiting(const pod_ref& pod, const std::string& reason) {
  if (said_.insert(pod.uid).second)
    return write_wait(pod, reason);
  auto [it, added] = queued_.try_emplace(pod.uid, queued_wait{pod, reason});
  if (added)
    order_.push_back(pod.uid);
  else
    it->second.reason = reason;
}

bool pod_reporter::flush(clock::time_point now) {
  if (last_ != clock::time_point{})
    tokens_ = std::min(rate_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
  last_ = now;
  while (!order_.empty() && tokens_ >= 1) {
    auto it = queued_.find(order_.front());
    order_.pop_front();
    if (it == queued_.end())
      continue;
    write_wait(it->second.pod, it->second.reason);
    queued_.erase(it);
    tokens_ -= 1;
  }
  // Uids forgotten while queued leave their slot in order_ behind: dropped here once none waits.
  if (queued_.empty())
    order_.clear();
  return !queued_.empty();
}

void pod_reporter::forget(const std::string& uid) {
  spec_error_.erase(uid);
  said_.erase(uid);
  queued_.erase(uid);
}

void pod_reporter::bad_spec(const pod_ref& pod, const std::string& message) {
  auto& last = spec_error_[pod.uid];
  if (last == message)
    return;
  last = message;
  spdlog::warn("scheduler pod={}/{} has an invalid scheduling spec: {}", pod.ns, pod.name, message);
  unschedulable(pod, "InvalidSchedulingSpec", message);
  event(pod, "Warning", "InvalidSchedulingSpec", message);
}

void pod_reporter::notices(std::vector<group_notice> notices) {
  for (const auto& n : notices) {
    spdlog::warn("scheduler group={} {}: {}", n.group, event_reason(n.kind), n.message);
    for (const auto& pod : n.pods)
      event(pod, event_type(n.kind), event_reason(n.kind), n.message);
  }
}

} // namespace kozmo::scheduler
