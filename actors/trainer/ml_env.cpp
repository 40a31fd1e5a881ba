// The environment each ML policy gives the trainer container, as the peer's plugins write it
// (docs/trainer.md lists it for users). Values are literal: each pod is built for its own index,
// so the node rank needs no field reference.
#include "actors/trainer/jobset.hpp"

#include <cmath>
#include <cstdlib>

namespace kozmo::trainer {
namespace {

std::string first_node(const env_context& c) { return c.job + "-node-0-0." + c.job; }

// A CPU quantity rounded up to whole CPUs ("500m" → 1, "2" → 2); 0 when unreadable.
int whole_cpus(const std::string& q) {
  if (q.empty())
    return 0;
  char* end = nullptr;
  double v = std::strtod(q.c_str(), &end);
  if (end == q.c_str() || !std::isfinite(v) || v <= 0)
    return 0;
  if (std::string_view(end) == "m")
    v /= 1000.0;
  else if (*end != '\0')
    return 0;
  return static_cast<int>(std::min(std::ceil(v), static_cast<double>(max_proc_per_node)));
}

// torch's PET_NPROC_PER_NODE, as the peer resolves it: a number, "gpu", or "auto" with GPUs is
// passed as it is (torchrun counts the GPUs itself); "cpu", or "auto" without GPUs, is the whole
// CPUs of the container's limit (else request), at least 1.
std::string torch_procs(const env_context& c) {
  const auto& p = c.proc_per_node.empty() ? std::string("auto") : c.proc_per_node;
  if (p == "cpu" || (p == "auto" && c.gpus == 0))
    return std::to_string(std::max(1, whole_cpus(c.cpu)));
  return p;
}

} // namespace

int framework_port(framework f) {
  return f == framework::none || f == framework::mpi ? 0 : trainer_port;
}

std::vector<std::string_view> reserved_env(framework f) {
  switch (f) {
  case framework::torch: return {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"};
  case framework::jax: return {"JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS"};
  case framework::xgboost: return {"DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"};
  case framework::mpi: return {"OMPI_MCA_orte_default_hostfile"};
  case framework::none: break;
  }
  return {};
}

std::vector<std::pair<std::string, std::string>> ml_env(const runtime_spec& runtime, const env_context& c) {
  switch (runtime.ml.kind) {
  case framework::torch:
    return {{"PET_NNODES", std::to_string(c.nodes)},
            {"PET_NPROC_PER_NODE", torch_procs(c)},
            {"PET_NODE_RANK", std::to_string(c.rank)},
            {"PET_MASTER_ADDR", first_node(c)},
            {"PET_MASTER_PORT", std::to_string(trainer_port)}};
  case framework::jax:
    return {{"JAX_NUM_PROCESSES", std::to_string(c.nodes)},
            {"JAX_PROCESS_ID", std::to_string(c.rank)},
            {"JAX_COORDINATOR_ADDRESS", first_node(c) + ":" + std::to_string(trainer_port)}};
  case framework::xgboost:
    return {{"DMLC_TRACKER_URI", first_node(c)},
            {"DMLC_TRACKER_PORT", std::to_string(trainer_port)},
            {"DMLC_TASK_ID", std::to_string(c.rank)},
            {"DMLC_NUM_WORKER", std::to_string(c.nodes * std::max(1, c.gpus))}};
  case framework::mpi:
    return {{"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"},
            {"OMPI_MCA_orte_keep_fqdn_hostnames", "true"},
            {"OMPI_MCA_orte_set_default_slots", c.proc_per_node},
            {"OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"}};
  case framework::none: break;
  }
  return {};
}

} // namespace kozmo::trainer
