// The plugin contract: how one kind of task (a container, a pod; training jobs next) runs an
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
  // The task's pods, every attempt (the plugin picks its own by label).
  std::vector<const k8s::pod*> pods;
  json::value plugin_state; // what the previous round wrote (null on the attempt's first)
  time_point now;
};

// What a plugin asks for.
struct create_pod {
  json::value pod;
};
struct delete_pod {
  std::string name;
  std::string uid;
};

struct plugin_answer {
  phase_info info;
  std::vector<create_pod> creates;
  std::vector<delete_pod> deletes;
  json::value plugin_state; // stored for the next round (null: none)
  std::string object;       // the name of what the attempt runs (its pod), for status.attempts
  bool needs_template = false; // ask the store for ctx.template_name, then call again
};

class plugin {
public:
  virtual ~plugin() = default;
  // The registry key, spec.type: "container", "pod".
  virtual std::string type() const = 0;
  virtual plugin_answer handle(const task_context& ctx) const = 0;
  virtual std::vector<delete_pod> abort(const task_context& ctx) const = 0;
  virtual std::vector<delete_pod> finalize(const task_context& ctx) const = 0;
};

// The plugins by spec.type. Open: the training-job plugins register here next.
class plugin_registry {
public:
  void add(std::shared_ptr<const plugin> p);
  const plugin* find(const std::string& type) const;
  std::vector<std::string> types() const;

  // The container and pod plugins.
  static plugin_registry with_builtins();

private:
  std::vector<std::shared_ptr<const plugin>> plugins_;
};

} // namespace kozmo::tasks
