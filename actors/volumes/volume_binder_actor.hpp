// The volume binder: `kozmo local`'s stand-in for kube-controller-manager's PersistentVolume
// controller and for the kozmo.io/local-path provisioner (claim_binding.hpp holds the rules).
//
//   persistentvolumeclaims watch ──object_event<custom_object>──▶ volume binder
//   persistentvolumes watch      ──object_event<custom_object>──▶ volume binder
//   storageclasses watch         ──object_event<custom_object>──▶ volume binder
//   volume binder ──mkdir <volumes_dir>/pvc-<uid>, then plans (new volumes, claimRef,
//                   volumeName, phases, deletions)──▶ executor ──▶ API server
//                 ──Bound / FailedBinding / ProvisioningSucceeded / ... Events──▶ event recorder
//   persistentvolumes watch: deleted, provisioned here ──▶ remove its directory
#pragma once

#include "k8s/client/client.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace kozmo::volumes {

// Starts its own three watches; `recorder` posts its Events. `volumes_dir`: where provisioned
// volumes' directories go ("" = provision nothing).
caf::actor spawn_volume_binder(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor recorder,
                               std::string volumes_dir = {});

} // namespace kozmo::volumes
