// What a user's custom object becomes: a training job (PyTorchJob, TFJob, MPIJob, XGBoostJob,
// PaddleJob, JAXJob, Caffe2Job; actors/training/job_model.hpp decode_job) and a TaskExecution
// (actors/tasks/task_spec.hpp decode_task). The input is the object's JSON as a watch delivers
// it. What decodes is then built the way the controllers build it: the job's gang plan, the
// pods and services of its first replicas and MPIJob's ConfigMap; the task's first pod.
#include "actors/tasks/plugin.hpp"
#include "actors/tasks/task_pod.hpp"
#include "actors/tasks/task_spec.hpp"
#include "actors/training/job_model.hpp"
#include "actors/training/pod_builder.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/codec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <algorithm>

using namespace kozmo;

namespace {

void build_job(const training::training_job& job) {
  training::options opt;
  auto gang = training::plan_gang(job, opt);
  (void)job.total_replicas();
  for (const auto& spec : job.replicas) {
    // The first few indices: their pods differ (master, rank 0) and cost what one pod costs.
    for (int index = 0; index < std::min(spec.replicas, 3); ++index) {
      auto pod = training::build_pod(job, spec, index, gang, opt);
      fuzz::require(json::parse(json::dump(pod)).has_value(), "a built pod is valid JSON");
      (void)training::build_service(job, spec, index);
    }
  }
  if (job.traits->kind == training::job_kind::mpi) {
    (void)training::build_mpi_config_map(job);
    (void)training::build_mpi_role(job);
  }
}

void build_task(const k8s::custom_object& object, const tasks::task_spec& spec) {
  if (spec.type != "container" && spec.type != "pod")
    return;
  tasks::platform_config config;
  tasks::attempt_pod_input in;
  in.task = &object;
  in.spec = &spec;
  in.config = &config;
  in.attempt = 1;
  (void)tasks::build_attempt_pod(in);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<std::string> task_types = tasks::plugin_registry::with_builtins(true).types();
  auto object = k8s::decode<k8s::custom_object>(fuzz::as_text(data, size));
  if (!object)
    return 0;
  (void)training::managed_by_of(object->document);
  if (auto job = training::decode_job(*object))
    build_job(*job);
  if (auto spec = tasks::decode_task(*object, task_types))
    build_task(*object, *spec);
  return 0;
}
