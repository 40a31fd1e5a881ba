// The simulated kubelet: one actor per simulated node.
//
//   kubelet ──create/patch Node, renew Lease──▶ API server     (registration, heartbeats)
//   pods watch ──object_event<pod> (spec.nodeName = this node)──▶ kubelet
//   kubelet ──pods/status patches, final DELETE (grace 0)──▶ API server; Events──▶ event recorder
//   kubelet ──(advance_atom, uid, generation) after a delay──▶ itself  (lifecycle timers)
//
// It only uses the client, so it runs against `kozmo local`'s embedded server and against a
// real kube-apiserver alike (`kozmo kubelet --kubeconfig ...`).
#pragma once

#include "actors/kubelet/cluster_shape.hpp"
#include "k8s/client/client.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <utility>

namespace kozmo::kubelet {

struct kubelet_config {
  node_shape node;
  std::chrono::milliseconds heartbeat{10000}; // node status + Lease renewal period
  caf::actor recorder;                        // the event recorder; null: no Events
  // The runtime of pods without a kozmo.io/runtime annotation: "sim" (simulated containers) or
  // "process" (local processes; the node is labelled kozmo.io/runtime=process). A pod's
  // annotation may choose `process` only where the operator allowed it at start: runtime
  // "process", or allow_process; elsewhere it stays in CreateContainerConfigError, saying why.
  std::string runtime = "sim";
  bool allow_process = false;
  // The process runtime runs containers as this user and group when set (Kozmo running as root
  // must not run a pod's command as root); their pod's files are handed to it.
  std::optional<std::pair<unsigned, unsigned>> run_as;
  // The process runtime's files: volumes, termination messages, logs (process_workspace.hpp).
  // "" = the process runtime is unavailable (pods asking for it fail with a message).
  std::string work_dir;
};

// `pods_watch` is a watch actor of pods (watch::spawn_watch<k8s::pod>); the kubelet
// subscribes to the pods bound to its node.
caf::actor spawn_kubelet(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                         kubelet_config cfg);

} // namespace kozmo::kubelet
