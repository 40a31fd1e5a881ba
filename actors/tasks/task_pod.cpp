#include "actors/tasks/task_pod.hpp"

#include "actors/tasks/command_template.hpp"
#include "actors/tasks/copilot.hpp"
#include "actors/tasks/names.hpp"
#include "actors/tasks/placement.hpp"
#include "actors/tasks/pod_template_merge.hpp"
#include "actors/tasks/resources.hpp"
#include "k8s/model/kozmo_keys.hpp"
#include "k8s/model/pod_json.hpp"

#include <algorithm>

namespace kozmo::tasks {
namespace {

constexpr const char* last_applied = "kubectl.kubernetes.io/last-applied-configuration";

template_values values_for(const attempt_pod_input& in, const std::string& pod_name) {
  const auto& meta = in.task->metadata;
  const auto& prefix = in.spec->output_prefix;
  template_values v;
  v.input_prefix = in.spec->data_loading ? in.spec->data_loading->input_path : inputs_path;
  v.input = v.input_prefix + "/inputs.json";
  v.output_prefix = prefix;
  if (!prefix.empty()) {
    v.raw_output_data_prefix = prefix + "/raw";
    v.checkpoint_output_prefix = prefix + "/checkpoints/" + std::to_string(in.attempt);
    if (in.attempt > 0)
      v.prev_checkpoint_prefix = prefix + "/checkpoints/" + std::to_string(in.attempt - 1);
  }
  v.per_retry_unique_key = pod_name;
  v.task_template_path = "/apis/kozmo.io/v1alpha1/namespaces/" + meta.namespace_ + "/taskexecutions/" + meta.name;
  v.namespace_ = meta.namespace_;
  v.inputs = in.spec->inputs;
  return v;
}

std::vector<std::pair<std::string, std::string>> identity_env(const attempt_pod_input& in) {
  const auto& meta = in.task->metadata;
  std::vector<std::pair<std::string, std::string>> env = {
      {"KOZMO_TASK_NAME", meta.name},
      {"KOZMO_TASK_NAMESPACE", meta.namespace_},
      {"KOZMO_TASK_UID", meta.uid},
      {"KOZMO_PROJECT", project_of(meta)},
      {"KOZMO_ATTEMPT_NUMBER", std::to_string(in.attempt)},
  };
  if (!in.spec->output_prefix.empty())
    env.emplace_back("KOZMO_OUTPUT_PREFIX", in.spec->output_prefix);
  for (const auto& e : in.spec->environment)
    env.push_back(e);
  return env;
}

status render_list(json::value& container, const char* key, const template_values& values, const std::string& where) {
  json::value* list = container.find(key);
  if (!list || !list->is_array())
    return ok;
  for (std::size_t i = 0; i < list->as_array().size(); ++i) {
    json::value& item = list->as_array()[i];
    if (!item.is_string())
      continue;
    auto r = render_template(item.as_string(), values);
    if (!r)
      return error::invalid(where + "." + key + "[" + std::to_string(i) + "]: " + r.err().message);
    item = std::move(*r);
  }
  return ok;
}


status customize_containers(json::value& spec, const attempt_pod_input& in, const template_values& values,
                            const pod_spec_site& site) {
  auto env = identity_env(in);
  bool container_task = in.spec->type == "container";
  for (const char* list_key : {"initContainers", "containers"}) {
    json::value* list = spec.find(list_key);
    if (!list || !list->is_array())
      continue;
    for (auto& c : list->as_array()) {
      std::string name = c.get_string("name");
      std::string where = container_task ? "spec.container" : site.path + "." + list_key + "[" + name + "]";
      for (const char* key : {"command", "args"})
        if (auto st = render_list(c, key, values, where); !st)
          return st;
      k8s::add_env_if_absent(c, env);
      bool primary = name == site.primary && std::string(list_key) == "containers";
      resource_mode mode = !primary ? resource_mode::ensure_in_range
                                    : (container_task ? resource_mode::assign : resource_mode::merge_existing);
      static const json::value none;
      const json::value* res = c.find("resources");
      json::value settled = apply_resources(res ? *res : none, primary ? in.spec->resources : none, mode, *in.config);
      if (settled.as_object().empty())
        c.as_object().erase("resources");
      else
        c["resources"] = std::move(settled);
    }
  }
  return ok;
}

// spec.secrets: by reference only. Env values come from secretKeyRef; files from one secret
// volume per Secret, each key mounted read-only at its path (subPath). Every container gets them.
void add_secrets(json::value& pod_spec, const task_spec& spec) {
  if (spec.secrets.empty())
    return;
  std::map<std::string, std::string> volume_of; // Secret → volume
  for (const auto& sec : spec.secrets)
    if (sec.as_file && !volume_of.count(sec.name))
      volume_of.emplace(sec.name, "kozmo-secret-" + std::to_string(volume_of.size()));
  if (!volume_of.empty()) {
    json::value& volumes = pod_spec["volumes"];
    if (!volumes.is_array())
      volumes = json::array{};
    for (const auto& [secret, volume] : volume_of)
      volumes.as_array().push_back(json::object{{"name", volume}, {"secret", json::object{{"secretName", secret}}}});
  }
  for (const char* list_key : {"initContainers", "containers"}) {
    json::value* list = pod_spec.find(list_key);
    if (!list || !list->is_array())
      continue;
    for (auto& c : list->as_array()) {
      for (const auto& sec : spec.secrets) {
        if (sec.as_file) {
          json::value& mounts = c["volumeMounts"];
          if (!mounts.is_array())
            mounts = json::array{};
          mounts.as_array().push_back(json::object{{"name", volume_of.at(sec.name)},
                                                   {"mountPath", sec.path},
                                                   {"subPath", sec.key},
                                                   {"readOnly", true}});
          continue;
        }
        json::value& env = c["env"];
        if (!env.is_array())
          env = json::array{};
        bool set = std::any_of(env.as_array().begin(), env.as_array().end(),
                               [&](const json::value& e) { return e.get_string("name") == sec.env_var; });
        if (!set)
          env.as_array().push_back(json::object{
              {"name", sec.env_var},
              {"valueFrom", json::object{{"secretKeyRef", json::object{{"name", sec.name}, {"key", sec.key}}}}}});
      }
    }
  }
}

} // namespace

json::value owner_reference(const k8s::custom_object& task) {
  return json::object{{"apiVersion", api_version}, {"kind", task_kind},        {"name", task.metadata.name},
                      {"uid", task.metadata.uid},  {"controller", true},       {"blockOwnerDeletion", true}};
}

json::value attempt_metadata(const k8s::custom_object& task, const platform_config& config, int attempt,
                             bool for_pod) {
  const auto& meta = task.metadata;
  // Labels and annotations: the platform's defaults, then the task's own, then Kozmo's.
  std::map<std::string, std::string> labels = config.default_labels;
  for (const auto& [k, v] : meta.labels)
    labels[k] = v;
  labels[keys::task_name] = meta.name;
  labels[keys::task_attempt] = std::to_string(attempt);
  std::map<std::string, std::string> annotations;
  if (for_pod)
    annotations = config.default_annotations;
  for (const auto& [k, v] : meta.annotations)
    if (k != last_applied)
      annotations[k] = v;
  json::value m = json::object{};
  m["name"] = attempt_pod_name(meta.name, attempt);
  m["namespace"] = meta.namespace_;
  m["labels"] = k8s::string_map_json(labels);
  if (!annotations.empty())
    m["annotations"] = k8s::string_map_json(annotations);
  m["ownerReferences"] = json::array{owner_reference(task)};
  return m;
}

expected<json::value> build_attempt_pod(const attempt_pod_input& in) {
  const auto& meta = in.task->metadata;
  const auto& spec = *in.spec;
  std::string name = attempt_pod_name(meta.name, in.attempt);

  json::value pod = json::object{};
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  pod["metadata"] = attempt_metadata(*in.task, *in.config, in.attempt, true);
  if (spec.type == "container") {
    json::value c = spec.container;
    c["name"] = spec.primary_container;
    pod["spec"] = json::object{{"containers", json::array{std::move(c)}}};
  } else {
    pod["spec"] = spec.pod_spec;
  }
  if (in.pod_template) {
    pod = merge_pod_template(*in.pod_template, pod, spec.primary_container);
    // Kozmo's own labels and the owner are not the template's to change.
    pod["metadata"]["labels"][keys::task_name] = meta.name;
    pod["metadata"]["labels"][keys::task_attempt] = std::to_string(in.attempt);
  }

  json::value& pod_spec = pod["spec"];
  if (auto st = decorate_pod_spec(pod_spec, in, {spec.primary_container, "spec.pod.spec", name}); !st)
    return st.err();
  // Data loading last: the copilot containers get none of the task's env or secrets, and the
  // data volumes are sized from the primary's settled resources.
  if (auto st = add_copilot(pod_spec, spec, in.config->copilot); !st)
    return st.err();
  pod_spec["restartPolicy"] = "Never";
  return pod;
}

status decorate_pod_spec(json::value& pod_spec, const attempt_pod_input& in, const pod_spec_site& site) {
  if (auto st = customize_containers(pod_spec, in, values_for(in, site.pod_name), site); !st)
    return st;
  add_secrets(pod_spec, *in.spec);
  if (pod_spec.get_string("schedulerName").empty() && !in.config->scheduler_name.empty())
    pod_spec["schedulerName"] = in.config->scheduler_name;
  apply_interruptible_and_defaults(pod_spec, in.interruptible, *in.config);
  if (in.spec->accelerator)
    apply_gpu_selectors(pod_spec, *in.spec->accelerator, *in.config);
  return ok;
}

} // namespace kozmo::tasks
