// The quota controller: `kozmo local`'s stand-in for kube-controller-manager's resource quota
// controller. It keeps every ResourceQuota's status (hard, and used as quota_usage.hpp counts
// it) up to date as the namespace's objects come and go. It does not refuse writes over a quota
// (kube-apiserver's admission does that; `kozmo local` does not).
//
//   pods watch (shared)                         ──object_event<pod>──▶ quota controller
//   resourcequotas, persistentvolumeclaims,
//   services, configmaps, secrets watches       ──object_event<custom_object>──▶ quota controller
//   quota controller ──status patches (at most every 200 ms per namespace)──▶ API server
#pragma once

#include "k8s/client/client.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kozmo::quota {

caf::actor spawn_quota_controller(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch);

} // namespace kozmo::quota
