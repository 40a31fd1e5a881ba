// Which pods and services belong to a job: the peer's ClaimPods / ClaimServices.
//
// An object controlled by the job is kept while its labels match the job's selector and
// released when they no longer do; an orphan that matches is adopted (after the caller
// re-reads the job, see reconcile.hpp); objects controlled by someone else are ignored.
#pragma once

#include "actors/training/reconcile.hpp"

#include <set>
#include <vector>

namespace kozmo::training {

struct claimed_objects {
  std::vector<const k8s::pod*> pods;         // owned (or being adopted), not being deleted
  std::set<std::string> terminating_pods;    // owned pods with a deletionTimestamp (names)
  std::vector<const k8s::service*> services; // owned (or being adopted), not being deleted
};

claimed_objects claim_objects(const training_job& job, const observed& world, std::vector<action>& actions);

} // namespace kozmo::training
