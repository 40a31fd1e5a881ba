#include "actors/training/success_policy.hpp"

namespace kozmo::training {
namespace {

bool all_succeeded(const training_job& job, const replica_view& v, std::string_view type) {
  const replica_spec* spec = job.find(type);
  if (spec == nullptr)
    return false;
  auto it = v.counts.find(spec->type);
  int succeeded = it == v.counts.end() ? 0 : it->second.succeeded;
  return succeeded >= spec->replicas;
}

int succeeded_of(const replica_view& v, const std::string& type) {
  auto it = v.counts.find(type);
  return it == v.counts.end() ? 0 : it->second.succeeded;
}

} // namespace

bool job_succeeded(const training_job& job, const replica_view& v) {
  switch (job.traits->kind) {
  case job_kind::pytorch:
    if (job.find("Master") != nullptr)
      return all_succeeded(job, v, "Master");
    if (job.elastic && succeeded_of(v, "Worker") > 0)
      return true;
    return all_succeeded(job, v, "Worker");
  case job_kind::tensorflow:
    if (job.find("Chief") != nullptr)
      return all_succeeded(job, v, "Chief");
    if (job.find("Master") != nullptr)
      return all_succeeded(job, v, "Master");
    if (job.find("Worker") == nullptr)
      return false;
    if (all_succeeded(job, v, "Worker"))
      return true;
    return job.success_policy != "AllWorkers" && v.succeeded_pods.count({"Worker", 0}) > 0;
  case job_kind::mpi: return all_succeeded(job, v, "Launcher");
  case job_kind::xgboost: return all_succeeded(job, v, "Master");
  case job_kind::paddle:
    if (job.find("Master") != nullptr)
      return all_succeeded(job, v, "Master");
    return all_succeeded(job, v, "Worker");
  case job_kind::jax: return all_succeeded(job, v, "Worker");
  case job_kind::caffe2:
    if (job.chief)
      return v.succeeded_pods.count(*job.chief) > 0;
    for (const auto& r : job.replicas)
      if (!all_succeeded(job, v, r.type))
        return false;
    return true;
  }
  return false;
}

} // namespace kozmo::training
