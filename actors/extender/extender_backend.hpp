// The seam between the extender's HTTP server and whatever answers it: an actor that owns a
// scheduler core (extender_actor.hpp), a future request/response bridge to the scheduler
// actor, or a test's direct backend.
//
// Rules for implementations:
//  1. Every call answers exactly once through `done`. `done` may run on any thread, now or
//     later (an actor answers from its own thread); the server copes with both.
//  2. An error's `code` becomes the HTTP status with HiveD's body {"code", "message"}; a user
//     error is 4xx (bad request, wrong node), a platform error 5xx. Outcomes kube-scheduler must
//     show to the user (a malformed scheduling spec, a failed binding write) are NOT errors:
//     they travel in the result's Error field with HTTP 200, because kube-scheduler drops the
//     body of a non-200 answer and would only log "code 400".
#pragma once

#include "actors/extender/extender_codec.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <functional>
#include <string>

namespace kozmo::extender {

// HiveD's /v1/inspect/... views.
enum class inspect_kind {
  affinity_groups,  // /v1/inspect/affinitygroups/
  affinity_group,   // /v1/inspect/affinitygroups/{name}
  cluster_status,   // /v1/inspect/clusterstatus
  physical_cluster, // /v1/inspect/clusterstatus/physicalcluster
  virtual_clusters, // /v1/inspect/clusterstatus/virtualclusters/
  virtual_cluster,  // /v1/inspect/clusterstatus/virtualclusters/{vc}
};

struct inspect_query {
  inspect_kind kind = inspect_kind::cluster_status;
  std::string name; // group or VC name for the single-item views
  friend bool operator==(const inspect_query&, const inspect_query&) = default;
};

template <class T>
using reply_fn = std::function<void(expected<T>)>;

class extender_backend {
public:
  virtual ~extender_backend() = default;
  virtual void filter(filter_args args, reply_fn<filter_result> done) = 0;
  virtual void preempt(preempt_args args, reply_fn<preempt_result> done) = 0;
  virtual void bind(bind_args args, reply_fn<bind_result> done) = 0;
  virtual void inspect(inspect_query query, reply_fn<json::value> done) = 0;
};

} // namespace kozmo::extender
