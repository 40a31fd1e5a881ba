// The training supervisor: watches the four job kinds and runs one training_job actor per job.
//
//   jobs watches (pytorchjobs, tfjobs, mpijobs: kubeflow.org/v1; caffe2jobs: v1alpha1)
//        ──object_event<custom_object>──▶ supervisor ──spawns / stops (by uid)──▶ training_job
//   pods watch (shared), services watch, configmaps watch (label training.kubeflow.org/job-name)
//        ──object_event──▶ supervisor ──routes by controller uid and by job-name label──▶ training_job
//
// Routing happens here rather than by one subscription per job on the watch actors: a watch
// actor checks every subscription on every event, which costs O(jobs) per pod event with a
// thousand jobs; the supervisor routes with two hash lookups, and it sees each event once, so
// an object that leaves one job for another (release, adopt, relabel) reaches both exactly.
// Job actors are spawned only once the pods, services and config maps have been listed, so a
// restarted controller never recreates pods that exist.
#pragma once

#include "actors/training/training_job_actor.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace kozmo::training {

struct supervisor_config {
  job_actor_config job;
  std::string ns; // restrict to one namespace ("" = all)
};

// `pods_watch` is the engine's watch actor of pods (watch::spawn_watch<k8s::pod>); the
// supervisor spawns its own watches of jobs, services and config maps, linked to it.
caf::actor spawn_training_supervisor(caf::actor_system& sys, caf::actor pods_watch, supervisor_config cfg);

} // namespace kozmo::training
