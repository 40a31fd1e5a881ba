// One reconcile pass of a training job (see reconcile.hpp for the contract).
//
// The pass, in order:
//   skip (managed elsewhere, being deleted) → decode (malformed: Failed) → Created →
//   claim pods and services → finished? clean up, TTL → suspended? tear down → resume →
//   look at the replicas → terminal checks (backoffLimit, activeDeadlineSeconds, success,
//   permanent failure, stuck past its grace) → otherwise converge: restart, create, scale
//   down, services, MPI hostfile → conditions → status diff.
#include "actors/training/reconcile.hpp"

#include "actors/training/claim.hpp"
#include "actors/training/pod_builder.hpp"
#include "actors/training/pod_health.hpp"
#include "actors/training/success_policy.hpp"
#include "k8s/model/kozmo_keys.hpp"

#include <algorithm>

namespace kozmo::training {
namespace {

using std::chrono::seconds;

// A pod that failed and will be deleted so that it is recreated.
struct restart_plan {
  const k8s::pod* pod;
  std::string type;
  int exit_code;
};

class pass {
public:
  pass(const training_job& job, const observed& world, const options& opt, time_point now)
      : job_(job), world_(world), opt_(opt), now_(now), kind_(job.traits->name), status_(job.status) {}

  reconcile_result run();

private:
  // --- helpers -----------------------------------------------------------------------
  std::string job_ref() const { return std::string(kind_) + " " + job_.metadata.namespace_ + "/" + job_.metadata.name; }
  std::string reason(std::string_view r) const { return std::string(kind_) + std::string(r); }
  void event(std::string type, std::string reason, std::string message) {
    out_.actions.push_back(record_event{std::move(type), std::move(reason), std::move(message)});
  }
  void wake(time_point t) {
    if (!out_.wake_at || t < *out_.wake_at)
      out_.wake_at = t;
  }
  const replica_spec* spec_of_label(const std::string& lowered) const {
    for (const auto& r : job_.replicas)
      if (lower_type(r.type) == lowered)
        return &r;
    return nullptr;
  }
  const k8s::service* owned_service(const std::string& name) const {
    for (const k8s::service* s : claimed_.services)
      if (s->metadata.name == name)
        return s;
    return nullptr;
  }
  // A pod of that name exists but is not the job's (controlled by another owner).
  bool name_taken(const std::string& name) const {
    return std::any_of(world_.pods.begin(), world_.pods.end(), [&](const k8s::pod& p) {
      return p.metadata.name == name && p.metadata.namespace_ == job_.metadata.namespace_;
    });
  }
  void delete_pod(const k8s::pod& p, bool with_service) {
    if (!deleted_.insert(p.metadata.name).second)
      return;
    out_.actions.push_back(delete_object{"pods", p.metadata.name, p.metadata.uid});
    event("Normal", "SuccessfulDeletePod", "Deleted pod: " + p.metadata.name);
    if (with_service)
      if (const k8s::service* s = owned_service(p.metadata.name))
        delete_service(*s);
  }
  void delete_service(const k8s::service& s) {
    if (!deleted_services_.insert(s.metadata.name).second)
      return;
    out_.actions.push_back(delete_object{"services", s.metadata.name, s.metadata.uid});
    event("Normal", "SuccessfulDeleteService", "Deleted service: " + s.metadata.name);
  }

  // --- steps -------------------------------------------------------------------------
  void observe_replicas();
  void clean_up(clean_pod_policy policy);
  void honour_ttl();
  void finish_finished_job();
  void suspend();
  bool check_backoff_limit();
  bool check_deadline();
  bool check_success();
  bool check_permanent_failure();
  bool check_stuck();
  void fail(std::string_view why, const std::string& message, bool stop_pods);
  void converge();
  // Whether another pod or service may be created in this pass (options::max_creates_per_pass);
  // when not, the pass wakes again at once for the next batch.
  bool may_create();
  // A create the API server refused last time is reported before creates are tried again.
  bool report_refused_create();
  void converge_services();
  void converge_mpi_config();
  void converge_mpi_rbac();
  void update_running();
  void write_replica_statuses();
  reconcile_result finish();

