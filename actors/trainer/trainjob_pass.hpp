// The pass's working state and the steps it takes, shared by trainjob_reconcile.cpp and
// trainjob_pass.cpp (internal: not a public interface).
#pragma once

#include "actors/controller/primary.hpp"
#include "actors/trainer/trainjob_reconcile.hpp"

#include <map>
#include <optional>
#include <string>

namespace kozmo::trainer::detail {

inline const std::string component = "trainjob-controller";

using controller::create_step;
using controller::delete_step;
using controller::event_step;
using controller::guard_step;
using controller::patch_step;

struct pass {
  const observed& w;
  const options& opt;
  pass_result out;
  train_status before;
  std::string ns, name, uid;
  std::map<std::string, const k8s::pod*> pods; // by name: ours, not being deleted
  std::map<std::string, int> restarts;         // kozmo.io/restarts
  bool restarts_changed = false;
  bool guarded = false;

  client::resource_ref core(const std::string& resource, const std::string& n = {}) const {
    return {"", "v1", resource, ns, n, ""};
  }
  void event(std::string type, std::string reason, std::string message) {
    controller::event_note note;
    note.about = controller::reference_to(w.job);
    note.source = {component, ""};
    note.type = std::move(type);
    note.reason = std::move(reason);
    note.message = std::move(message);
    out.plan.steps.push_back(event_step{std::move(note)});
  }
  void create(const std::string& resource, json::value object) {
    if (!guarded) { // a job deleted a moment ago must not get new pods: re-read it first
      out.plan.steps.push_back(guard_step{trainjob_ref(ns, name), uid, false, ""});
      guarded = true;
    }
    out.plan.steps.push_back(create_step{core(resource), std::move(object)});
  }
  void remove(const k8s::pod& p) {
    out.plan.steps.push_back(delete_step{core("pods", p.metadata.name), p.metadata.uid, "Background"});
    pods.erase(p.metadata.name);
  }
  void set(std::string_view type, bool status, std::string reason, std::string message) {
    set_condition(out.status, type, status, std::move(reason), std::move(message), w.now);
  }
  void fail(std::string reason, std::string message) {
    set(condition::failed, true, reason, message);
    if (const auto* r = find_condition(out.status, condition::running); r && r->status == "True")
      set(condition::running, false, reason, message);
    event("Warning", std::move(reason), std::move(message));
    stop_active();
  }
  void stop_active() {
    std::vector<const k8s::pod*> active;
    for (const auto& [_, p] : pods)
      if (p->status.phase != "Succeeded" && p->status.phase != "Failed")
        active.push_back(p);
    for (const auto* p : active)
      remove(*p);
  }
};

bool ours(const k8s::pod& p, const std::string& uid);
bool pod_ready(const k8s::pod& p);
std::map<std::string, int> read_restarts(const k8s::object_meta& m);
// trainjob_reconcile.hpp's rule 2: the runtime this pass runs (the snapshot's, else the live one,
// taking the snapshot), or nothing when the job must wait or has failed.
std::optional<json::value> runtime_document(pass& p, const train_job& job);

} // namespace kozmo::trainer::detail
