// Decoding, defaults and validation of the training job kinds.

#include "actors/training/job_model.hpp"

#include "k8s/model/kozmo_keys.hpp"
#include "k8s/model/quantity.hpp"
#include "k8s/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace kozmo::training {
namespace {

using text::lower;

const std::vector<kind_traits>& kind_table() {
  static const std::vector<kind_traits> table = {
      {job_kind::pytorch, "PyTorchJob", "kubeflow.org/v1", "pytorchjobs", "pytorchReplicaSpecs", "pytorch",
       "pytorchjob-port", 23456, "OnFailure", "pytorchjob-controller", {"Master", "Worker"}},
      {job_kind::tensorflow, "TFJob", "kubeflow.org/v1", "tfjobs", "tfReplicaSpecs", "tensorflow", "tfjob-port", 2222,
       "Never", "tfjob-controller", {"Chief", "Master", "PS", "Worker", "Evaluator"}},
      {job_kind::mpi, "MPIJob", "kubeflow.org/v1", "mpijobs", "mpiReplicaSpecs", "mpi", "mpi-port", 9999, "Never",
       "mpijob-controller", {"Launcher", "Worker"}, false},
      {job_kind::xgboost, "XGBoostJob", "kubeflow.org/v1", "xgboostjobs", "xgbReplicaSpecs", "xgboost",
       "xgboostjob-port", 9999, "Never", "xgboostjob-controller", {"Master", "Worker"}},
      {job_kind::paddle, "PaddleJob", "kubeflow.org/v1", "paddlejobs", "paddleReplicaSpecs", "paddle", "master", 36543,
       "OnFailure", "paddlejob-controller", {"Master", "Worker"}},
      {job_kind::jax, "JAXJob", "kubeflow.org/v1", "jaxjobs", "jaxReplicaSpecs", "jax", "jaxjob-port", 6666, "Never",
       "jaxjob-controller", {"Worker"}},
      {job_kind::caffe2, "Caffe2Job", "kubeflow.org/v1alpha1", "caffe2jobs", "replicaSpecs", "caffe2", "caffe2-port",
       2222, "ExitCode", "caffe2job-controller", {"Worker"}},
  };
  return table;
}

// "PyTorchJob, TFJob, ..." for messages.
std::string kind_names() {
  std::string out;
  for (const auto& k : kind_table())
    out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

error invalid(const std::string& msg) { return error::invalid(msg); }

std::optional<restart_policy> parse_restart(std::string_view s) {
  if (s == "Always")
    return restart_policy::always;
  if (s == "OnFailure")
    return restart_policy::on_failure;
  if (s == "Never")
    return restart_policy::never;
  if (s == "ExitCode")
    return restart_policy::exit_code;
  return std::nullopt;
}

constexpr std::int64_t int32_max = 2147483647;

// An optional integer member within [lo, hi]; a member of another type, or a number outside
// the range, is an error naming `path` and the range. A whole number written as a float (1e3)
// counts as that integer, as Kubernetes reads JSON numbers.
expected<std::optional<std::int64_t>> opt_int(const json::value& v, std::string_view key, const std::string& path,
                                              std::int64_t lo = 0, std::int64_t hi = int32_max) {
  const json::value* m = v.find(key);
  if (m == nullptr || m->is_null())
    return std::optional<std::int64_t>{};
  std::int64_t n = 0;
  if (m->is_int()) {
    n = m->as_int();
  } else if (m->is_double() && m->as_double() > -9.2e18 && m->as_double() < 9.2e18 &&
             m->as_double() == static_cast<double>(static_cast<std::int64_t>(m->as_double()))) {
    n = static_cast<std::int64_t>(m->as_double());
  } else if (m->is_double()) {
    return invalid(path + " is " + json::dump(*m) + ": must be a whole number from " + std::to_string(lo) + " to " +
                   std::to_string(hi));
  } else {
    return invalid(path + " must be an integer");
  }
  if (n < lo || n > hi)
    return invalid(path + " is " + std::to_string(n) + ": use " + std::to_string(lo) + " to " + std::to_string(hi));
  return std::optional<std::int64_t>{n};
}

expected<std::string> opt_string(const json::value& v, std::string_view key, const std::string& path) {
  const json::value* m = v.find(key);
  if (m == nullptr || m->is_null())
    return std::string{};
  if (!m->is_string())
    return invalid(path + " must be a string");
  return m->as_string();
}

int gpus_of_resources(const json::value& resources, std::string_view which) {
  const json::value* list = resources.find(which);
  if (list == nullptr)
    return 0;
  const json::value* g = list->find("nvidia.com/gpu");
  if (g == nullptr)
    return 0;
  if (g->is_int())
    return static_cast<int>(std::clamp<std::int64_t>(g->as_int(), 0, max_gpus_per_container));
  if (g->is_string()) {
    auto q = k8s::quantity::parse(g->as_string());
    return q ? static_cast<int>(std::clamp<std::int64_t>(q->value(), 0, max_gpus_per_container)) : 0;
  }
  return 0;
}

// A container's nvidia.com/gpu, as the API server checks an extended resource: a whole number,
// not negative, the same in requests and limits when both say it. Bounded here too, since the
// gang's size is planned from it before any pod exists.
status check_gpus(const json::value& container, const std::string& path) {
  const json::value* res = container.find("resources");
  if (res == nullptr || !res->is_object())
    return ok;
  std::optional<std::int64_t> seen[2];
  const char* lists[2] = {"limits", "requests"};
  for (int i = 0; i < 2; ++i) {
    const json::value* list = res->find(lists[i]);
    const json::value* g = list != nullptr && list->is_object() ? list->find("nvidia.com/gpu") : nullptr;
    if (g == nullptr)
      continue;
    std::string where = path + ".resources." + lists[i] + "[nvidia.com/gpu]";
    std::string text = json::scalar_text(*g);
    auto q = k8s::quantity::parse(text);
    if (!q)
      return invalid(where + " is " + json::dump(*g) + ": must be a whole number of GPUs");
    if (q->sign() < 0 || q->nanos() % 1000000000 != 0)
      return invalid(where + " is " + text + ": must be a whole number of GPUs, 0 or more");
    if (q->value() > max_gpus_per_container)
      return invalid(where + " is " + text + ": at most " + std::to_string(max_gpus_per_container));
    seen[i] = q->value();
  }
  if (seen[0] && seen[1] && *seen[0] != *seen[1])
    return invalid(path + ".resources.requests[nvidia.com/gpu] is " + std::to_string(*seen[1]) +
                   ": must equal the limit (" + std::to_string(*seen[0]) + ")");
  return ok;
}

// The peer's setDefaultPort: the default container gets the kind's named port unless it has one.
void add_default_port(json::value& container, const kind_traits& k) {
  json::value& ports = container["ports"];
  if (!ports.is_array())
    ports = json::array{};
  for (const json::value& p : ports.as_array())
    if (p.get_string("name") == k.default_port_name)
      return;
  json::value port = json::object{};
  port["name"] = std::string(k.default_port_name);
  port["containerPort"] = k.default_port;
  ports.as_array().push_back(std::move(port));
}

expected<replica_spec> decode_replica(const kind_traits& k, const std::string& type, const json::value& spec,
                                      const std::string& path, const decode_limits& limits) {
  if (!spec.is_object())
    return invalid(path + " must be an object with replicas and template");
  replica_spec r;
  r.type = type;
  auto replicas = opt_int(spec, "replicas", path + ".replicas", 0, limits.max_replicas);
  if (!replicas)
    return replicas.err();
  int default_replicas = 1;
  if (k.kind == job_kind::mpi && type == "Worker")
    default_replicas = 0;
  r.replicas = static_cast<int>(replicas->value_or(default_replicas));
  auto policy = opt_string(spec, "restartPolicy", path + ".restartPolicy");
  if (!policy)
    return policy.err();
  std::string policy_text = policy->empty() ? std::string(k.default_restart) : *policy;
  auto rp = parse_restart(policy_text);
  if (!rp)
    return invalid(path + ".restartPolicy is \"" + policy_text + "\": use Always, OnFailure, Never or ExitCode");
  r.restart = *rp;

  const json::value* tmpl = spec.find("template");
  if (tmpl == nullptr || !tmpl->is_object())
    return invalid(path + ".template is missing: give the pod template with at least one container named " +
                   std::string(k.default_container));
  r.pod_template = *tmpl;
  json::value* containers = r.pod_template.at_path({"spec", "containers"});
  if (containers == nullptr || !containers->is_array() || containers->as_array().empty())
    return invalid(path + ".template.spec.containers is empty: add a container named " +
                   std::string(k.default_container));
  json::value* main = nullptr;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < containers->as_array().size(); ++i) {
    json::value& c = containers->as_array()[i];
    const std::string at = path + ".template.spec.containers[" + std::to_string(i) + "]";
    if (!c.is_object())
      return invalid(path + ".template.spec.containers must hold objects");
    names.push_back(c.get_string("name"));
    if (names.back().empty())
      return invalid(at + ".name is missing: every container needs a name");
    if (c.get_string("image").empty())
      return invalid(at + ".image is missing: give the container's image");
    if (auto st = check_gpus(c, at); !st)
      return st.err();
    if (names.back() == k.default_container && main == nullptr)
      main = &c;
  }
  if (main == nullptr && !k.container_name_required)
    main = &containers->as_array().front(); // MPIJob: the first container is the main one
  if (main == nullptr) {
    std::string list;
    for (const auto& n : names)
      list += (list.empty() ? "\"" : ", \"") + n + "\"";
    return invalid(path + ".template.spec.containers has no container named \"" + std::string(k.default_container) +
                   "\" (found " + list + "): " + std::string(k.name) +
                   " finds the training process by that name; rename the main container to \"" +
                   std::string(k.default_container) + "\"");
  }
  r.main_container = main->get_string("name");
  if (k.container_name_required) // the peer gives MPIJob's container no port
    add_default_port(*main, k);
  r.gpus_per_pod = gpus_of_template(r.pod_template);
  return r;
}

status decode_run_policy(const json::value& spec, run_policy& run, const std::string& path) {
  // The peer moved runPolicy under spec.runPolicy; older jobs have its fields on spec itself.
  const json::value* rp = spec.find("runPolicy");
  const json::value& src = rp != nullptr && rp->is_object() ? *rp : spec;
  std::string where = rp != nullptr ? path + ".runPolicy" : path;
  auto clean = opt_string(src, "cleanPodPolicy", where + ".cleanPodPolicy");
  if (!clean)
    return clean.err();
  if (clean->empty() && &src != &spec) {
    // MPIJob v1 still has the deprecated spec.cleanPodPolicy: honoured when runPolicy has none.
    clean = opt_string(spec, "cleanPodPolicy", path + ".cleanPodPolicy");
    if (!clean)
      return clean.err();
    if (!clean->empty())
      where = path;
  }
  if (clean->empty() || *clean == "None")
    run.clean_pods = clean_pod_policy::none;
  else if (*clean == "Running")
    run.clean_pods = clean_pod_policy::running;
  else if (*clean == "All")
    run.clean_pods = clean_pod_policy::all;
  else
    return invalid(where + ".cleanPodPolicy is \"" + *clean + "\": use All, Running or None");
  auto ttl = opt_int(src, "ttlSecondsAfterFinished", where + ".ttlSecondsAfterFinished");
  auto ads = opt_int(src, "activeDeadlineSeconds", where + ".activeDeadlineSeconds", 1);
  auto backoff = opt_int(src, "backoffLimit", where + ".backoffLimit");
  for (auto* e : {&ttl, &ads, &backoff})
    if (!*e)
      return e->err();
  run.ttl_seconds_after_finished = *ttl;
  run.active_deadline_seconds = *ads;
  if (*backoff)
    run.backoff_limit = static_cast<int>(**backoff);
  run.suspend = src.get_bool("suspend", false);
  run.managed_by = src.get_string("managedBy");
  if (const json::value* sp = src.find("schedulingPolicy"); sp != nullptr && sp->is_object()) {
    auto min = opt_int(*sp, "minAvailable", where + ".schedulingPolicy.minAvailable");
    auto timeout = opt_int(*sp, "scheduleTimeoutSeconds", where + ".schedulingPolicy.scheduleTimeoutSeconds");
    if (!min)
      return min.err();
    if (!timeout)
      return timeout.err();
    if (*min)
      run.scheduling.min_available = static_cast<int>(**min);
    if (*timeout)
      run.scheduling.schedule_timeout_seconds = static_cast<int>(**timeout);
    run.scheduling.queue = sp->get_string("queue");
    run.scheduling.priority_class = sp->get_string("priorityClass");
  }
  return ok;
}

status decode_elastic(const json::value& e, elastic_policy& p, const decode_limits& limits) {
  struct field {
    const char* key;
    std::optional<int>* into;
    std::int64_t lo, hi;
  };
  for (const field& f : {field{"minReplicas", &p.min_replicas, 0, limits.max_replicas},
                         field{"maxReplicas", &p.max_replicas, 0, limits.max_replicas},
                         field{"rdzvPort", &p.rdzv_port, 1, 65535}, field{"maxRestarts", &p.max_restarts, 0, int32_max},
                         field{"nProcPerNode", &p.nproc_per_node, 1, max_processes_per_pod}}) {
    auto n = opt_int(e, f.key, std::string("spec.elasticPolicy.") + f.key, f.lo, f.hi);
    if (!n)
      return n.err();
    if (*n)
      *f.into = static_cast<int>(**n);
  }
  if (auto b = e.get_string("rdzvBackend"); !b.empty())
    p.rdzv_backend = b;
  p.rdzv_host = e.get_string("rdzvHost");
  p.rdzv_id = e.get_string("rdzvId");
  if (const json::value* conf = e.find("rdzvConf"); conf != nullptr && conf->is_array())
    for (const json::value& kv : conf->as_array())
      p.rdzv_conf.emplace_back(kv.get_string("key"), kv.get_string("value"));
  return ok;
}

status decode_kind_fields(const json::value& spec, training_job& job, const decode_limits& limits) {
  switch (job.traits->kind) {
  case job_kind::pytorch:
    if (const json::value* e = spec.find("elasticPolicy"); e != nullptr && e->is_object()) {
      job.elastic.emplace();
      if (auto st = decode_elastic(*e, *job.elastic, limits); !st)
        return st;
      const auto& p = *job.elastic;
      if (p.min_replicas && p.max_replicas && *p.min_replicas > *p.max_replicas) // torchrun's --nnodes=MIN:MAX
        return invalid("spec.elasticPolicy.minReplicas (" + std::to_string(*p.min_replicas) +
                       ") is above maxReplicas (" + std::to_string(*p.max_replicas) + ")");
    }
    if (const json::value* n = spec.find("nprocPerNode"); n != nullptr && n->is_string()) {
      const std::string& text = n->as_string();
      job.nproc_per_node = text;
      int count = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
      bool numeric = !text.empty() && (std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-');
      if (numeric && (ec != std::errc() || end != text.data() + text.size() || count < 1 ||
                      count > max_processes_per_pod))
        return invalid("spec.nprocPerNode is \"" + text + "\": use auto, cpu, gpu or 1 to " +
                       std::to_string(max_processes_per_pod));
    }
    else if (job.elastic && job.elastic->nproc_per_node)
      job.nproc_per_node = std::to_string(*job.elastic->nproc_per_node);
    break;
  case job_kind::tensorflow:
    job.success_policy = spec.get_string("successPolicy");
    if (!job.success_policy.empty() && job.success_policy != "AllWorkers")
      return invalid("spec.successPolicy is \"" + job.success_policy + "\": use AllWorkers or leave it empty");
    break;
  case job_kind::mpi:
    if (auto slots = opt_int(spec, "slotsPerWorker", "spec.slotsPerWorker", 1, max_processes_per_pod); !slots)
      return slots.err();
    else
      job.slots_per_worker = static_cast<int>(slots->value_or(1));
    job.main_container = spec.get_string("mainContainer");
    break;
  case job_kind::paddle:
    if (const json::value* e = spec.find("elasticPolicy"); e != nullptr && e->is_object()) {
      // The peer's defaults: a missing bound takes the other, both missing the workers' count.
      job.paddle_elastic.emplace();
      if (auto st = decode_elastic(*e, *job.paddle_elastic, limits); !st)
        return st;
      auto& p = *job.paddle_elastic;
      const replica_spec* workers = job.find("Worker");
      if (!p.min_replicas && !p.max_replicas && workers != nullptr)
        p.min_replicas = p.max_replicas = workers->replicas;
      if (!p.min_replicas)
        p.min_replicas = p.max_replicas;
      if (!p.max_replicas)
        p.max_replicas = p.min_replicas;
      if (p.min_replicas && p.max_replicas && *p.min_replicas > *p.max_replicas)
        return invalid("spec.elasticPolicy.minReplicas (" + std::to_string(*p.min_replicas) +
                       ") is above maxReplicas (" + std::to_string(*p.max_replicas) + ")");
    }
    break;
  case job_kind::xgboost:
  case job_kind::jax:
    break;
  case job_kind::caffe2:
    if (const json::value* b = spec.find("backendSpecs"); b != nullptr && b->is_object()) {
      job.backend_type = b->get_string("backendType");
      job.redis_host = b->get_string("redisHost");
      auto port = opt_int(*b, "redisPort", "spec.backendSpecs.redisPort", 1, 65535);
      if (!port)
        return port.err();
      job.redis_port = static_cast<int>(port->value_or(6379));
      if (!job.backend_type.empty() && job.backend_type != "redis" && job.backend_type != "nfs" &&
          job.backend_type != "none")
        return invalid("spec.backendSpecs.backendType is \"" + job.backend_type + "\": use redis, nfs or none");
    }
    if (const json::value* c = spec.at_path({"terminationPolicy", "chief"}); c != nullptr && c->is_object())
    {
      std::string name = c->get_string("replicaName", "Worker");
      if (lower(name) != "worker")
        return invalid("spec.terminationPolicy.chief.replicaName is \"" + name +
                       "\": a Caffe2Job's replicas are workers; use Worker");
      auto index = opt_int(*c, "replicaIndex", "spec.terminationPolicy.chief.replicaIndex", 0, limits.max_replicas);
      if (!index)
        return index.err();
      job.chief = std::pair<std::string, int>{"Worker", static_cast<int>(index->value_or(0))};
    }
    break;
  }
  return ok;
}

} // namespace

const std::vector<kind_traits>& all_kinds() { return kind_table(); }

const kind_traits* traits_for(std::string_view kind) {
  for (const auto& k : kind_table())
    if (k.name == kind)
      return &k;
  return nullptr;
}

std::string_view to_string(restart_policy p) {
  switch (p) {
  case restart_policy::always: return "Always";
  case restart_policy::on_failure: return "OnFailure";
  case restart_policy::never: return "Never";
  case restart_policy::exit_code: return "ExitCode";
  }
  return "Never";
}

const replica_spec* training_job::find(std::string_view type) const {
  for (const auto& r : replicas)
    if (r.type == type)
      return &r;
  return nullptr;
}

int training_job::total_replicas() const {
  int n = 0;
  for (const auto& r : replicas)
    n += r.replicas;
  return n;
}

int gpus_of_template(const json::value& pod_template) {
  const json::value* containers = pod_template.at_path({"spec", "containers"});
  if (containers == nullptr || !containers->is_array())
    return 0;
  int total = 0;
  for (const json::value& c : containers->as_array()) {
    const json::value* res = c.find("resources");
    if (res == nullptr)
      continue;
    int g = gpus_of_resources(*res, "limits");
    total += g > 0 ? g : gpus_of_resources(*res, "requests");
  }
  return total;
}

std::string managed_by_of(const json::value& document) {
  const json::value* spec = document.find("spec");
  if (spec == nullptr)
    return {};
  if (const json::value* rp = spec->find("runPolicy"); rp != nullptr && rp->is_object())
    return rp->get_string("managedBy");
  return spec->get_string("managedBy");
}

expected<training_job> decode_job(const k8s::custom_object& object, const decode_limits& limits) {
  training_job job;
  job.traits = traits_for(object.kind);
  if (job.traits == nullptr)
    return invalid("kind " + object.kind + " is not a training job kind (" + kind_names() + ")");
  job.metadata = object.metadata;
  const json::value* spec = object.document.find("spec");
  if (spec == nullptr || !spec->is_object())
    return invalid("spec is missing: give " + std::string(job.traits->replica_specs_key));
  if (const json::value* st = object.document.find("status"))
    job.status = status_from_json(*st);
  if (auto it = object.metadata.annotations.find(std::string_view(keys::recreated_pods)); it != object.metadata.annotations.end()) {
    int n = 0;
    auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), n);
    if (ec == std::errc{} && n > job.status.recreated_pods)
      job.status.recreated_pods = n;
  }
  const kind_traits& k = *job.traits;
  const std::string specs_path = "spec." + std::string(k.replica_specs_key);
  const json::value* specs = spec->find(k.replica_specs_key);
  if (specs == nullptr || !specs->is_object() || specs->as_object().empty())
    return invalid(specs_path + " is missing: give at least one replica spec");

  if (k.kind == job_kind::caffe2) {
    // Caffe2Job v1alpha1 has a single replica spec; its pods are workers.
    auto r = decode_replica(k, "Worker", *specs, specs_path, limits);
    if (!r)
      return r.err();
    job.replicas.push_back(std::move(*r));
  } else {
    std::vector<std::pair<std::string, const json::value*>> found;
    for (const auto& [key, value] : specs->as_object()) {
      // The peer accepts any case ("worker", "ps") and normalises to its spelling.
      auto known = std::find_if(k.replica_types.begin(), k.replica_types.end(),
                                [&key = key](std::string_view t) { return lower(t) == lower(key); });
      if (known == k.replica_types.end()) {
        std::string list;
        for (auto t : k.replica_types)
          list += (list.empty() ? "" : ", ") + std::string(t);
        return invalid(specs_path + "." + key + ": unknown replica type for " + std::string(k.name) + "; use " +
                       list);
      }
      found.emplace_back(std::string(*known), &value);
    }
    for (auto t : k.replica_types) {
      for (const auto& [type, value] : found) {
        if (type != t)
          continue;
        auto r = decode_replica(k, type, *value, specs_path + "." + type, limits);
        if (!r)
          return r.err();
        job.replicas.push_back(std::move(*r));
      }
    }
  }
  if (auto st = decode_run_policy(*spec, job.run, "spec"); !st)
    return st.err();
  if (auto st = decode_kind_fields(*spec, job, limits); !st)
    return st.err();

  // Kind-level checks the peer's validating webhook makes.
  if (k.kind == job_kind::tensorflow) {
    int chiefs = 0;
    for (const auto& r : job.replicas)
      if (r.type == "Chief" || r.type == "Master")
        chiefs += r.replicas;
    if (chiefs > 1)
      return invalid("spec.tfReplicaSpecs: a TFJob has at most one Chief or Master replica, found " +
                     std::to_string(chiefs));
  }
  if (k.kind == job_kind::pytorch) {
    const replica_spec* master = job.find("Master");
    if (master != nullptr && master->replicas != 1)
      return invalid("spec.pytorchReplicaSpecs.Master.replicas is " + std::to_string(master->replicas) +
                     ": a PyTorchJob has exactly one Master");
  }
  if (k.kind == job_kind::xgboost) {
    const replica_spec* master = job.find("Master");
    if (master == nullptr)
      return invalid("spec.xgbReplicaSpecs.Master is missing: an XGBoostJob needs its Master (replicas: 1)");
    if (master->replicas != 1)
      return invalid("spec.xgbReplicaSpecs.Master.replicas is " + std::to_string(master->replicas) +
                     ": an XGBoostJob has exactly one Master");
  }
  if (k.kind == job_kind::mpi) {
    const replica_spec* launcher = job.find("Launcher");
    if (launcher == nullptr || launcher->replicas != 1)
      return invalid("spec.mpiReplicaSpecs.Launcher: an MPIJob needs exactly one Launcher replica");
  }
  if (job.run.scheduling.min_available && *job.run.scheduling.min_available < 1)
    return invalid("spec.runPolicy.schedulingPolicy.minAvailable must be 1 or more");
  return job;
}

} // namespace kozmo::training
