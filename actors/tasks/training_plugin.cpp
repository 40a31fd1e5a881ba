#include "actors/tasks/training_plugin.hpp"

#include "actors/demystify/demystify.hpp"
#include "actors/tasks/machinery.hpp"
#include "actors/tasks/names.hpp"
#include "actors/tasks/pod_plugin.hpp"
#include "actors/tasks/pod_template_merge.hpp"
#include "actors/tasks/task_pod.hpp"
#include "actors/training/job_model.hpp"
#include "k8s/model/kozmo_keys.hpp"
#include "k8s/model/pod_json.hpp"

#include <algorithm>
#include <utility>

namespace kozmo::tasks {
namespace {

// spec.type → the training kind's name.
const std::vector<std::pair<std::string, std::string_view>>& type_table() {
  static const std::vector<std::pair<std::string, std::string_view>> t = {
      {"pytorch", "PyTorchJob"}, {"tensorflow", "TFJob"}, {"mpi", "MPIJob"},    {"xgboost", "XGBoostJob"},
      {"paddle", "PaddleJob"},   {"jax", "JAXJob"},       {"caffe2", "Caffe2Job"}};
  return t;
}

const training::kind_traits* traits_of(const std::string& type) {
  for (const auto& [t, kind] : type_table())
    if (t == type)
      return training::traits_for(kind);
  return nullptr;
}

object_kind kind_of(const training::kind_traits& k) {
  std::string api(k.api_version);
  auto slash = api.find('/');
  return {api.substr(0, slash), api.substr(slash + 1), std::string(k.plural)};
}

// The replica's main container as the training controller picks it: the one named after the
// kind, else the first.
std::string main_container_of(const json::value& pod_spec, const training::kind_traits& k) {
  const auto* list = pod_spec.find("containers");
  if (!list || !list->is_array() || list->as_array().empty())
    return {};
  for (const auto& c : list->as_array())
    if (c.get_string("name") == k.default_container)
      return std::string(k.default_container);
  return list->as_array().front().get_string("name");
}

class training_task_plugin final : public plugin {
public:
  training_task_plugin(std::string type, const training::kind_traits& k) : type_(std::move(type)), k_(k) {}

  std::string type() const override { return type_; }

  plugin_answer handle(const task_context& ctx) const override {
    plugin_answer a;
    std::string name = attempt_pod_name(ctx.task->metadata.name, ctx.attempt);
    a.job = std::string(k_.name) + "/" + name;
    bool created = ctx.plugin_state.get_bool("created");
    a.plugin_state = json::object{{"created", created}};
    const k8s::custom_object* job = find_job(ctx, name);
    if (!job) {
      if (created) {
        a.info = retryable_failure(error_kind::system, "ResourceDeletedExternally",
                                   std::string(k_.name) + " " + name + " was deleted before it finished");
        return a;
      }
      return create(ctx, std::move(a), name);
    }
    if (job->metadata.deletion_timestamp) {
      a.info = retryable_failure(error_kind::system, "UnexpectedObjectDeletion",
                                 std::string(k_.name) + " " + name + " is being deleted before it finished");
      return a;
    }
    a.info = observe(ctx, *job, name);
    return a;
  }

  std::vector<delete_object> abort(const task_context& ctx) const override {
    std::vector<delete_object> out;
    std::string name = attempt_pod_name(ctx.task->metadata.name, ctx.attempt);
    if (const auto* job = find_job(ctx, name); job && !job->metadata.deletion_timestamp)
      out.push_back({job->metadata.name, job->metadata.uid, kind_of(k_)});
    return out;
  }

  // The job cleans up after itself (its runPolicy.cleanPodPolicy and TTL).
  std::vector<delete_object> finalize(const task_context&) const override { return {}; }

private:
  std::string type_;
  const training::kind_traits& k_;

  const k8s::custom_object* find_job(const task_context& ctx, const std::string& name) const {
    for (const auto& o : ctx.owned)
      if (o.resource == k_.plural && o.object->metadata.name == name)
        return o.object;
    return nullptr;
  }

  // The replica specs of spec.job, each as (path, spec): one for Caffe2Job's single spec.
  std::vector<std::pair<std::string, json::value*>> replicas_of(json::value& job_spec) const {
    std::vector<std::pair<std::string, json::value*>> out;
    std::string base = "spec.job." + std::string(k_.replica_specs_key);
    json::value* specs = job_spec.find(k_.replica_specs_key);
    if (!specs || !specs->is_object())
      return out;
    if (k_.kind == training::job_kind::caffe2) {
      out.emplace_back(base, specs);
      return out;
    }
    for (auto& [type, spec] : specs->as_object())
      if (spec.is_object())
        out.emplace_back(base + "." + type, &spec);
    return out;
  }

  plugin_answer create(const task_context& ctx, plugin_answer a, const std::string& name) const {
    if (!ctx.template_name.empty() && !ctx.template_known) {
      a.needs_template = true;
      return a;
    }
    const json::value* templ = ctx.pod_template;
    if (ctx.template_known && !templ && !ctx.spec->pod_template_name.empty()) {
      a.info = permanent_failure(error_kind::user, "PodTemplateNotFound",
                                 "PodTemplate \"" + ctx.template_name + "\" does not exist in namespace \"" +
                                     ctx.task->metadata.namespace_ + "\" (spec.podTemplateName): create it, or fix "
                                     "the name, and create the task again");
      return a;
    }
    auto job = build_job(ctx, name, templ);
    if (!job) {
      a.info = permanent_failure(error_kind::user, "InvalidSpec",
                                 job.err().message + "; fix the TaskExecution and create it again");
      return a;
    }
    a.creates.push_back({std::move(*job), kind_of(k_)});
    a.plugin_state = json::object{{"created", true}};
    a.info = queued("Created", std::string(k_.name) + " " + name + " is created; its pods wait to be scheduled");
    return a;
  }

