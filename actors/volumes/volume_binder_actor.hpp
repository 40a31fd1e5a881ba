// The volume binder: `kozmo local`'s stand-in for kube-controller-manager's PersistentVolume
// controller (claim_binding.hpp holds the rules).
//
//   persistentvolumeclaims watch ──object_event<custom_object>──▶ volume binder
//   persistentvolumes watch      ──object_event<custom_object>──▶ volume binder
//   volume binder ──plans (claimRef, volumeName, phases)──▶ executor ──▶ API server
//                 ──FailedBinding / VolumeMismatch Events──▶ event recorder
#pragma once

#include "k8s/client/client.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kozmo::volumes {

// Starts its own two watches; `recorder` posts its Events.
caf::actor spawn_volume_binder(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor recorder);

} // namespace kozmo::volumes
