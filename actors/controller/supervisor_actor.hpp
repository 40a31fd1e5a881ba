// The supervisor: watches one or more "primary" kinds (PyTorchJob, TFJob, ..., TaskExecution)
// and runs one child actor per primary object (by uid), routing to it the objects it owns.
//
//   primary watches ──object_event<custom_object>──▶ supervisor ──spawns / stops (by uid)──▶ child
//   pods watch (shared), services watch, other owned watches (e.g. config maps by label)
//        ──object_event──▶ supervisor ──routes by controller uid and by route label──▶ child
//   referenced watches (e.g. runtimes a primary names) ──object_event──▶ supervisor
//        ──to every child of the object's namespace (every child: cluster-scoped)──▶ child
//
//   child receives: object_event<custom_object> (its primary, kind and apiVersion filled in),
//                   object_event<pod>, object_event<service>, owned_event (other owned kinds,
//                   referenced kinds)
//
// Routing happens here rather than by one subscription per child on the watch actors: a watch
// actor checks every subscription on every event, which costs O(children) per pod event with a
// thousand jobs; the supervisor routes with two hash lookups, and it sees each event once, so an
// object that leaves one primary for another (release, adopt, relabel) reaches both exactly.
// Children are spawned only once every owned and referenced kind has been listed, so a restarted
// controller never recreates what exists. A child that crashes is spawned again at its primary's next event;
// a DELETED primary stops its child.
//
// The supervisor also spawns what its children write with: one executor (executor_actor.hpp)
// and, unless given one, an event recorder; both are linked to it.
//
// Referenced kinds (supervisor_config::referenced) are objects a primary names but does not own
// (a TrainJob's TrainingRuntime or ClusterTrainingRuntime): no controller reference, no route
// label, and any child may need any of them. Rules:
//  1. Each referenced kind is watched (a namespaced one in cfg.ns, or in all namespaces when
//     cfg.ns is empty; a cluster-scoped one always without a namespace), and children are spawned
//     only once it is listed, the same gate as the owned kinds': a child's first pass sees every
//     referenced object that exists.
//  2. At spawn, the child's owned_view::others holds, beside its owned objects, every referenced
//     object it can see (the namespaced ones of its primary's namespace, every cluster-scoped one)
//     as owned_event{ref.resource, added, object}, with kind and apiVersion filled in.
//  3. Every later change (added, modified, deleted) of a referenced object goes as an owned_event
//     {ref.resource, type, object}, kind and apiVersion filled in, to each running child that can
//     see it (rule 2). That costs O(children) per change, unlike the owned kinds' hash routing:
//     referenced kinds are configuration, which changes rarely.
//  4. `ref.resource` is how a child tells the kinds apart in owned_event: it must differ from every
//     owned kind's and from the other referenced kinds'. With no referenced kinds (the training and
//     task controllers), nothing of the above happens.
#pragma once

#include "actors/controller/clock.hpp"
#include "k8s/client/resource.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/pod.hpp"
#include "k8s/model/service.hpp"
#include "messages/watch_types.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kozmo::client {
class client;
}

namespace kozmo::controller {

struct primary_kind {
  client::resource_ref ref; // group, version, resource (ns: filled from the config)
  std::string kind;         // "PyTorchJob"
  std::string api_version;  // "kubeflow.org/v1"
};

// An owned kind other than pods and services, watched by the supervisor as custom objects.
struct owned_kind {
  client::resource_ref ref;   // e.g. {"", "v1", "configmaps"}
  std::string label_selector; // only these are watched (e.g. the route label)
};

// A kind whose objects the primaries name without owning them (rules 1-4 above).
struct referenced_kind {
  client::resource_ref ref;  // group, version, resource (ns: from the config, or none when cluster-scoped)
  std::string kind;          // "ClusterTrainingRuntime", filled into each object as primaries get theirs
  std::string api_version;   // "trainer.kubeflow.org/v1alpha1"
  bool cluster_scoped = false;
};

// A change of an owned object of an `owned_kind`, or of an object of a `referenced_kind`.
struct owned_event {
  std::string resource; // owned_kind::ref.resource or referenced_kind::ref.resource: "configmaps"
  watch::event_type type = watch::event_type::added;
  std::shared_ptr<const k8s::custom_object> object;
};

template <class I>
typename I::result_type inspect(I& f, owned_event& x) {
  return f(caf::meta::type_name("owned_event"), x.resource);
}

// What the supervisor holds for a primary object when it spawns the child: the first pass of a
// restarted controller sees all of it at once.
struct owned_view {
  std::vector<std::shared_ptr<const k8s::pod>> pods;
  std::vector<std::shared_ptr<const k8s::service>> services;
  std::vector<owned_event> others; // type `added`: owned objects, then referenced ones (rule 2)
};

// What a child writes with.
struct child_tools {
  caf::actor executor;
  caf::actor recorder;
  std::shared_ptr<const clock> time;
};

// Spawns the child of `primary`, linked to `parent` (the supervisor).
using child_factory = std::function<caf::actor(caf::event_based_actor* parent, const child_tools& tools,
                                               std::shared_ptr<const k8s::custom_object> primary, owned_view view)>;

struct supervisor_config {
  std::string name = "controller"; // logs: "training"
  std::shared_ptr<client::client> cli;
  std::string ns; // restrict to one namespace ("" = all)
  std::vector<primary_kind> primaries;
  caf::actor pods_watch;   // the engine's shared pods watch; null: pods are not routed
  bool services = false;   // watch services and route them
  std::vector<owned_kind> owned;
  std::vector<referenced_kind> referenced; // empty: none (rules 1-4)
  std::string route_label; // its value names the primary in the object's namespace
  caf::actor recorder;     // null: the supervisor spawns one
  std::shared_ptr<const clock> time = real_clock();
  child_factory spawn_child;
};

// Messages it answers besides the watch events: (stats_atom) → the number of running children.
caf::actor spawn_supervisor(caf::actor_system& sys, supervisor_config cfg);

} // namespace kozmo::controller
