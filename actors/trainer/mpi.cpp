#include "actors/trainer/mpi.hpp"

#include <algorithm>

namespace kozmo::trainer {
namespace {

json::value meta(const train_job& job, const std::string& name) {
  return json::object{{"name", name},
                      {"namespace", job.metadata.namespace_},
                      {"labels", json::object{{std::string(label::jobset_name), job.metadata.name}}},
                      {"ownerReferences", json::array{owner_reference(job)}}};
}

void add_named(json::value& parent, std::string_view key, json::value item) {
  json::value& list = parent[key];
  if (!list.is_array())
    list = json::array{};
  auto name = item.get_string("name");
  bool has = std::any_of(list.as_array().begin(), list.as_array().end(),
                         [&](const auto& x) { return x.get_string("name") == name; });
  if (!has)
    list.as_array().push_back(std::move(item));
}

} // namespace

std::string mpi_hostfile_name(const std::string& job) { return job + "-mpi-hostfile"; }
std::string mpi_secret_name(const std::string& job) { return job + "-mpi-ssh-auth"; }

int mpi_node_pods(const train_job& job, const runtime_spec& rt) {
  int nodes = num_nodes(job, rt);
  return rt.ml.run_launcher_as_node ? std::max(nodes - 1, 1) : nodes;
}

std::string mpi_slots(const train_job& job, const runtime_spec& rt, int gpus_per_node) {
  if (job.trainer && !job.trainer->num_proc_per_node.empty() && job.trainer->num_proc_per_node != "auto" &&
      job.trainer->num_proc_per_node != "cpu" && job.trainer->num_proc_per_node != "gpu")
    return job.trainer->num_proc_per_node;
  if (rt.ml.num_proc_per_node == "1" && gpus_per_node > 1)
    return std::to_string(gpus_per_node);
  return rt.ml.num_proc_per_node.empty() ? "1" : rt.ml.num_proc_per_node;
}

json::value mpi_hostfile(const train_job& job, const jobset& set, const std::string& slots) {
  std::string text;
  for (const auto& slot : set.pods) {
    bool node = slot.rjob == step::node;
    bool launcher_node = slot.rjob == step::launcher && set.launcher_is_node;
    if (node || launcher_node)
      text += slot.name + "." + job.metadata.name + " slots=" + slots + "\n";
  }
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", meta(job, mpi_hostfile_name(job.metadata.name))},
                      {"data", json::object{{"hostfile", text}}}};
}

json::value mpi_secret(const train_job& job, const ssh_key_pair& keys) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"metadata", meta(job, mpi_secret_name(job.metadata.name))},
                      {"type", "kubernetes.io/ssh-auth"},
                      {"immutable", true},
                      {"stringData", json::object{{"ssh-privatekey", keys.private_pem}, {"ssh-publickey", keys.public_line}}}};
}

void mpi_attach(json::value& pod_spec, const train_job& job, const runtime_spec& rt, bool launcher) {
  const auto& name = job.metadata.name;
  add_named(pod_spec, "volumes",
            json::object{{"name", "mpi-ssh-auth"},
                         {"secret", json::object{{"secretName", mpi_secret_name(name)},
                                                 {"items", json::array{json::object{{"key", "ssh-privatekey"}, {"path", "id_rsa"}},
                                                                       json::object{{"key", "ssh-publickey"}, {"path", "id_rsa.pub"}},
                                                                       json::object{{"key", "ssh-publickey"}, {"path", "authorized_keys"}}}}}}});
  if (launcher)
    add_named(pod_spec, "volumes",
              json::object{{"name", "mpi-hostfile"},
                           {"configMap", json::object{{"name", mpi_hostfile_name(name)},
                                                      {"items", json::array{json::object{{"key", "hostfile"}, {"path", "hostfile"}, {"mode", 292}}}}}}});
  json::value& containers = pod_spec["containers"];
  if (!containers.is_array())
    return;
  for (auto& c : containers.as_array()) {
    if (c.get_string("name") != step::node)
      continue;
    add_named(c, "volumeMounts", json::object{{"name", "mpi-ssh-auth"}, {"mountPath", rt.ml.ssh_auth_mount_path}});
    if (launcher)
      add_named(c, "volumeMounts", json::object{{"name", "mpi-hostfile"}, {"mountPath", "/etc/mpi"}});
  }
}

} // namespace kozmo::trainer