  const training_job& job_;
  const observed& world_;
  const options& opt_;
  const time_point now_;
  const std::string_view kind_;
  job_status status_;
  reconcile_result out_;
  claimed_objects claimed_;
  std::set<std::string> deleted_, deleted_services_;
  int creates_ = 0;

  // What observe_replicas found.
  replica_view view_;
  std::map<std::pair<std::string, int>, const k8s::pod*> canonical_; // (type, index) → its pod
  std::vector<const k8s::pod*> surplus_; // out of range, duplicates, unknown types
  std::vector<restart_plan> restarts_;
  std::vector<restart_plan> permanent_failures_;
  int in_place_restarts_ = 0;
};

void pass::observe_replicas() {
  for (const k8s::pod* p : claimed_.pods) {
    const replica_spec* spec = spec_of_label(replica_type_of(p->metadata));
    auto index = replica_index_of(p->metadata);
    if (spec == nullptr || !index || *index >= spec->replicas) {
      surplus_.push_back(p);
      continue;
    }
    auto key = std::pair{spec->type, *index};
    auto [it, fresh] = canonical_.emplace(key, p);
    if (!fresh) {
      // Two pods for one index (an adopted namesake): keep the one with the expected name.
      if (p->metadata.name == replica_object_name(job_.metadata.name, spec->type, *index)) {
        surplus_.push_back(it->second);
        it->second = p;
      } else {
        surplus_.push_back(p);
      }
    }
  }
  for (const auto& spec : job_.replicas)
    view_.counts[spec.type];
  for (const auto& [key, p] : canonical_) {
    const replica_spec* spec = job_.find(key.first);
    replica_counts& c = view_.counts[key.first];
    const std::string& phase = p->status.phase;
    if (spec->restart != restart_policy::never)
      in_place_restarts_ += container_restarts(*p);
    if (phase == "Running") {
      ++c.active;
    } else if (phase == "Succeeded") {
      ++c.succeeded;
      view_.succeeded_pods.insert(key);
    } else if (phase == "Failed") {
      ++c.failed;
      int code = main_exit_code(*p, spec->main_container);
      if (restarts_after_failure(spec->restart, code))
        restarts_.push_back({p, spec->type, code});
      else
        permanent_failures_.push_back({p, spec->type, code});
    } else {
      ++c.pending;
    }
  }
}

void pass::clean_up(clean_pod_policy policy) {
  if (policy == clean_pod_policy::none)
    return;
  for (const k8s::pod* p : claimed_.pods) {
    const std::string& phase = p->status.phase;
    bool active = phase == "Running" || phase == "Pending" || phase.empty() || phase == "Unknown";
    if (policy == clean_pod_policy::running && !active)
      continue;
    delete_pod(*p, true);
  }
  if (policy == clean_pod_policy::all)
    for (const k8s::service* s : claimed_.services)
      delete_service(*s);
}

void pass::honour_ttl() {
  if (!job_.run.ttl_seconds_after_finished)
    return;
  if (!status_.completion_time)
    status_.completion_time = now_;
  time_point at = *status_.completion_time + seconds(*job_.run.ttl_seconds_after_finished);
  if (now_ >= at) {
    out_.actions.push_back(delete_job{job_.metadata.uid});
    return;
  }
  wake(at);
}

void pass::finish_finished_job() {
  clean_pod_policy policy = job_.run.clean_pods;
  // A job failed by a limit keeps stopping its running pods on later passes too (one that
  // started late, or a delete that had to be retried).
  const job_condition* failed = find_condition(status_, condition_type::failed);
  if (policy == clean_pod_policy::none && failed != nullptr && failed->status == "True" &&
      failed->reason != reason("Failed"))
    policy = clean_pod_policy::running;
  clean_up(policy);
  if (is_succeeded(status_))
    for (auto& [type, rs] : status_.replica_statuses) {
      // Replicas still running when the job succeeded count as succeeded (the peer's rule).
      rs.succeeded += rs.active;
      rs.active = 0;
    }
  if (!status_.completion_time)
    status_.completion_time = now_;
  honour_ttl();
}

void pass::suspend() {
  for (const k8s::pod* p : claimed_.pods)
    delete_pod(*p, true);
  for (const k8s::service* s : claimed_.services)
    delete_service(*s);
  std::string msg = job_ref() + " is suspended.";
  set_condition(status_, condition_type::running, false, reason("Suspended"), msg, now_);
  if (set_condition(status_, condition_type::suspended, true, reason("Suspended"), msg, now_))
    event("Normal", reason("Suspended"), msg);
  status_.start_time.reset();
  for (const auto& spec : job_.replicas)
    status_.replica_statuses[spec.type] = replica_status{0, 0, 0, selector_string(job_, spec.type)};
}

bool pass::check_backoff_limit() {
  if (!job_.run.backoff_limit)
    return false;
  const int limit = *job_.run.backoff_limit;
  // Kozmo counts recreated pods too (the peer only counts in-place container restarts).
  const int total = in_place_restarts_ + status_.recreated_pods + static_cast<int>(restarts_.size());
  const bool exceeded = limit == 0 ? total > 0 : total >= limit;
  if (!exceeded)
    return false;
  fail("BackoffLimitExceeded",
       job_ref() + " has failed because it has reached the specified backoff limit (" + std::to_string(total) +
           " restarts, backoffLimit " + std::to_string(limit) + ")",
       true);
  return true;
}

bool pass::check_deadline() {
  if (!job_.run.active_deadline_seconds || !status_.start_time)
    return false;
  time_point at = *status_.start_time + seconds(*job_.run.active_deadline_seconds);
  if (now_ < at) {
    wake(at);
    return false;
  }
  fail("DeadlineExceeded",
       job_ref() + " has failed because it was active longer than specified deadline (activeDeadlineSeconds " +
           std::to_string(*job_.run.active_deadline_seconds) + ")",
       true);
  return true;
}

bool pass::check_success() {
  if (!job_succeeded(job_, view_))
    return false;
  std::string msg = job_ref() + " successfully completed.";
  if (set_condition(status_, condition_type::succeeded, true, reason("Succeeded"), msg, now_))
    event("Normal", reason("Succeeded"), msg);
  clear_condition(status_, condition_type::stuck);
  status_.completion_time = now_;
  write_replica_statuses();
  for (auto& [type, rs] : status_.replica_statuses) {
    rs.succeeded += rs.active;
    rs.active = 0;
  }
  clean_up(job_.run.clean_pods);
  honour_ttl();
  return true;
}

bool pass::check_permanent_failure() {
  if (permanent_failures_.empty())
    return false;
  std::map<std::string, int> per_type;
  for (const auto& f : permanent_failures_)
    ++per_type[f.type];
  std::string msg = job_ref() + " has failed because";
  bool first = true;
  for (const auto& [type, n] : per_type) {
    msg += (first ? " " : " and ") + std::to_string(n) + " " + type + " replica(s) failed";
    first = false;
  }
  const restart_plan& f = permanent_failures_.front();
  const replica_spec* spec = job_.find(f.type);
  msg += ": pod " + f.pod->metadata.name;
  if (f.exit_code != unknown_exit_code)
    msg += " exited with code " + std::to_string(f.exit_code);
  msg += spec->restart == restart_policy::exit_code
             ? " (restartPolicy ExitCode retries only exit codes 128 and above)"
             : " (restartPolicy " + std::string(to_string(spec->restart)) + ")";
  fail("Failed", msg, false);
  return true;
}

bool pass::check_stuck() {
  std::optional<stuck_pod> worst;
  for (const auto& [key, p] : canonical_) {
    auto s = stuck_reason(*p);
    if (!s)
      continue;
    // Image and configuration errors never resolve by waiting; report them first.
    if (!worst || (worst->unschedulable && !s->unschedulable))
      worst = std::move(s);
  }
  if (!worst) {
    if (clear_condition(status_, condition_type::stuck))
      event("Normal", "PodsStarted", "every pod of " + job_ref() + " has started or is starting");
    return false;
  }
  std::optional<seconds> grace = opt_.image_error_grace;
  if (worst->unschedulable)
    grace = job_.run.scheduling.schedule_timeout_seconds ? seconds(*job_.run.scheduling.schedule_timeout_seconds)
                                                          : opt_.unschedulable_grace;
  std::string msg = worst->message;
  if (grace)
    msg += "; the job fails if this lasts " + std::to_string(grace->count()) + "s";
  if (set_condition(status_, condition_type::stuck, true, reason(worst->reason), msg, now_))
    event("Warning", worst->reason, msg);
  if (!grace)
    return false;
  const job_condition* c = find_condition(status_, condition_type::stuck);
  time_point since = c != nullptr && c->last_transition_time ? *c->last_transition_time : now_;
  if (now_ < since + *grace) {
    wake(since + *grace);
    return false;
  }
  fail(worst->reason,
       job_ref() + " has failed because its pods could not start for " + std::to_string(grace->count()) +
           "s: " + worst->message,
       true);
  return true;
}

void pass::fail(std::string_view why, const std::string& message, bool stop_pods) {
  write_replica_statuses();
  if (set_condition(status_, condition_type::failed, true, reason(why), message, now_))
    event("Warning", reason(why), message);
  status_.completion_time = now_;
  // A job failed by a limit stops its running pods whatever cleanPodPolicy says: they would
  // hold GPUs for nothing. Finished pods follow cleanPodPolicy.
  clean_pod_policy policy = job_.run.clean_pods;
  if (stop_pods && policy == clean_pod_policy::none)
    policy = clean_pod_policy::running;
  clean_up(policy);
  honour_ttl();
}

bool pass::may_create() {
  if (creates_ < opt_.max_creates_per_pass) {
    ++creates_;
    return true;
  }
  wake(now_);
  return false;
}

bool pass::report_refused_create() {
  const auto& refused = world_.create_refused;
  if (!refused) {
    clear_condition(status_, condition_type::replica_failure);
    return false;
  }
  std::string msg = "Error creating " + refused->object + ": " + refused->message + " (retried with back-off)";
  if (!set_condition(status_, condition_type::replica_failure, true, "FailedCreatePod", msg, now_))
    return false; // reported already: try again
  event("Warning", "FailedCreatePod", msg);
  return true;
}

void pass::converge() {
  const gang_plan gang = plan_gang(job_, opt_);
  for (const k8s::pod* p : surplus_)
    delete_pod(*p, false);
  if (!restarts_.empty()) {
    std::map<std::string, int> per_type;
    for (const auto& r : restarts_) {
      ++per_type[r.type];
      std::string why = r.exit_code == unknown_exit_code ? "failed" : "exited with code " + std::to_string(r.exit_code);
      event("Warning", "ExitedWithCode", "Pod " + r.pod->metadata.name + " " + why + "; it is recreated");
      delete_pod(*r.pod, false);
      ++status_.recreated_pods;
    }
    json::value annotations = json::object{{keys::recreated_pods, std::to_string(status_.recreated_pods)}};
    out_.actions.push_back(patch_job{json::object{{"metadata", json::object{{"annotations", std::move(annotations)}}}}});
    std::string msg = job_ref() + " is restarting because";
    bool first = true;
    for (const auto& [type, n] : per_type) {
      msg += (first ? " " : " and ") + std::to_string(n) + " " + type + " replica(s) failed";
      first = false;
    }
    msg += ".";
    if (set_condition(status_, condition_type::restarting, true, reason("Restarting"), msg, now_))
      event("Warning", reason("Restarting"), msg);
  }
  // The API server said why it refused a pod: that goes to the job's status first (the creates
  // would fail again before the status is written).
  if (report_refused_create()) {
    update_running();
    write_replica_statuses();
    return;
  }
  for (const auto& spec : job_.replicas) {
    for (int i = 0; i < spec.replicas; ++i) {
      if (canonical_.count({spec.type, i}) > 0)
        continue;
      std::string name = replica_object_name(job_.metadata.name, spec.type, i);
      if (claimed_.terminating_pods.count(name) > 0)
        continue; // its namesake is still going away; its deletion brings us back
      if (deleted_.count(name) > 0)
        continue; // deleted in this pass (a surplus namesake); created on the next one
      if (name_taken(name)) {
        event("Warning", "FailedCreatePod",
              "Cannot create pod " + name + ": a pod of that name belongs to another owner; delete or rename it");
        continue;
      }
      // An MPI launcher runs as its ServiceAccount: a pod naming one that does not exist yet is
      // refused by the API server's admission, so the launcher waits for it.
      if (spec.type == "Launcher" && job_.traits->kind == job_kind::mpi && mpi_launcher_account_is_ours(job_) &&
          world_.mpi_rbac.count("serviceaccounts/" + mpi_launcher_account(job_)) == 0)
        continue;
      if (!may_create())
        break;
      out_.actions.push_back(create_object{"pods", build_pod(job_, spec, i, gang, opt_)});
      event("Normal", "SuccessfulCreatePod", "Created pod: " + name);
    }
  }
  converge_services();
  converge_mpi_config();
  converge_mpi_rbac();
  update_running();
  write_replica_statuses();
}

void pass::converge_services() {
  if (job_.traits->kind == job_kind::mpi)
    return; // MPI workers are reached through the hostfile, not services
  std::set<std::string> wanted;
  for (const auto& spec : job_.replicas)
    for (int i = 0; i < spec.replicas; ++i)
      wanted.insert(replica_object_name(job_.metadata.name, spec.type, i));
  for (const k8s::service* s : claimed_.services)
    if (wanted.count(s->metadata.name) == 0)
      delete_service(*s);
  for (const auto& spec : job_.replicas) {
    for (int i = 0; i < spec.replicas; ++i) {
      std::string name = replica_object_name(job_.metadata.name, spec.type, i);
      if (owned_service(name) != nullptr)
        continue;
      if (!may_create())
        return;
      out_.actions.push_back(create_object{"services", build_service(job_, spec, i)});
      event("Normal", "SuccessfulCreateService", "Created service: " + name);
    }
  }
}

void pass::converge_mpi_config() {
  if (job_.traits->kind != job_kind::mpi)
    return;
  std::vector<std::string> running; // sorted by name, as the peer lists them (canonical_ is by index)
  for (const auto& [key, p] : canonical_)
    if (key.first == "Worker" && p->status.phase == "Running")
      running.push_back(p->metadata.name);
  std::sort(running.begin(), running.end());
  auto data = mpi_config_data(job_, running);
  if (!world_.mpi_config) {
    out_.actions.push_back(create_object{"configmaps", build_mpi_config_map(job_, running)});
    event("Normal", "SuccessfulCreateConfigMap", "Created config map: " + mpi_config_map_name(job_));
    return;
  }
  if (*world_.mpi_config == data)
    return;
  json::value patch = json::object{};
  for (const auto& [k, v] : data)
    patch["data"][k] = v;
  out_.actions.push_back(patch_object{"configmaps", mpi_config_map_name(job_), std::move(patch)});
}

// The launcher's ServiceAccount (unless its template names one), Role and RoleBinding, made
// once; the Role's rules follow the workers' names when they scale.
void pass::converge_mpi_rbac() {
  if (job_.traits->kind != job_kind::mpi)
    return;
  const std::string name = mpi_launcher_name(job_);
  const std::string rbac = "rbac.authorization.k8s.io";
  if (mpi_launcher_account_is_ours(job_) && world_.mpi_rbac.count("serviceaccounts/" + name) == 0) {
    out_.actions.push_back(create_object{"serviceaccounts", build_mpi_service_account(job_)});
    event("Normal", "SuccessfulCreateServiceAccount", "Created service account: " + name);
  }
  if (world_.mpi_rbac.count("roles/" + name) == 0) {
    out_.actions.push_back(create_object{"roles", build_mpi_role(job_), rbac});
    event("Normal", "SuccessfulCreateRole", "Created role: " + name);
  } else if (world_.mpi_role_rules && *world_.mpi_role_rules != mpi_role_rules(job_)) {
    out_.actions.push_back(patch_object{"roles", name, json::object{{"rules", mpi_role_rules(job_)}}, rbac});
  }
  if (world_.mpi_rbac.count("rolebindings/" + name) == 0) {
    out_.actions.push_back(create_object{"rolebindings", build_mpi_role_binding(job_), rbac});
    event("Normal", "SuccessfulCreateRoleBinding", "Created role binding: " + name);
  }
}

// Running means every replica has been scheduled and launched (the peer's own definition):
// a job with a pending or unschedulable pod is not Running yet.
void pass::update_running() {
  if (!restarts_.empty())
    return;
  int active = 0;
  for (const auto& spec : job_.replicas) {
    const replica_counts& c = view_.counts[spec.type];
    if (c.active + c.succeeded < spec.replicas)
      return;
    active += c.active;
  }
  if (active > 0)
    set_condition(status_, condition_type::running, true, reason("Running"), job_ref() + " is running.", now_);
}

void pass::write_replica_statuses() {
  status_.replica_statuses.clear();
  for (const auto& spec : job_.replicas) {
    const replica_counts& c = view_.counts[spec.type];
    status_.replica_statuses[spec.type] = replica_status{c.active, c.succeeded, c.failed, selector_string(job_, spec.type)};
  }
}

reconcile_result pass::finish() {
  job_status before = job_.status;
  status_.last_reconcile_time = before.last_reconcile_time;
  if (!(status_ == before)) {
    // Written only with another change: a pass that changes nothing writes nothing.
    status_.last_reconcile_time = now_;
    out_.status = status_patch(before, status_);
  }
  return std::move(out_);
}

reconcile_result pass::run() {
  if (!find_condition(status_, condition_type::created))
    set_condition(status_, condition_type::created, true, reason("Created"), job_ref() + " is created.", now_);
  claimed_ = claim_objects(job_, world_, out_.actions);

  if (is_finished(status_)) {
    finish_finished_job();
    return finish();
  }
  if (job_.run.suspend) {
    suspend();
    return finish();
  }
  if (has_true(status_, condition_type::suspended)) {
    std::string msg = job_ref() + " is resumed.";
    set_condition(status_, condition_type::suspended, false, reason("Resumed"), msg, now_);
    event("Normal", reason("Resumed"), msg);
    status_.start_time = now_;
  }
  if (!status_.start_time)
    status_.start_time = now_;

  observe_replicas();
  if (check_backoff_limit() || check_deadline() || check_success() || check_permanent_failure() || check_stuck())
    return finish();
  converge();
  return finish();
}

reconcile_result invalid_job(const observed& world, const error& err, time_point now) {
  reconcile_result out;
  const json::value* st = world.job.document.find("status");
  job_status before = st != nullptr ? status_from_json(*st) : job_status{};
  job_status status = before;
  const kind_traits* traits = traits_for(world.job.kind);
  std::string kind = traits != nullptr ? std::string(traits->name) : world.job.kind;
  std::string msg = kind + " " + world.job.metadata.namespace_ + "/" + world.job.metadata.name +
                    " is invalid: " + err.message;
  if (set_condition(status, condition_type::failed, true, kind + "InvalidSpec", msg, now)) {
    out.actions.push_back(record_event{"Warning", "InvalidSpec", msg});
    status.completion_time = now;
    status.last_reconcile_time = now;
    out.status = status_patch(before, status);
  }
  return out;
}

} // namespace

reconcile_result reconcile(const observed& world, const options& opt) {
  // Kubernetes times are whole seconds: comparing to a decoded status needs the same grain.
  const time_point now = std::chrono::floor<std::chrono::seconds>(world.now);
  if (world.job.metadata.deletion_timestamp) {
    reconcile_result out;
    out.skipped = "being deleted";
    return out;
  }
  if (std::string by = managed_by_of(world.job.document); !by.empty() && by != opt.managed_by) {
    reconcile_result out;
    out.skipped = "managed by " + by;
    return out;
  }
  auto job = decode_job(world.job, decode_limits{opt.max_replicas_for(world.job.kind)});
  if (!job)
    return invalid_job(world, job.err(), now);
  return pass(*job, world, opt, now).run();
}

} // namespace kozmo::training
