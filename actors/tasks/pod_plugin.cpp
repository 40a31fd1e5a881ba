#include "actors/tasks/pod_plugin.hpp"

#include "actors/demystify/demystify.hpp"
#include "actors/tasks/copilot.hpp"
#include "actors/tasks/machinery.hpp"
#include "actors/tasks/names.hpp"
#include "actors/tasks/task_pod.hpp"

namespace kozmo::tasks {
namespace {

// One message for "created, not placed yet", whether the round created the pod or saw it: a
// status that says the same thing twice is not written twice.
std::string scheduling_message(const std::string& pod) { return "pod " + pod + " waits to be scheduled"; }

class one_pod_plugin final : public plugin {
public:
  explicit one_pod_plugin(std::string type) : type_(std::move(type)) {}

  std::string type() const override { return type_; }

  plugin_answer handle(const task_context& ctx) const override {
    plugin_answer a;
    std::string name = attempt_pod_name(ctx.task->metadata.name, ctx.attempt);
    a.object = name;
    bool created = ctx.plugin_state.get_bool("created");
    a.plugin_state = json::object{{"created", created}};
    const k8s::pod* pod = nullptr;
    for (const auto* p : pods_of_attempt(ctx.pods, ctx.attempt))
      if (p->metadata.name == name)
        pod = p;
    if (!pod)
      return created ? deleted_externally(std::move(a), name) : create(ctx, std::move(a), name);
    if (pod->metadata.deletion_timestamp && !pod_finished(*pod)) {
      a.info = retryable_failure(error_kind::system, "UnexpectedObjectDeletion",
                                 "pod " + name + " is being deleted before it finished (by a user, a node drain or a "
                                 "preemption)");
      return a;
    }
    auto verdict = demystify::of_pod(*pod, ctx.spec->primary_container, type_ == "pod", grace_of(*ctx.config), ctx.now);
    // Data loading: a failed copilot container says more than "Error" (copilot.hpp).
    if (ctx.spec->data_loading)
      if (auto copilot = copilot_verdict(*pod, ctx.spec->primary_container, ctx.now))
        verdict = std::move(*copilot);
    a.info = phase_of(verdict);
    if (a.info.phase == plugin_phase::queued && a.info.reason == "Scheduling")
      a.info.message = scheduling_message(name);
    if (a.info.message.empty() && a.info.phase == plugin_phase::running)
      a.info.message = "pod " + name + " runs on " + (pod->spec.node_name.empty() ? "its node" : pod->spec.node_name);
    if (a.info.message.empty() && a.info.phase == plugin_phase::success)
      a.info.message = "pod " + name + " succeeded";
    return a;
  }

  std::vector<delete_object> abort(const task_context& ctx) const override {
    std::vector<delete_object> out;
    for (const auto* p : pods_of_attempt(ctx.pods, ctx.attempt))
      if (!p->metadata.deletion_timestamp)
        out.push_back({p->metadata.name, p->metadata.uid});
    return out;
  }

  // Sidecars of a pod task run on after the primary container ends: stop them.
  std::vector<delete_object> finalize(const task_context& ctx) const override {
    std::vector<delete_object> out;
    for (const auto* p : pods_of_attempt(ctx.pods, ctx.attempt))
      if (!p->metadata.deletion_timestamp && !pod_finished(*p))
        out.push_back({p->metadata.name, p->metadata.uid});
    return out;
  }

private:
  std::string type_;

  static plugin_answer deleted_externally(plugin_answer a, const std::string& name) {
    a.info = retryable_failure(error_kind::system, "ResourceDeletedExternally",
                               "pod " + name + " was deleted before it finished (by a user, a node drain or a preemption)");
    return a;
  }

  static plugin_answer create(const task_context& ctx, plugin_answer a, const std::string& name) {
    if (!ctx.template_name.empty() && !ctx.template_known) {
      a.needs_template = true;
      return a;
    }
    const json::value* templ = ctx.pod_template;
    bool explicit_template = !ctx.spec->pod_template_name.empty();
    if (ctx.template_known && !templ && explicit_template) {
      a.info = permanent_failure(error_kind::user, "PodTemplateNotFound",
                                 "PodTemplate \"" + ctx.template_name + "\" does not exist in namespace \"" +
                                     ctx.task->metadata.namespace_ + "\" (spec.podTemplateName): create it, or fix "
                                     "the name, and create the task again");
      return a;
    }
    attempt_pod_input in{ctx.task, ctx.spec, ctx.config, ctx.attempt, ctx.interruptible, templ};
    auto pod = build_attempt_pod(in);
    if (!pod) {
      a.info = permanent_failure(error_kind::user, "InvalidSpec", pod.err().message);
      return a;
    }
    a.creates.push_back({std::move(*pod)});
    a.plugin_state = json::object{{"created", true}};
    a.info = queued("Scheduling", scheduling_message(name));
    return a;
  }
};

} // namespace

phase_info phase_of(const demystify::verdict& v, bool cleanup_failures) {
  phase_info i;
  auto kind = v.whose == demystify::fault::system ? error_kind::system : error_kind::user;
  bool cleanup = v.cleanup || cleanup_failures;
  switch (v.what) {
  case demystify::outcome::queued: i = queued(v.code, v.message); break;
  case demystify::outcome::initializing: i = initializing(v.code, v.message); break;
  case demystify::outcome::running: i = running(v.code, v.message); break;
  case demystify::outcome::succeeded: i = success(v.message); break;
  case demystify::outcome::retryable_failure: i = retryable_failure(kind, v.code, v.message, cleanup); break;
  case demystify::outcome::permanent_failure: i = permanent_failure(kind, v.code, v.message, cleanup); break;
  }
  i.wake_at = v.deadline;
  return i;
}

demystify::grace_periods grace_of(const platform_config& c) {
  demystify::grace_periods g;
  g.create_container_error = c.create_container_error_grace_period;
  g.create_container_config_error = c.create_container_config_error_grace_period;
  g.image_pull_backoff = c.image_pull_backoff_grace_period;
  g.pending_timeout = c.pod_pending_timeout;
  return g;
}

std::shared_ptr<const plugin> container_plugin() { return std::make_shared<one_pod_plugin>("container"); }
std::shared_ptr<const plugin> pod_plugin() { return std::make_shared<one_pod_plugin>("pod"); }

} // namespace kozmo::tasks
