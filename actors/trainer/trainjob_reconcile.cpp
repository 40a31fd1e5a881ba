#include "actors/trainer/trainjob_reconcile.hpp"

#include "actors/trainer/trainjob_pass.hpp"
#include "actors/demystify/demystify.hpp"
#include "k8s/json/value.hpp"

#include <algorithm>
#include <map>

namespace kozmo::trainer {
namespace {

using namespace detail;

struct job_view {
  int succeeded_pods = 0, ready_pods = 0, active_pods = 0;
  bool failed = false, complete = false;
};

// Whether the replicated job counts as complete for dependsOn and for success (rule 5, 7).
bool seen_complete(const rjob_plan& r, const train_status& before) {
  auto it = std::find_if(before.jobs.begin(), before.jobs.end(), [&](const auto& j) { return j.name == r.name; });
  return r.replicas > 0 && it != before.jobs.end() && it->succeeded >= r.replicas;
}

bool rjob_complete(const rjob_plan& r, const std::vector<job_view>& jobs, const train_status& before) {
  if (r.replicas == 0)
    return true;
  if (std::all_of(jobs.begin(), jobs.end(), [](const auto& j) { return j.complete; }))
    return true;
  return seen_complete(r, before);
}

} // namespace

std::string snapshot_name(const std::string& job) { return job + "-runtime-snapshot"; }

client::resource_ref trainjob_ref(const std::string& ns, const std::string& name, std::string subresource) {
  return {std::string(group), "v1alpha1", "trainjobs", ns, name, std::move(subresource)};
}

pass_result reconcile(const observed& w, const options& opt) {
  pass p{w, opt, {}, {}, w.job.metadata.namespace_, w.job.metadata.name, w.job.metadata.uid, {}, {}, false, false};
  p.before = status_from_json(w.job.document.find("status"));
  p.out.status = p.before;
  if (auto by = managed_by_of(w.job.document); !managed_here(by)) {
    p.out.skipped = "managed by " + by;
    return std::move(p.out);
  }
  if (w.job.metadata.deletion_timestamp) {
    p.out.skipped = "being deleted";
    return std::move(p.out);
  }
  for (const auto& pod : w.pods)
    if (ours(pod, p.uid))
      p.pods[pod.metadata.name] = &pod;
  auto finish = [&]() -> pass_result {
    if (!(p.out.status == p.before)) {
      json::value patch = json::object{{"status", to_json(p.out.status)}};
      p.out.plan.steps.push_back(patch_step{trainjob_ref(p.ns, p.name, "status"), client::patch_type::merge, patch});
    }
    return std::move(p.out);
  };
  if (is_finished(p.before)) { // rule 3
    p.stop_active();
    return finish();
  }
  auto job = decode_train_job(w.job);
  if (!job) {
    p.fail("InvalidSpec", job.err().message);
    return finish();
  }
  auto doc = runtime_document(p, *job);
  if (!doc)
    return finish();
  auto runtime = decode_runtime(*doc);
  if (!runtime) {
    p.fail("InvalidRuntime", "runtime " + job->runtime.name + ": " + runtime.err().message);
    return finish();
  }
  auto set = realise(*job, *runtime, opt);
  if (!set) {
    p.fail(set.err().reason.empty() || set.err().reason == "Invalid" ? "InvalidSpec" : set.err().reason,
           set.err().message);
    return finish();
  }
  p.restarts = read_restarts(w.job.metadata);
  const bool have_service = std::any_of(w.services.begin(), w.services.end(),
                                        [&](const auto& s) { return s.metadata.name == p.name; });

  // Rule 4: suspend, resume, the deadline.
  if (job->suspend) {
    p.stop_active();
    p.set(condition::suspended, true, "Suspended", "TrainJob is suspended");
    if (find_condition(p.out.status, condition::running))
      p.set(condition::running, false, "Suspended", "TrainJob is suspended");
  } else if (has_true(p.before, condition::suspended)) {
    p.set(condition::suspended, false, "Resumed", "TrainJob is resumed");
  }
  if (!job->suspend && job->active_deadline_seconds) {
    auto start = w.job.metadata.creation_timestamp.value_or(w.now);
    if (const auto* s = find_condition(p.out.status, condition::suspended); s && s->status == "False")
      start = std::max(start, s->last_transition_time.value_or(start));
    auto deadline = start + std::chrono::seconds(*job->active_deadline_seconds);
    if (w.now >= deadline) {
      p.fail("DeadlineExceeded", "TrainJob exceeded its active deadline");
      return finish();
    }
    p.out.wake_at = deadline;
  }

  // Per Job: what its pods say (rule 6).
  std::vector<std::vector<job_view>> views(set->rjobs.size());
  bool restart_all = false;
  std::string failed_job;
  for (std::size_t r = 0; r < set->rjobs.size(); ++r)
    views[r].resize(static_cast<std::size_t>(set->rjobs[r].replicas));
  for (const auto& slot : set->pods) {
    auto r = static_cast<std::size_t>(std::find_if(set->rjobs.begin(), set->rjobs.end(),
                                                   [&](const auto& x) { return x.name == slot.rjob; }) -
                                      set->rjobs.begin());
    auto& v = views[r][static_cast<std::size_t>(slot.job_index)];
    auto it = p.pods.find(slot.name);
    if (it == p.pods.end())
      continue;
    const auto& pod = *it->second;
    if (pod.status.phase == "Succeeded") {
      ++v.succeeded_pods;
    } else if (pod.status.phase == "Failed") {
      auto key = slot.rjob + "-" + std::to_string(slot.job_index);
      if (p.restarts[key] < set->rjobs[r].backoff_limit && !job->suspend) {
        ++p.restarts[key];
        p.restarts_changed = true;
        p.event("Normal", "RestartingPod", "pod " + slot.name + " failed; re-creating it alone (" +
                                               std::to_string(p.restarts[key]) + " of backoffLimit " +
                                               std::to_string(set->rjobs[r].backoff_limit) + ")");
        p.remove(pod);
      } else {
        v.failed = true;
        failed_job = p.name + "-" + key;
      }
    } else {
      ++v.active_pods;
      v.ready_pods += pod_ready(pod) ? 1 : 0;
    }
  }
  for (std::size_t r = 0; r < set->rjobs.size(); ++r)
    for (auto& v : views[r])
      v.complete = !v.failed && v.succeeded_pods >= set->rjobs[r].completions;

  if (!failed_job.empty() && !job->suspend) {
    if (p.restarts["jobset"] < set->max_restarts) {
      ++p.restarts["jobset"];
      p.restarts_changed = true;
      p.event("Warning", "RestartingJobSet", "Job " + failed_job + " failed; restarting every pod (" +
                                                  std::to_string(p.restarts["jobset"]) + " of maxRestarts " +
                                                  std::to_string(set->max_restarts) + ")");
      std::vector<const k8s::pod*> all;
      for (const auto& [_, pod] : p.pods)
        all.push_back(pod);
      for (const auto* pod : all)
        p.remove(*pod);
      restart_all = true;
    } else if (set->max_restarts > 0) {
      p.fail("ReachedMaxRestarts", "jobset failed due to reaching max number of restarts");
    } else {
      p.fail("FailedJobs", "jobset failed due to one or more job failures");
    }
  }

  // Rule 7: success.
  const bool failed_now = has_true(p.out.status, condition::failed);
  std::vector<std::string> targets = json::strings_of(set->success_policy.find("targetReplicatedJobs"));
  const bool any = set->success_policy.get_string("operator") == "Any";
  bool success = !failed_now && !restart_all && !job->suspend;
  bool any_hit = false;
  for (std::size_t r = 0; r < set->rjobs.size() && success; ++r) {
    const auto& rj = set->rjobs[r];
    if (!targets.empty() && std::find(targets.begin(), targets.end(), rj.name) == targets.end())
      continue;
    bool done = rjob_complete(rj, views[r], p.before);
    any_hit = any_hit || std::any_of(views[r].begin(), views[r].end(), [](const auto& v) { return v.complete; });
    if (!any)
      success = done;
  }
  if (any)
    success = success && any_hit;

  if (success) {
    p.set(condition::complete, true, "AllJobsCompleted", "jobset completed successfully");
    if (find_condition(p.out.status, condition::running))
      p.set(condition::running, false, "Completed", "the trainer's pods finished");
    p.stop_active();
  }
  const bool stop = success || failed_now || restart_all || job->suspend;

  // Rule 5 and 8: create what is missing.
  if (!stop) {
    if (!have_service)
      p.create("services", set->service);
    if (set->mpi) {
      auto hostfile = mpi_hostfile_name(p.name);
      if (std::find(w.config_maps.begin(), w.config_maps.end(), hostfile) == w.config_maps.end())
        p.create("configmaps", set->hostfile);
      if (!w.ssh_secret_exists && w.ssh_keys)
        p.create("secrets", mpi_secret(*job, *w.ssh_keys));
      p.out.needs_ssh_keys = !w.ssh_secret_exists && !w.ssh_keys;
    }
    for (const auto& claim : set->claims)
      if (auto n = claim.at_path({"metadata", "name"})->as_string();
          std::find(w.claims.begin(), w.claims.end(), n) == w.claims.end())
        p.create("persistentvolumeclaims", claim);
    int creates = 0;
    bool all_there = true;
    std::string waiting_for;
    for (std::size_t r = 0; r < set->rjobs.size(); ++r) {
      const auto& rj = set->rjobs[r];
      if (rjob_complete(rj, views[r], p.before))
        continue;
      std::string unmet;
      for (const auto& d : rj.after) {
        auto dr = static_cast<std::size_t>(std::find_if(set->rjobs.begin(), set->rjobs.end(),
                                                        [&](const auto& x) { return x.name == d.name; }) -
                                           set->rjobs.begin());
        bool met = d.status == "Complete"
                       ? rjob_complete(set->rjobs[dr], views[dr], p.before)
                       : std::all_of(views[dr].begin(), views[dr].end(), [&](const auto& v) {
                           return v.complete || v.failed || v.ready_pods + v.succeeded_pods >= set->rjobs[dr].completions;
                         });
        if (!met)
          unmet = d.name + " to be " + (d.status == "Complete" ? "complete" : "ready");
      }
      if (!unmet.empty()) {
        all_there = false;
        if (rj.trainer_step)
          waiting_for = rj.name + " waits for " + unmet;
        continue;
      }
      for (const auto& slot : set->pods) {
        if (slot.rjob != rj.name || p.pods.count(slot.name))
          continue;
        bool terminating = std::any_of(w.pods.begin(), w.pods.end(), [&](const auto& x) {
          return x.metadata.name == slot.name;
        });
        if (views[r][static_cast<std::size_t>(slot.job_index)].complete)
          continue;
        all_there = false;
        if (terminating || creates >= opt.max_creates_per_pass)
          continue;
        p.create("pods", slot.pod);
        ++views[r][static_cast<std::size_t>(slot.job_index)].active_pods;
        ++creates;
      }
    }
    if (w.create_refused) {
      auto msg = w.create_refused->object + ": " + w.create_refused->message;
      p.set(condition::created, false, "JobsCreationFailed", msg);
      p.event("Warning", "FailedCreatePod", msg);
      if (w.create_refused->code == 422)
        p.fail("JobsCreationFailed", msg);
    } else if (all_there || creates > 0) {
      p.set(condition::created, true, "JobsCreationSucceeded", "Succeeded to create Jobs");
    }
    // Running: every trainer pod runs, else why not.
    int trainer_pods = 0, running = 0;
    std::string why = waiting_for;
    for (const auto& slot : set->pods) {
      auto rj = std::find_if(set->rjobs.begin(), set->rjobs.end(), [&](const auto& x) { return x.name == slot.rjob; });
      if (!rj->trainer_step)
        continue;
      ++trainer_pods;
      auto it = p.pods.find(slot.name);
      if (it != p.pods.end() && (it->second->status.phase == "Running" || it->second->status.phase == "Succeeded")) {
        ++running;
      } else if (why.empty() && it != p.pods.end()) {
        // Only a wait worth explaining names its pod (unschedulable, stuck pulling, a missing
        // Secret): the steps of a normal start would rewrite the status at each one.
        const auto& pod = *it->second;
        auto v = demystify::pending(pod, {}, w.now);
        bool unschedulable = std::any_of(pod.status.conditions.begin(), pod.status.conditions.end(), [](const auto& c) {
          return c.type == "PodScheduled" && c.status == "False";
        });
        if (v.is_failure() || unschedulable)
          why = "pod " + slot.name + ": " + (v.message.empty() ? "Pending" : v.message);
      }
    }
    if (why.empty() && running < trainer_pods)
      why = "the trainer's pods are starting";
    if (!has_true(p.out.status, condition::failed)) {
      if (trainer_pods > 0 && running == trainer_pods)
        p.set(condition::running, true, "Running", "every trainer pod is running");
      else if (!why.empty())
        p.set(condition::running, false, "Pending", why);
    }
  }

  // jobsStatus (rule 9).
  p.out.status.jobs.clear();
  for (std::size_t r = 0; r < set->rjobs.size(); ++r) {
    jobs_status js{set->rjobs[r].name};
    bool remembered = seen_complete(set->rjobs[r], p.before);
    for (const auto& v : views[r]) {
      if (job->suspend && !v.complete) {
        ++js.suspended;
        continue;
      }
      js.succeeded += v.complete ? 1 : 0;
      js.failed += v.failed ? 1 : 0;
      // A Job still running when the set succeeded is stopped (JobSet deletes it): it counts nowhere.
      const bool running = !v.complete && !v.failed && v.active_pods > 0 && !success;
      js.active += running ? 1 : 0;
      js.ready += running && v.ready_pods + v.succeeded_pods >= set->rjobs[r].completions ? 1 : 0;
    }
    if (remembered)
      js.succeeded = std::max(js.succeeded, set->rjobs[r].replicas);
    p.out.status.jobs.push_back(js);
  }

  if (p.restarts_changed) {
    json::value counts = json::object{};
    for (const auto& [k, v] : p.restarts)
      counts[k] = v;
    json::value patch = json::object{
        {"metadata", json::object{{"annotations", json::object{{std::string(restarts_annotation), json::dump(counts)}}}}}};
    p.out.plan.steps.push_back(patch_step{trainjob_ref(p.ns, p.name), client::patch_type::merge, std::move(patch)});
  }
  return finish();
}

} // namespace kozmo::trainer
