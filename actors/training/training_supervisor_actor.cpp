#include "actors/training/training_supervisor_actor.hpp"

#include "actors/training/pod_builder.hpp"

#include <caf/all.hpp>

namespace kozmo::training {

caf::actor spawn_training_supervisor(caf::actor_system& sys, caf::actor pods_watch, supervisor_config cfg) {
  controller::supervisor_config sc;
  sc.name = "training";
  sc.cli = cfg.job.cli;
  sc.ns = cfg.ns;
  // Job kinds, as the CRDs in deploy/crds serve them.
  for (const auto& k : all_kinds()) {
    auto r = resource_of_kind(std::string(k.name));
    sc.primaries.push_back({{r.group, r.version, r.resource, "", "", ""}, std::string(k.name), r.group + "/" + r.version});
  }
  sc.pods_watch = std::move(pods_watch);
  sc.services = true;
  sc.owned.push_back({{"", "v1", "configmaps", "", "", ""}, label::job_name}); // MPI hostfiles
  // The MPI launcher's identity and its right to exec into the workers.
  sc.owned.push_back({{"", "v1", "serviceaccounts", "", "", ""}, label::job_name});
  sc.owned.push_back({{"rbac.authorization.k8s.io", "v1", "roles", "", "", ""}, label::job_name});
  sc.owned.push_back({{"rbac.authorization.k8s.io", "v1", "rolebindings", "", "", ""}, label::job_name});
  sc.route_label = label::job_name;
  sc.recorder = std::move(cfg.recorder);
  auto job_cfg = std::make_shared<const job_actor_config>(std::move(cfg.job));
  sc.spawn_child = [job_cfg](caf::event_based_actor* parent, const controller::child_tools& tools,
                             std::shared_ptr<const k8s::custom_object> job, controller::owned_view view) {
    return spawn_training_job(parent->system(), parent, job_cfg, tools, std::move(job), std::move(view));
  };
  return controller::spawn_supervisor(sys, std::move(sc));
}

} // namespace kozmo::training