  expected<json::value> build_job(const task_context& ctx, const std::string& name, const json::value* templ) const {
    const auto& meta = ctx.task->metadata;
    json::value job = json::object{};
    job["apiVersion"] = std::string(k_.api_version);
    job["kind"] = std::string(k_.name);
    job["metadata"] = attempt_metadata(*ctx.task, *ctx.config, ctx.attempt, false);
    job["spec"] = ctx.spec->job;

    attempt_pod_input in{ctx.task, ctx.spec, ctx.config, ctx.attempt, ctx.interruptible, templ};
    for (auto& [path, replica] : replicas_of(job["spec"])) {
      json::value* t = replica->find("template");
      if (!t || !t->is_object())
        continue; // the training core's validation below names it
      static const json::value none;
      const json::value* tmeta = t->find("metadata");
      const json::value* tspec = t->find("spec");
      std::string main = main_container_of(tspec ? *tspec : none, k_);
      json::value pod = json::object{{"metadata", tmeta && tmeta->is_object() ? *tmeta : json::value(json::object{})},
                                     {"spec", tspec ? *tspec : json::value(json::object{})}};
      if (templ)
        pod = merge_pod_template(*templ, pod, main);
      pod["metadata"]["labels"][keys::task_name] = meta.name;
      pod["metadata"]["labels"][keys::task_attempt] = std::to_string(ctx.attempt);
      if (auto st = decorate_pod_spec(pod["spec"], in, {main, path + ".template.spec", name}); !st)
        return st.err();
      (*t)["metadata"] = std::move(pod["metadata"]);
      (*t)["spec"] = std::move(pod["spec"]);
    }
    // As the training controller will read it: a malformed job fails the task now.
    k8s::custom_object obj;
    obj.api_version = std::string(k_.api_version);
    obj.kind = std::string(k_.name);
    obj.metadata.name = name;
    obj.metadata.namespace_ = meta.namespace_;
    obj.document = job;
    if (auto decoded = training::decode_job(obj); !decoded) {
      const std::string& msg = decoded.err().message; // "spec.pytorchReplicaSpecs... "
      return error::invalid(msg.rfind("spec.", 0) == 0 ? "spec.job." + msg.substr(5) : "spec.job: " + msg);
    }
    return job;
  }

  phase_info observe(const task_context& ctx, const k8s::custom_object& job, const std::string& name) const {
    static const json::value none;
    const json::value* st = job.document.find("status");
    auto status = training::status_from_json(st ? *st : none);
    std::string what = std::string(k_.name) + " " + name;
    auto message_of = [&](std::string_view type, const std::string& fallback) {
      const auto* c = training::find_condition(status, type);
      return c && !c->message.empty() ? c->message : fallback;
    };
    if (training::is_succeeded(status))
      return success(what + " succeeded");
    if (training::is_failed(status)) {
      const auto* c = training::find_condition(status, training::condition_type::failed);
      return retryable_failure(error_kind::user, c && !c->reason.empty() ? c->reason : "JobFailed",
                               what + " failed: " + message_of(training::condition_type::failed, "no message"));
    }
    // The job's pods, as an attempt's pod is read: one that cannot start fails the attempt.
    auto grace = grace_of(*ctx.config);
    std::optional<phase_info> waiting; // the first pod still waiting, for the message
    std::optional<time_point> wake;
    for (const auto* p : pods_of_attempt(ctx.pods, ctx.attempt)) {
      if (p->metadata.deletion_timestamp || pod_finished(*p))
        continue;
      auto info = phase_of(demystify::of_pod(*p, main_container_of_pod(*p), false, grace, ctx.now), true);
      if (info.wake_at && (!wake || *info.wake_at < *wake))
        wake = info.wake_at;
      if (info.is_failure()) {
        info.message = "pod " + p->metadata.name + " of " + what + ": " + info.message;
        return info;
      }
      if (!waiting && (info.phase == plugin_phase::queued || info.phase == plugin_phase::initializing)) {
        info.message = "pod " + p->metadata.name + " of " + what + ": " +
                       (info.message.empty() ? std::string("waits to be scheduled") : info.message);
        waiting = std::move(info);
      }
    }
    phase_info out;
    if (training::has_true(status, training::condition_type::suspended))
      out = queued("Suspended", message_of(training::condition_type::suspended, what + " is suspended"));
    else if (training::has_true(status, training::condition_type::restarting))
      out = running("Restarting", message_of(training::condition_type::restarting, what + " restarts a replica"));
    else if (training::has_true(status, training::condition_type::running))
      out = running("", message_of(training::condition_type::running, what + " is running"));
    else if (waiting)
      out = std::move(*waiting);
    else
      out = queued("Created", what + " is created; its pods wait to be scheduled");
    out.wake_at = wake;
    return out;
  }

  std::string main_container_of_pod(const k8s::pod& p) const {
    for (const auto& c : p.spec.containers)
      if (c.name == k_.default_container)
        return c.name;
    return p.spec.containers.empty() ? std::string() : p.spec.containers.front().name;
  }
};

} // namespace

std::vector<std::string> training_task_types() {
  std::vector<std::string> out;
  for (const auto& [t, _] : type_table())
    out.push_back(t);
  return out;
}

std::shared_ptr<const plugin> training_plugin(const std::string& type) {
  const auto* k = traits_of(type);
  if (!k)
    return nullptr;
  return std::make_shared<training_task_plugin>(type, *k);
}

object_kind training_job_kind(const std::string& type) {
  const auto* k = traits_of(type);
  return k ? kind_of(*k) : object_kind{};
}

} // namespace kozmo::tasks
