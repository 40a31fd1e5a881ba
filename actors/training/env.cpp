// The environment each kind's training processes read to find each other.
#include "actors/training/pod_builder.hpp"

#include <algorithm>
#include <charconv>

namespace kozmo::training {
namespace {

using env_list = std::vector<std::pair<std::string, std::string>>;

// The port of the replica's default container named after the kind (present after defaults).
int replica_port(const training_job& job, const replica_spec& spec) {
  const kind_traits& k = *job.traits;
  const json::value* containers = spec.pod_template.at_path({"spec", "containers"});
  if (containers != nullptr && containers->is_array())
    for (const json::value& c : containers->as_array()) {
      if (c.get_string("name") != k.default_container)
        continue;
      if (const json::value* ports = c.find("ports"); ports != nullptr && ports->is_array())
        for (const json::value& p : ports->as_array())
          if (p.get_string("name") == k.default_port_name)
            return static_cast<int>(p.get_int("containerPort", k.default_port));
    }
  return k.default_port;
}

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

env_list mpi_env(const replica_spec& spec) {
  if (spec.type != "Launcher")
    return {};
  return {{"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"}};
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
  case job_kind::mpi: return mpi_env(spec);
  case job_kind::caffe2: return caffe2_env(job, spec, index, opt);
  }
  return {};
}

} // namespace kozmo::training
