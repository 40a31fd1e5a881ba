// One pass over a TrainJob: the world in (the job, the runtime it names, its snapshot, its pods
// and Service, the time), the writes out as a plan for the kit's executor, the status to write and
// when to look again. Pure: no I/O, no clock, no actor system.
//
// Rules (tests/unit/trainer names them):
//   1. A TrainJob whose spec.managedBy names another controller, or that is being deleted, is left
//      alone: nothing is created and no status is written.
//   2. Snapshot: the first pass that finds the runtime writes it into the ConfigMap
//      `<trainjob>-runtime-snapshot` (key runtime.json), owned by the TrainJob (so it is
//      garbage-collected with it); from then on the job runs the snapshot, whatever happens to the
//      runtime (edited, deleted). A runtime that is still missing `runtime_grace` after the job was
//      created fails it (TrainingRuntimeNotFound); a runtimeRef to another kind or group fails it at
//      once (TrainingRuntimeNotSupported, the peer's words).
//   3. Finished is final (Complete or Failed True): the pass only stops pods that still run (a
//      deadline, a failure) and never creates anything, so cleaned-up pods are not re-created.
//   4. Suspend stops the job's running pods and sets Suspended; resuming sets it False/Resumed and
//      the deadline counts from then. activeDeadlineSeconds fails the job (DeadlineExceeded) and
//      stops its pods.
//   5. A replicated job's pods are created once its dependsOn are met (Complete: every Job of the
//      dependency succeeded; Ready: every Job of it is ready or finished), at most
//      options.max_creates_per_pass per pass; a replicated job seen complete (jobsStatus) is never
//      re-created.
//   6. A failed pod is deleted and re-created alone (its index only) while its Job's failures stay
//      within the Job template's backoffLimit (default 6), counted in the TrainJob's annotation
//      kozmo.io/restarts; past it the Job has failed: the whole set restarts while
//      failurePolicy.maxRestarts allows, else the TrainJob fails (FailedJobs, or ReachedMaxRestarts).
//   7. Success (JobSet's successPolicy: All, or Any of targetReplicatedJobs; default every Job)
//      sets Complete (AllJobsCompleted, "jobset completed successfully") and stops what still runs.
//   8. A pod create the API server refused (create_refused) sets Created False (JobsCreationFailed,
//      the server's words) and a Warning Event; a 422 (the pod can never be valid) fails the job.
//   9. The status is written only when it changed; its jobsStatus counts Jobs as JobSet does.
//  11. MPI (mpi.hpp): the hostfile ConfigMap and the SSH Secret are created before the pods; the
//      Secret's keys come from the caller (observed.ssh_keys), asked for with needs_ssh_keys.
//  10. The claims of initializers.hpp are created before the pods that mount them; a claim is
//      never deleted by the pass (its owner reference lets the garbage collector do it).
#pragma once

#include "actors/controller/plan.hpp"
#include "actors/trainer/jobset.hpp"
#include "actors/trainer/mpi.hpp"
#include "actors/trainer/trainjob_status.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/pod.hpp"
#include "k8s/model/service.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kozmo::trainer {

inline constexpr std::string_view restarts_annotation = "kozmo.io/restarts";
std::string snapshot_name(const std::string& job);

struct observed {
  k8s::custom_object job;
  std::optional<k8s::custom_object> runtime;     // the runtime the job names, as it is now
  std::optional<k8s::custom_object> snapshot;    // <job>-runtime-snapshot, when it exists
  std::vector<k8s::pod> pods;                    // the job's pods (not those it deleted)
  std::vector<k8s::service> services;
  std::vector<std::string> claims;               // names of the job's PersistentVolumeClaims
  std::vector<std::string> config_maps;          // names of the job's ConfigMaps (the MPI hostfile)
  bool ssh_secret_exists = false;                // <job>-mpi-ssh-auth (created, or a create met 409)
  std::optional<ssh_key_pair> ssh_keys;          // made by the caller when a pass asked for them
  time_point now;
  struct create_refusal {
    std::string object; // "pod job-node-0-1"
    int code = 0;
    std::string message;
  };
  std::optional<create_refusal> create_refused;
};

struct pass_result {
  controller::plan plan;                  // writes in order; the status patch is the last step
  std::optional<time_point> wake_at;
  std::string skipped;                    // rule 1's reason, for logs
  bool needs_ssh_keys = false;            // MPI: make a key pair and run the pass again (rule 11)
  train_status status;                    // as the pass leaves it
};

pass_result reconcile(const observed& world, const options& opt);

client::resource_ref trainjob_ref(const std::string& ns, const std::string& name, std::string subresource = {});

} // namespace kozmo::trainer
