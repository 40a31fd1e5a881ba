#include "actors/training/pod_builder.hpp"

#include "k8s/model/kozmo_keys.hpp"
#include "k8s/model/pod_json.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace kozmo::training {
namespace {

constexpr const char* mpi_volume = "mpi-job-config";
constexpr const char* kubectl_volume = "mpi-job-kubectl";

void set_if_absent(json::value& obj, std::string_view key, json::value v) {
  if (obj.find(key) == nullptr)
    obj[key] = std::move(v);
}

std::map<std::string, std::string> replica_labels(const training_job& job, std::string_view type, int index) {
  auto labels = job_labels(job);
  labels[label::replica_type] = lower_type(type);
  labels[label::replica_index] = std::to_string(index);
  return labels;
}


json::value* container_named(json::value& pod_spec, const std::string& name) {
  for (json::value& c : pod_spec["containers"].as_array())
    if (c.get_string("name") == name)
      return &c;
  return nullptr;
}

// The MPIJob's ConfigMap at /etc/mpi in the replica's main container, as the peer mounts it: the
// launcher gets the hostfile and both scripts, a worker only kubexec.sh.
void mount_mpi_config(const training_job& job, const replica_spec& spec, json::value& pod_spec, const options& opt) {
  const bool launcher = spec.type == "Launcher";
  json::value& volumes = pod_spec["volumes"];
  if (!volumes.is_array())
    volumes = json::array{};
  json::array items;
  auto item = [&](const char* key, int mode) { items.push_back(json::object{{"key", key}, {"path", key}, {"mode", mode}}); };
  item("kubexec.sh", 0555);
  if (launcher) {
    item("hostfile", 0444);
    item("discover_hosts.sh", 0555);
  }
  json::value cm = json::object{{"name", mpi_config_map_name(job)}};
  cm["items"] = std::move(items);
  json::value vol = json::object{{"name", mpi_volume}};
  vol["configMap"] = std::move(cm);
  volumes.as_array().push_back(std::move(vol));
  json::value* main = container_named(pod_spec, spec.main_container);
  if (main == nullptr)
    return;
  auto mount = [](json::value& container, const char* volume, const char* path) {
    json::value& mounts = container["volumeMounts"];
    if (!mounts.is_array())
      mounts = json::array{};
    mounts.as_array().push_back(json::object{{"name", volume}, {"mountPath", path}});
  };
  mount(*main, mpi_volume, "/etc/mpi");
  if (launcher) {
    // kubectl for kubexec.sh, delivered by an init container that also waits for the workers.
    volumes.as_array().push_back(json::object{{"name", kubectl_volume}, {"emptyDir", json::object{}}});
    mount(*main, kubectl_volume, "/opt/kube");
    json::value delivery = json::object{{"name", "kubectl-delivery"},
                                        {"image", opt.mpi_kubectl_delivery_image},
                                        {"imagePullPolicy", "IfNotPresent"}};
    delivery["env"] = json::array{json::object{{"name", "TARGET_DIR"}, {"value", "/opt/kube"}},
                                  json::object{{"name", "NAMESPACE"}, {"value", job.metadata.namespace_}}};
    delivery["volumeMounts"] = json::array{json::object{{"name", kubectl_volume}, {"mountPath", "/opt/kube"}},
                                           json::object{{"name", mpi_volume}, {"mountPath", "/etc/mpi"}}};
    json::value amounts = json::object{{"cpu", "100m"}, {"memory", "512Mi"}, {"ephemeral-storage", "5Gi"}};
    delivery["resources"] = json::object{{"limits", amounts}, {"requests", amounts}};
    json::value& inits = pod_spec["initContainers"];
    if (!inits.is_array())
      inits = json::array{};
    inits.as_array().push_back(std::move(delivery));
    if (pod_spec.get_string("serviceAccountName").empty())
      pod_spec["serviceAccountName"] = mpi_launcher_account(job);
  }
  // A worker only hosts the processes mpirun starts through kubexec.sh: without a command of
  // its own it sleeps, as the peer's workers do.
  const json::value* command = main->find("command");
  if (!launcher && (command == nullptr || !command->is_array() || command->as_array().empty())) {
    (*main)["command"] = json::array{"sleep"};
    (*main)["args"] = json::array{"365d"};
  }
}

// An env var from the pod's own fields (the downward API), placed before the others so that
// later values can refer to it as $(NAME).
void add_field_env_first(json::value& container, const std::string& name, const std::string& field_path) {
  json::value& list = container["env"];
  if (!list.is_array())
    list = json::array{};
  auto& items = list.as_array();
  for (const json::value& e : items)
    if (e.get_string("name") == name)
      return;
  json::value from = json::object{{"fieldRef", json::object{{"fieldPath", field_path}}}};
  items.insert(items.begin(), json::object{{"name", name}, {"valueFrom", std::move(from)}});
}

} // namespace

