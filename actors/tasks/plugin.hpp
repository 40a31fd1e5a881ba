// The plugin contract: how one kind of task (a container, a pod, a training job) runs an
// attempt. The machinery (machinery.hpp) owns everything around it: the task's phases and
// versions, retries, the pool token, timeouts, events, the finalizer. Pure: no CAF, no I/O.
//
// Rules (the peer's, kept):
//  1. `handle` is called again and again, each round with what is observed now; it never
//     blocks and is idempotent: the same world gives the same answer, and what it asks to create
//     has a name derived from the attempt, so asking twice meets the first object (409), never
//     a twin.
//  2. `abort` stops the attempt (deletes what it created); idempotent.
//  3. `finalize` runs after the attempt has ended, by handle or abort; idempotent. It may ask
//     to delete what the attempt keeps running (a pod task's sidecars).
//  4. Plugin state is a versioned JSON value the machinery stores in the task's status
//     (status.pluginState); what `handle` writes is what the next round reads.
#pragma once

#include "actors/tasks/phase.hpp"
#include "actors/tasks/platform_config.hpp"
#include "actors/tasks/task_spec.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/pod.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::tasks {

// A kind the task owns besides pods (a training job), by its REST resource; an empty resource
// means pods.
struct object_kind {
  std::string group;
  std::string version;
  std::string resource;
  bool is_pod() const { return resource.empty() || resource == "pods"; }
  friend bool operator==(const object_kind&, const object_kind&) = default;
};

// An object of such a kind that the task owns (by controller reference or the
// kozmo.io/task-name label).
struct owned_object {
  std::string resource; // "pytorchjobs"
  const k8s::custom_object* object = nullptr;
};

// What a plugin reads: the task, the attempt, what the attempt owns, and the platform.
struct task_context {
  const k8s::custom_object* task = nullptr;
  const task_spec* spec = nullptr;
  const platform_config* config = nullptr;
  int attempt = 0;
  bool interruptible = false; // this attempt may run on interruptible nodes
  // The pod template that applies (the task's podTemplateName, else the platform's default),
  // "" when none does; whether the store has answered for it, and what it holds (null when
  // the template does not exist).
  std::string template_name;
  bool template_known = false;
  const json::value* pod_template = nullptr;
  // The task's pods, every attempt (the plugin picks its own by label), and its other objects.
  std::vector<const k8s::pod*> pods;
  std::vector<owned_object> owned;
  json::value plugin_state; // what the previous round wrote (null on the attempt's first)
  time_point now;
};

// What a plugin asks for: a pod, or an object of another kind (`kind`).
struct create_object {
  json::value object;
  object_kind kind;
};
struct delete_object {
  std::string name;
  std::string uid;
  object_kind kind;
};

struct plugin_answer {
  phase_info info;
  std::vector<create_object> creates;
  std::vector<delete_object> deletes;
  json::value plugin_state; // stored for the next round (null: none)
  std::string object;       // the name of the attempt's pod, for status.attempts[].pod
  std::string job;          // training: the attempt's job ("PyTorchJob/<name>"), for status.attempts[].job
  bool needs_template = false; // ask the store for ctx.template_name, then call again
};

class plugin {
public:
  virtual ~plugin() = default;
  // The registry key, spec.type: "container", "pod", "pytorch", ...
  virtual std::string type() const = 0;
  virtual plugin_answer handle(const task_context& ctx) const = 0;
  virtual std::vector<delete_object> abort(const task_context& ctx) const = 0;
  virtual std::vector<delete_object> finalize(const task_context& ctx) const = 0;
};

// The plugins by spec.type.
class plugin_registry {
public:
  void add(std::shared_ptr<const plugin> p);
  const plugin* find(const std::string& type) const;
  std::vector<std::string> types() const;

  // The container and pod plugins and, with `training_jobs` (the training controller runs to
  // carry the jobs out), one per training kind (training_plugin.hpp).
  static plugin_registry with_builtins(bool training_jobs = false);

private:
  std::vector<std::shared_ptr<const plugin>> plugins_;
};

} // namespace kozmo::tasks
