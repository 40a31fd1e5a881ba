// When a job has succeeded, per kind (the peer's UpdateJobStatus rules).
//
//   PyTorchJob  Master succeeded; without a Master: all workers succeeded, or (elastic) any.
//   TFJob       Chief (or Master) succeeded; without one: all workers succeeded, or worker-0
//               succeeded unless successPolicy is AllWorkers.
//   MPIJob      the Launcher succeeded.
//   Caffe2Job   terminationPolicy.chief's replica succeeded; without one: all replicas.
#pragma once

#include "actors/training/job_model.hpp"

#include <map>
#include <set>
#include <string>
#include <utility>

namespace kozmo::training {

struct replica_counts {
  int active = 0;    // Running
  int succeeded = 0;
  int failed = 0;
  int pending = 0;   // created, not yet running
};

struct replica_view {
  std::map<std::string, replica_counts> counts;       // by replica type
  std::set<std::pair<std::string, int>> succeeded_pods; // (type, index) whose pod Succeeded
};

bool job_succeeded(const training_job& job, const replica_view& view);

} // namespace kozmo::training
