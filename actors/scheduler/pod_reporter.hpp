// What the GPU scheduler tells users about their pods, in one place: the PodScheduled=False
// condition and the Events (`kubectl describe pod`) for a pod that waits, a spec that cannot be
// read, a bind that failed, and what the core noticed on its own (lazy preemption, a group
// downgraded after a reconfiguration). Writes are fire and forget; Events go through the
// event recorder, which counts repeats.
#pragma once

#include "actors/controller/event_note.hpp"
#include "actors/scheduler/scheduler_core.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace kozmo::client {
class client;
}

namespace kozmo::scheduler {

class pod_reporter {
public:
  // `record` hands a note to the event recorder (the actor passes controller::record's call).
  pod_reporter(std::shared_ptr<client::client> cli, std::function<void(controller::event_note)> record,
               std::string component);

  // A pod the core could not place yet (the core says a reason only when it changed).
  void waiting(const pod_ref& pod, const std::string& reason);
  // A scheduling spec that cannot be read or does not match the configuration: said once per
  // distinct message.
  void bad_spec(const pod_ref& pod, const std::string& message);
  // The pod left the scheduler: a later bad spec of a namesake is said again.
  void forget(const std::string& uid) { spec_error_.erase(uid); }
  // Each notice, logged and posted on every pod of its group.
  void notices(std::vector<group_notice> notices);
  void event(const pod_ref& pod, const char* type, const std::string& reason, const std::string& message);

private:
  void unschedulable(const pod_ref& pod, const std::string& reason, const std::string& message);

  std::shared_ptr<client::client> cli_;
  std::function<void(controller::event_note)> record_;
  std::string component_;
  std::map<std::string, std::string> spec_error_; // uid -> the spec error already reported
};

} // namespace kozmo::scheduler
