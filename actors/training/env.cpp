// The environment each kind's training processes read to find each other.
#include "actors/training/pod_builder.hpp"

#include <algorithm>
#include <charconv>

namespace kozmo::training {
namespace {

using env_list = std::vector<std::pair<std::string, std::string>>;

// The port of the replica's main container named after the kind (present after defaults).
int replica_port(const training_job& job, const replica_spec& spec) {
  const kind_traits& k = *job.traits;
  const json::value* containers = spec.pod_template.at_path({"spec", "containers"});
  if (containers != nullptr && containers->is_array())
    for (const json::value& c : containers->as_array()) {
      if (c.get_string("name") != spec.main_container)
        continue;
      if (const json::value* ports = c.find("ports"); ports != nullptr && ports->is_array())
        for (const json::value& p : ports->as_array())
          if (p.get_string("name") == k.default_port_name)
            return static_cast<int>(p.get_int("containerPort", k.default_port));
    }
  return k.default_port;
}

// The port of the replica type `type`, or the kind's default when the job has no such replica.
std::string port_of(const training_job& job, std::string_view type) {
  const replica_spec* spec = job.find(type);
  return std::to_string(spec != nullptr ? replica_port(job, *spec) : job.traits->default_port);
}

// PaddleJob's rendezvous: master-0 with a Master (parameter-server mode), else worker-0.
std::string_view paddle_rendezvous(const training_job& job) { return job.find("Master") != nullptr ? "Master" : "Worker"; }

std::string service_host(const training_job& job, std::string_view type, int index, const options& opt) {
  std::string host = replica_object_name(job.metadata.name, type, index) + "." + job.metadata.namespace_ + ".svc";
  if (!opt.cluster_domain.empty())
    host += "." + opt.cluster_domain;
  return host;
}

// {"cluster": {<type>: [host:port...]}, "task": {"type": t, "index": i}, "environment": "cloud"},
// with the cluster's keys sorted as Go writes a map.
std::string cluster_config(const training_job& job, const replica_spec& self, int index, const options& opt) {
  std::vector<const replica_spec*> members;
  for (const auto& r : job.replicas)
    if (r.type != "Evaluator" && r.replicas > 0) // an evaluator is not part of TF's cluster
      members.push_back(&r);
  std::sort(members.begin(), members.end(),
            [](const replica_spec* a, const replica_spec* b) { return lower_type(a->type) < lower_type(b->type); });
  json::value cluster = json::object{};
  for (const replica_spec* r : members) {
    json::array hosts;
    int port = replica_port(job, *r);
    for (int i = 0; i < r->replicas; ++i)
      hosts.emplace_back(service_host(job, r->type, i, opt) + ":" + std::to_string(port));
    cluster[lower_type(r->type)] = std::move(hosts);
  }
  json::value config = json::object{};
  config["cluster"] = std::move(cluster);
  json::value task = json::object{};
  task["type"] = lower_type(self.type);
  task["index"] = index;
  config["task"] = std::move(task);
  config["environment"] = "cloud";
  return json::dump(config);
}

int nproc_as_int(const std::string& nproc) {
  int n = 0;
  auto [ptr, ec] = std::from_chars(nproc.data(), nproc.data() + nproc.size(), n);
  if (ec != std::errc{} || ptr != nproc.data() + nproc.size() || n < 1)
    return 1; // "auto", "cpu", "gpu": torchrun decides; count one process per node
  return n;
}

env_list pytorch_env(const training_job& job, const replica_spec& spec, int index) {
  env_list env{{"PYTHONUNBUFFERED", "1"}};
  const replica_spec* master = job.find("Master");
  const std::string& name = job.metadata.name;
  if (master != nullptr) {
    std::string addr = replica_object_name(name, "Master", 0);
    std::string port = std::to_string(replica_port(job, *master));
    env.insert(env.end(), {{"MASTER_ADDR", addr}, {"MASTER_PORT", port}, {"PET_MASTER_ADDR", addr},
                           {"PET_MASTER_PORT", port}});
  }
  env.emplace_back("PET_NPROC_PER_NODE", job.nproc_per_node);
  if (job.elastic) {
    const elastic_policy& e = *job.elastic;
    const replica_spec* workers = job.find("Worker");
    int n = workers != nullptr ? workers->replicas : 0;
    std::string host = !e.rdzv_host.empty() ? e.rdzv_host : replica_object_name(name, "Worker", 0);
    env.emplace_back("PET_RDZV_ENDPOINT", host + ":" + std::to_string(e.rdzv_port.value_or(29400)));
    env.emplace_back("PET_RDZV_BACKEND", e.rdzv_backend);
    env.emplace_back("PET_NNODES",
                     std::to_string(e.min_replicas.value_or(n)) + ":" + std::to_string(e.max_replicas.value_or(n)));
    if (e.max_restarts)
      env.emplace_back("PET_MAX_RESTARTS", std::to_string(*e.max_restarts));
    if (!e.rdzv_id.empty())
      env.emplace_back("PET_RDZV_ID", e.rdzv_id);
    if (!e.rdzv_conf.empty()) {
      std::string conf;
      for (const auto& [k, v] : e.rdzv_conf)
        conf += (conf.empty() ? "" : ",") + k + "=" + v;
      env.emplace_back("PET_RDZV_CONF", conf);
    }
    return env; // world size and ranks are decided by the rendezvous
  }
  int rank = spec.type == "Master" ? 0 : index + (master != nullptr ? 1 : 0);
  env.emplace_back("WORLD_SIZE", std::to_string(job.total_replicas() * nproc_as_int(job.nproc_per_node)));
  env.emplace_back("RANK", std::to_string(rank));
  env.emplace_back("PET_NODE_RANK", std::to_string(rank));
  env.emplace_back("PET_NNODES", std::to_string(job.total_replicas()));
  return env;
}

env_list tensorflow_env(const training_job& job, const replica_spec& spec, int index, const options& opt) {
  // A single-replica job is not distributed: the peer gives it no TF_CONFIG.
  if (job.total_replicas() <= 1)
    return {};
  return {{"TF_CONFIG", cluster_config(job, spec, index, opt)}};
}

// The launcher's, as the peer sets them (Open MPI and Intel MPI both reach the workers through
// kubexec.sh); a launcher without GPUs hides the node's GPUs from mpirun.
env_list mpi_env(const training_job& job, const replica_spec& spec) {
  if (spec.type != "Launcher")
    return {};
  env_list env{{"OMPI_MCA_plm_rsh_agent", "/etc/mpi/kubexec.sh"},
               {"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"}};
  if (!is_gpu_launcher(job))
    env.insert(env.end(), {{"NVIDIA_VISIBLE_DEVICES", ""}, {"NVIDIA_DRIVER_CAPABILITIES", ""}});
  env.insert(env.end(), {{"I_MPI_HYDRA_BOOTSTRAP", "rsh"}, {"I_MPI_HYDRA_BOOTSTRAP_EXEC", "/etc/mpi/kubexec.sh"}});
  return env;
}

// XGBoost's rabit tracker: the master at <job>-master-0, ranks master first, and the workers'
// addresses when there are any.
env_list xgboost_env(const training_job& job, const replica_spec& spec, int index) {
  const std::string& name = job.metadata.name;
  const replica_spec* master = job.find("Master");
  const int world = job.total_replicas();
  const int rank = spec.type == "Master" ? index : index + (master != nullptr ? master->replicas : 0);
  env_list env{{"MASTER_PORT", port_of(job, "Master")},
               {"MASTER_ADDR", replica_object_name(name, "Master", 0)},
               {"WORLD_SIZE", std::to_string(world)},
               {"RANK", std::to_string(rank)},
               {"PYTHONUNBUFFERED", "1"}};
  if (world > 1) {
    env.emplace_back("WORKER_PORT", port_of(job, "Worker"));
    std::string addrs;
    for (int i = 0; i < world - 1; ++i)
      addrs += (i == 0 ? "" : ",") + replica_object_name(name, "Worker", i);
    env.emplace_back("WORKER_ADDRS", addrs);
  }
  return env;
}

// Paddle's launcher: with a Master (parameter-server mode) master-0 is the rendezvous, else
// (collective mode) worker-0; that pod announces its own IP (POD_IP_DUMMY, see
// replica_field_env), every other pod the rendezvous' service name.
env_list paddle_env(const training_job& job, const replica_spec& spec, int index) {
  const std::string& name = job.metadata.name;
  const std::string_view rendezvous = paddle_rendezvous(job);
  const bool is_rendezvous = spec.type == rendezvous && index == 0;
  env_list env{{"PYTHONUNBUFFERED", "1"},
               {"PADDLE_JOB_ID", name},
               {"PADDLE_NNODES", std::to_string(job.total_replicas())},
               {"PADDLE_MASTER", (is_rendezvous ? std::string("$(POD_IP_DUMMY)") : replica_object_name(name, rendezvous, 0)) +
                                     ":" + port_of(job, rendezvous)}};
  if (rendezvous == "Master")
    env.emplace_back(spec.type == "Master" ? "PADDLE_SERVER_NUM" : "PADDLE_TRAINER_NUM", "1");
  return env;
}

// jax.distributed.initialize: worker-0 coordinates.
env_list jax_env(const training_job& job, const replica_spec& spec, int index) {
  return {{"PYTHONUNBUFFERED", "1"},
          {"COORDINATOR_PORT", port_of(job, "Worker")},
          {"COORDINATOR_ADDRESS", replica_object_name(job.metadata.name, "Worker", 0)},
          {"NUM_PROCESSES", std::to_string(job.total_replicas())},
          {"PROCESS_ID", std::to_string(spec.type == "Worker" ? index : 0)}};
}

env_list caffe2_env(const training_job& job, const replica_spec& spec, int index, const options& opt) {
  env_list env{{"CAFFE2_CONFIG", cluster_config(job, spec, index, opt)}};
  if (job.backend_type == "redis" || !job.redis_host.empty()) {
    env.emplace_back("REDIS_HOST", job.redis_host);
    env.emplace_back("REDIS_PORT", std::to_string(job.redis_port));
  }
  env.emplace_back("NUM_SHARDS", std::to_string(spec.replicas));
  env.emplace_back("SHARD_ID", std::to_string(index));
  env.emplace_back("RUN_ID", job.metadata.uid.empty() ? job.metadata.name : job.metadata.uid);
  return env;
}

} // namespace

env_list replica_env(const training_job& job, const replica_spec& spec, int index, const options& opt) {
  switch (job.traits->kind) {
  case job_kind::pytorch: return pytorch_env(job, spec, index);
  case job_kind::tensorflow: return tensorflow_env(job, spec, index, opt);
  case job_kind::mpi: return mpi_env(job, spec);
  case job_kind::xgboost: return xgboost_env(job, spec, index);
  case job_kind::paddle: return paddle_env(job, spec, index);
  case job_kind::jax: return jax_env(job, spec, index);
  case job_kind::caffe2: return caffe2_env(job, spec, index, opt);
  }
  return {};
}

env_list replica_field_env(const training_job& job, const replica_spec& spec, int index) {
  if (job.traits->kind != job_kind::paddle || index != 0 || spec.type != paddle_rendezvous(job))
    return {};
  return {{"POD_IP_DUMMY", "status.podIP"}};
}

} // namespace kozmo::training
