// The training supervisor: the controller kit's supervisor (controller/supervisor_actor.hpp)
// configured for every training job kind, running one training_job actor per job.
//
//   jobs watches (one per kind of job_model.cpp's table: pytorchjobs, tfjobs, mpijobs, xgboostjobs,
//   paddlejobs, jaxjobs: kubeflow.org/v1; caffe2jobs: v1alpha1)
//        ──object_event<custom_object>──▶ supervisor ──spawns / stops (by uid)──▶ training_job
//   pods watch (shared), services watch, configmaps watch (label training.kubeflow.org/job-name)
//        ──object_event──▶ supervisor ──routes by controller uid and by job-name label──▶ training_job
#pragma once

#include "actors/training/training_job_actor.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <string>

namespace kozmo::training {

struct supervisor_config {
  job_actor_config job;
  std::string ns;     // restrict to one namespace ("" = all)
  caf::actor recorder; // the process's event recorder; null: the supervisor spawns one
};

// `pods_watch` is the engine's watch actor of pods (watch::spawn_watch<k8s::pod>); the
// supervisor spawns its own watches of jobs, services and config maps, linked to it.
caf::actor spawn_training_supervisor(caf::actor_system& sys, caf::actor pods_watch, supervisor_config cfg);

} // namespace kozmo::training