std::string lower_type(std::string_view type) {
  std::string out(type);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string replica_object_name(const std::string& job, std::string_view type, int index) {
  if (type == "Launcher") // MPIJob's one launcher: the peer's v1 names it without an index
    return job + "-launcher";
  return job + "-" + lower_type(type) + "-" + std::to_string(index);
}

std::map<std::string, std::string> job_labels(const training_job& job) {
  return {{label::job_name, job.metadata.name}, {label::operator_name, std::string(job.traits->operator_name)}};
}

std::string selector_string(const training_job& job, std::string_view type) {
  std::string out;
  auto labels = job_labels(job);
  labels[label::replica_type] = lower_type(type);
  for (const auto& [k, v] : labels)
    out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

bool is_master_role(const training_job& job, std::string_view type, int index) {
  switch (job.traits->kind) {
  case job_kind::pytorch: return type == "Master";
  case job_kind::tensorflow:
    if (job.find("Chief") != nullptr || job.find("Master") != nullptr)
      return type == "Chief" || type == "Master";
    return type == "Worker" && index == 0;
  case job_kind::mpi: return type == "Launcher";
  case job_kind::xgboost:
  case job_kind::paddle: return type == "Master";
  case job_kind::jax: return index == 0;
  case job_kind::caffe2:
    return job.chief ? (type == job.chief->first && index == job.chief->second) : index == 0;
  }
  return false;
}

json::value controller_ref(const training_job& job) {
  json::value ref = json::object{};
  ref["apiVersion"] = std::string(job.traits->api_version);
  ref["kind"] = std::string(job.traits->name);
  ref["name"] = job.metadata.name;
  ref["uid"] = job.metadata.uid;
  ref["controller"] = true;
  ref["blockOwnerDeletion"] = true;
  return ref;
}

int priority_of(const std::string& priority_class, const std::map<std::string, int>& table) {
  int n = 0;
  auto [ptr, ec] = std::from_chars(priority_class.data(), priority_class.data() + priority_class.size(), n);
  if (!priority_class.empty() && ec == std::errc{} && ptr == priority_class.data() + priority_class.size())
    return std::clamp(n, -1, 1000);
  if (auto it = table.find(priority_class); it != table.end())
    return std::clamp(it->second, -1, 1000);
  return 0;
}

gang_plan plan_gang(const training_job& job, const options& opt) {
  gang_plan plan;
  for (const auto& r : job.replicas)
    plan.enabled = plan.enabled || (r.replicas > 0 && r.gpus_per_pod > 0);
  if (!plan.enabled)
    return plan;
  plan.name = job.metadata.namespace_ + "/" + job.metadata.name;
  plan.virtual_cluster =
      job.run.scheduling.queue.empty() ? opt.default_virtual_cluster : job.run.scheduling.queue;
  plan.priority = priority_of(job.run.scheduling.priority_class, opt.priority_classes);
  const int limit = job.run.scheduling.min_available.value_or(job.total_replicas());
  int position = 0;
  for (const auto& r : job.replicas) {
    for (int i = 0; i < r.replicas; ++i, ++position) {
      bool member = position < limit && r.gpus_per_pod > 0;
      plan.in_gang[{r.type, i}] = member;
      if (!member)
        continue;
      auto& members = plan.members;
      auto it = std::find_if(members.begin(), members.end(),
                             [&](const auto& m) { return m.leaf_cell_number == r.gpus_per_pod; });
      if (it == members.end())
        members.push_back({1, r.gpus_per_pod});
      else
        ++it->pod_number;
    }
  }
  // An elastic job's gang starts at minReplicas workers (and whatever else is in the gang) and
  // grows toward all its pods; the scheduler needs its pods alike to grow and shrink them.
  if (job.elastic && job.elastic->min_replicas && plan.members.size() == 1) {
    const replica_spec* workers = job.find("Worker");
    int in_gang_workers = 0;
    for (const auto& [key, member] : plan.in_gang) in_gang_workers += member && key.first == "Worker";
    const int others = plan.members.front().pod_number - in_gang_workers;
    const int min = others + std::min(*job.elastic->min_replicas, in_gang_workers);
    if (workers != nullptr && min >= 1 && min < plan.members.front().pod_number) plan.min_members = min;
  }
  return plan;
}

json::value build_pod(const training_job& job, const replica_spec& spec, int index, const gang_plan& gang,
                      const options& opt) {
  const json::value* tmeta = spec.pod_template.find("metadata");
  const json::value* tspec = spec.pod_template.find("spec");
  json::value pod = json::object{};
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  json::value meta = tmeta != nullptr && tmeta->is_object() ? *tmeta : json::value(json::object{});
  meta.as_object().erase("generateName");
  meta["name"] = replica_object_name(job.metadata.name, spec.type, index);
  meta["namespace"] = job.metadata.namespace_;
  json::value& labels = meta["labels"];
  if (!labels.is_object())
    labels = json::object{};
  for (const auto& [k, v] : replica_labels(job, spec.type, index))
    labels[k] = v;
  if (is_master_role(job, spec.type, index))
    labels[label::job_role] = "master";
  meta["ownerReferences"] = json::array{controller_ref(job)};

  json::value pspec = tspec != nullptr && tspec->is_object() ? *tspec : json::value(json::object{});
  // The replica spec's restart policy overrides the template's; ExitCode is the operator's
  // business, so the kubelet must never restart those pods itself.
  pspec["restartPolicy"] =
      std::string(spec.restart == restart_policy::exit_code ? "Never" : to_string(spec.restart));
  auto env = replica_env(job, spec, index, opt);
  const auto field_env = replica_field_env(job, spec, index);
  for (json::value& c : pspec["containers"].as_array()) {
    // MPIJob: the main container only (the peer's containers[0]); other kinds: every container.
    if (job.traits->kind == job_kind::mpi && c.get_string("name") != spec.main_container)
      continue;
    k8s::add_env_if_absent(c, env);
    for (const auto& [name, path] : field_env)
      add_field_env_first(c, name, path);
  }
  if (job.traits->kind == job_kind::mpi)
    mount_mpi_config(job, spec, pspec, opt);

  if (gang.enabled && spec.gpus_per_pod > 0) {
    json::value& ann = meta["annotations"];
    if (!ann.is_object())
      ann = json::object{};
    scheduler::pod_scheduling_spec want;
    want.virtual_cluster = gang.virtual_cluster;
    want.priority = gang.priority;
    want.leaf_cell_number = spec.gpus_per_pod;
    if (auto it = gang.in_gang.find({spec.type, index}); it != gang.in_gang.end() && it->second) {
      want.affinity_group = gang.name;
      want.members = gang.members;
      want.min_members = gang.min_members;
    }
    // What the template says wins: a user may pin a VC or priority per replica.
    for (const auto& [key, value] : scheduler::scheduling_annotations(want))
      set_if_absent(ann, key, value);
    if (pspec.get_string("schedulerName").empty())
      pspec["schedulerName"] = opt.scheduler_name;
  }
  pod["metadata"] = std::move(meta);
  pod["spec"] = std::move(pspec);
  return pod;
}

json::value build_service(const training_job& job, const replica_spec& spec, int index) {
  json::value svc = json::object{};
  svc["apiVersion"] = "v1";
  svc["kind"] = "Service";
  json::value meta = json::object{};
  meta["name"] = replica_object_name(job.metadata.name, spec.type, index);
  meta["namespace"] = job.metadata.namespace_;
  auto labels = replica_labels(job, spec.type, index);
  meta["labels"] = k8s::string_map_json(labels);
  meta["ownerReferences"] = json::array{controller_ref(job)};
  svc["metadata"] = std::move(meta);

  json::value sspec = json::object{};
  sspec["clusterIP"] = "None";
  sspec["selector"] = k8s::string_map_json(labels);
  json::array ports;
  if (const json::value* containers = spec.pod_template.at_path({"spec", "containers"}))
    for (const json::value& c : containers->as_array()) {
      if (c.get_string("name") != spec.main_container)
        continue;
      if (const json::value* cp = c.find("ports"); cp != nullptr && cp->is_array())
        for (const json::value& p : cp->as_array()) {
          if (p.get_string("name").empty())
            continue;
          json::value sp = json::object{};
          sp["name"] = p.get_string("name");
          sp["port"] = p.get_int("containerPort");
          if (auto proto = p.get_string("protocol"); !proto.empty())
            sp["protocol"] = proto;
          ports.push_back(std::move(sp));
        }
    }
  sspec["ports"] = std::move(ports);
  svc["spec"] = std::move(sspec);
  return svc;
}

std::string mpi_config_map_name(const training_job& job) { return job.metadata.name + "-config"; }

bool is_gpu_launcher(const training_job& job) {
  const replica_spec* launcher = job.find("Launcher");
  if (launcher == nullptr)
    return false;
  const json::value* containers = launcher->pod_template.at_path({"spec", "containers"});
  if (containers == nullptr || !containers->is_array())
    return false;
  for (const json::value& c : containers->as_array())
    if (const json::value* limits = c.at_path({"resources", "limits"}); limits != nullptr && limits->is_object())
      for (const auto& [name, _] : limits->as_object())
        if (name.find("gpu") != std::string::npos)
          return true;
  return false;
}

std::map<std::string, std::string> mpi_config_data(const training_job& job,
                                                   const std::vector<std::string>& running_workers) {
  const std::string slots = std::to_string(job.slots_per_worker);
  const bool gpu_launcher = is_gpu_launcher(job);
  const std::string launcher = mpi_launcher_name(job);
  std::string hostfile = gpu_launcher ? launcher + " slots=" + slots + "\n" : std::string();
  if (const replica_spec* workers = job.find("Worker"))
    for (int i = 0; i < workers->replicas; ++i)
      hostfile += replica_object_name(job.metadata.name, "Worker", i) + " slots=" + slots + "\n";
  std::string kubexec = "#!/bin/sh\nset -x\nPOD_NAME=$1\nshift\n/opt/kube/kubectl exec ${POD_NAME}";
  if (!job.main_container.empty())
    kubexec += " --container " + job.main_container;
  kubexec += " -- /bin/sh -c \"$*\"";
  // Horovod elastic's host discovery: the workers running now, "host:slots".
  std::string discover = "#!/bin/sh";
  if (gpu_launcher)
    discover += "\necho " + launcher + ":" + slots + "\n";
  for (const auto& w : running_workers)
    discover += "\necho " + w + ":" + slots;
  return {{"hostfile", hostfile}, {"kubexec.sh", kubexec}, {"discover_hosts.sh", discover}};
}

json::value build_mpi_config_map(const training_job& job, const std::vector<std::string>& running_workers) {
  json::value cm = json::object{};
  cm["apiVersion"] = "v1";
  cm["kind"] = "ConfigMap";
  json::value meta = json::object{};
  meta["name"] = mpi_config_map_name(job);
  meta["namespace"] = job.metadata.namespace_;
  meta["labels"] = k8s::string_map_json(job_labels(job));
  meta["ownerReferences"] = json::array{controller_ref(job)};
  cm["metadata"] = std::move(meta);
  json::value data = json::object{};
  for (const auto& [k, v] : mpi_config_data(job, running_workers))
    data[k] = v;
  cm["data"] = std::move(data);
  return cm;
}

std::string mpi_launcher_name(const training_job& job) { return replica_object_name(job.metadata.name, "Launcher", 0); }

std::string mpi_launcher_account(const training_job& job) {
  if (const replica_spec* launcher = job.find("Launcher"))
    if (const json::value* sa = launcher->pod_template.at_path({"spec", "serviceAccountName"});
        sa && sa->is_string() && !sa->as_string().empty())
      return sa->as_string();
  return mpi_launcher_name(job);
}

bool mpi_launcher_account_is_ours(const training_job& job) { return mpi_launcher_account(job) == mpi_launcher_name(job); }

json::value mpi_role_rules(const training_job& job) {
  json::array workers;
  if (const replica_spec* w = job.find("Worker"))
    for (int i = 0; i < w->replicas; ++i)
      workers.emplace_back(replica_object_name(job.metadata.name, "Worker", i));
  json::value exec = json::object{{"apiGroups", json::array{""}}, {"resources", json::array{"pods/exec"}},
                                  {"verbs", json::array{"create"}}};
  if (!workers.empty())
    exec["resourceNames"] = std::move(workers);
  return json::array{json::object{{"apiGroups", json::array{""}},
                                  {"resources", json::array{"pods"}},
                                  {"verbs", json::array{"get", "list", "watch"}}},
                     std::move(exec)};
}

namespace {

json::value owned_object(const training_job& job, const char* api_version, const char* kind, const std::string& name) {
  json::value meta = json::object{{"name", name}, {"namespace", job.metadata.namespace_}};
  meta["labels"] = k8s::string_map_json(job_labels(job));
  meta["ownerReferences"] = json::array{controller_ref(job)};
  return json::object{{"apiVersion", api_version}, {"kind", kind}, {"metadata", std::move(meta)}};
}

} // namespace

json::value build_mpi_service_account(const training_job& job) {
  return owned_object(job, "v1", "ServiceAccount", mpi_launcher_name(job));
}

json::value build_mpi_role(const training_job& job) {
  json::value role = owned_object(job, "rbac.authorization.k8s.io/v1", "Role", mpi_launcher_name(job));
  role["rules"] = mpi_role_rules(job);
  return role;
}

json::value build_mpi_role_binding(const training_job& job) {
  const std::string name = mpi_launcher_name(job);
  json::value rb = owned_object(job, "rbac.authorization.k8s.io/v1", "RoleBinding", name);
  rb["subjects"] = json::array{json::object{
      {"kind", "ServiceAccount"}, {"name", mpi_launcher_account(job)}, {"namespace", job.metadata.namespace_}}};
  rb["roleRef"] = json::object{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", name}};
  return rb;
}

} // namespace kozmo::training
