// The pure reconcile step of a training job: what the world looks like in, what to do out.
//
//   reconcile(observed{job, pods, services, config map, now}, options)
//     -> reconcile_result{actions, status to write, when to wake up}
//
// No I/O, no clock, no actor system: the job actor calls it with what its watch caches hold
// and executes the actions with a REST client. Rules the caller keeps:
//   1. Execute the actions in order. If one fails, drop the rest and the status, and
//      reconcile again (level-based: the next pass sees the world as it is and redoes what
//      is still needed). The status assumes every action succeeded.
//   2. Pass every pod and service of the namespace that carries the job's
//      training.kubeflow.org/job-name label or is controlled by the job; the core decides
//      which to own, adopt, release or ignore.
//   3. Leave out pods the caller deleted and still sees (expectations, as the peer keeps
//      them): otherwise a restart could be counted twice against backoffLimit. Pods with a
//      deletionTimestamp are ignored here anyway.
//   4. An `adopt` action must re-read the job first (GET, not the cache) and adopt only if
//      the uid matches and the job has no deletionTimestamp.
//   5. Re-run at `wake_at` (deadline, TTL, grace periods, the next batch of creates), if set,
//      even without events.
//   6. Pass `create_refused` from the last failed create until a create succeeds.
// Nothing here throws: a malformed job becomes a Failed condition and an Event.
#pragma once

#include "actors/training/job_model.hpp"
#include "actors/training/job_status.hpp"
#include "actors/training/options.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/pod.hpp"
#include "k8s/model/service.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace kozmo::training {

struct observed {
  k8s::custom_object job; // the PyTorchJob / TFJob / MPIJob / Caffe2Job, document included
  std::vector<k8s::pod> pods;
  std::vector<k8s::service> services;
  // MPIJob: the data of the existing "<job>-config" ConfigMap, nullopt if there is none.
  std::optional<std::map<std::string, std::string>> mpi_config;
  time_point now;
  // MPIJob: the launcher's ServiceAccount, Role and RoleBinding that exist, as
  // "serviceaccounts/<name>", "roles/<name>", "rolebindings/<name>", and the Role's rules.
  std::set<std::string> mpi_rbac = {};
  std::optional<json::value> mpi_role_rules = {};
  // The API server refused the last pod or service this job's actor tried to create (a 4xx
  // other than a conflict: the template is invalid, a quota or an admission plugin said no),
  // and no create has worked since. The pass reports it (condition ReplicaFailure, a
  // FailedCreatePod Event) before it tries again; the caller retries with back-off.
  struct create_refusal {
    std::string object; // "pod job-worker-0"
    int code = 0;
    std::string message; // the API server's
  };
  std::optional<create_refusal> create_refused = {};
};

// POST the object (a complete pod / service / config map).
struct create_object {
  std::string resource; // "pods", "services", "configmaps", "serviceaccounts", "roles", "rolebindings"
  json::value object;
  std::string group = {}; // "" (core) or "rbac.authorization.k8s.io"
};
// DELETE with a uid precondition (so a recreated namesake is never hit).
struct delete_object {
  std::string resource;
  std::string name;
  std::string uid;
};
// Re-read the job, then adopt: GET the job (not from a cache) and, only if it still has
// `job_uid` and no deletionTimestamp, send `patch`, a strategic merge patch that adds the
// job's controller reference (with the object's uid as a precondition).
struct adopt_object {
  std::string resource;
  std::string name;
  json::value patch;
  std::string job_uid;
};
// Strategic merge patch that removes the job's controller reference.
struct release_object {
  std::string resource;
  std::string name;
  json::value patch;
};
// Merge patch of an owned object: the MPI config map's data, the MPI launcher's Role rules.
struct patch_object {
  std::string resource; // "configmaps", "roles"
  std::string name;
  json::value patch;
  std::string group = {}; // "" (core) or "rbac.authorization.k8s.io"
};
// Merge patch of the job itself (not its status): the recreated-pods annotation.
struct patch_job {
  json::value patch;
};
// TTL after finish reached: DELETE the job (uid precondition).
struct delete_job {
  std::string uid;
};
// A core/v1 Event about the job.
struct record_event {
  std::string type; // "Normal" / "Warning"
  std::string reason;
  std::string message;
};

using action = std::variant<create_object, delete_object, adopt_object, release_object, patch_object, patch_job, delete_job,
                            record_event>;

struct reconcile_result {
  std::vector<action> actions;
  // The job's new status, to send as the JSON merge patch {"status": <this>} to the status
  // subresource: fields to clear are null. nullopt when nothing changed.
  std::optional<json::value> status;
  std::optional<time_point> wake_at;
  // Why nothing was done, for logs: "managed by x", "being deleted"; empty otherwise.
  std::string skipped;
};

reconcile_result reconcile(const observed& world, const options& opt);

} // namespace kozmo::training
