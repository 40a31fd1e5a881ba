#include "actors/tasks/machinery.hpp"

#include "k8s/model/kozmo_keys.hpp"
#include "k8s/model/time.hpp"

#include <algorithm>
#include <charconv>
#include <tuple>

namespace kozmo::tasks {
namespace {

bool has_finalizer(const k8s::object_meta& meta) {
  return std::find(meta.finalizers.begin(), meta.finalizers.end(), keys::task_finalizer) != meta.finalizers.end();
}

std::optional<int> attempt_of(const k8s::object_meta& meta) {
  auto it = meta.labels.find(keys::task_attempt);
  if (it == meta.labels.end())
    return std::nullopt;
  int n = -1;
  auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), n);
  if (ec != std::errc{} || ptr != it->second.data() + it->second.size())
    return std::nullopt;
  return n;
}

std::string attempt_prefix(int attempt) { return "attempt " + std::to_string(attempt) + ": "; }

// A pod the task controls itself (not one of its training job's).
bool task_controls(const k8s::pod& pod, const k8s::object_meta& task) {
  const auto* ref = pod.metadata.controller_ref();
  return ref && ref->uid == task.uid;
}

object_kind kind_of(const owned_object& o) {
  auto slash = o.object->api_version.find('/');
  if (slash == std::string::npos)
    return {"", o.object->api_version, o.resource};
  return {o.object->api_version.substr(0, slash), o.object->api_version.substr(slash + 1), o.resource};
}

class round_builder {
public:
  explicit round_builder(const task_world& w) : w_(w) {
    if (w.status) {
      cur_ = *w.status;
    } else {
      static const json::value none;
      const json::value* st = w.task->document.find("status");
      cur_ = status_from_json(st ? *st : none);
    }
    next_ = cur_;
  }

  task_round run() {
    const auto& meta = w_.task->metadata;
    if (meta.deletion_timestamp) {
      abort_deleted();
      return finish();
    }
    if (cur_.phase && is_terminal(*cur_.phase) && !restart_for_overwrite()) {
      settle_ended();
      return finish();
    }
    if (!next_.start_time)
      next_.start_time = w_.now;
    auto spec = decode_task(*w_.task, w_.plugins->types());
    if (!spec) {
      record(task_phase::failed, "InvalidSpec", spec.err().message + "; fix the TaskExecution and create it again",
             "Warning", "Failed");
      end();
      return finish();
    }
    if (consult_cache(*spec)) {
      hold_finalizer();
      handle(*spec);
    }
    return finish();
  }

private:
  const task_world& w_;
  task_round out_;
  task_status cur_, next_;

  const platform_config& cfg() const { return *w_.config; }

  void hold_finalizer() {
    if (!has_finalizer(w_.task->metadata))
      out_.finalizer = finalizer_change::add;
  }

  // --- rule 9: the output cache ---------------------------------------------------------------

  std::string owner() const { return reservation_owner(w_.task->metadata.uid); }
  std::string task_key() const { return w_.task->metadata.namespace_ + "/" + w_.task->metadata.name; }

  bool overwrite_annotated() const {
    auto it = w_.task->metadata.annotations.find(keys::cache_overwrite);
    return it != w_.task->metadata.annotations.end() && it->second == "true";
  }

  void ask_cache(cache_op op, const task_spec& spec, bool overwrite) {
    if (w_.cache_asking)
      return; // asked already: the answer brings the next round
    cache_ask a;
    a.op = op;
    a.key = next_.cache.key;
    if (a.key.empty()) {
      a.signature = cache_signature(spec);
      a.inputs = spec.inputs;
    }
    a.owner = owner();
    a.overwrite = overwrite;
    out_.cache.push_back(std::move(a));
  }

  // A Succeeded task annotated kozmo.io/cache-overwrite=true (a value not honoured yet) runs
  // again; the annotation removed forgets the honoured value, so setting it again recomputes
  // again. Returns whether the task runs again in this round.
  bool restart_for_overwrite() {
    bool annotated = overwrite_annotated();
    if (!annotated) {
      next_.cache.overwrite.clear();
      return false;
    }
    if (cur_.phase != task_phase::succeeded || cur_.cache.overwrite == "true" || !w_.task->document.find("spec"))
      return false;
    auto spec = decode_task(*w_.task, w_.plugins->types());
    if (!spec || !spec->cache)
      return false;
    next_.cache = {};
    next_.cache.overwrite = "true";
    next_.outputs.clear();
    next_.completion_time.reset();
    if (next_.current_attempt())
      ++next_.attempt;
    next_.first_attempt = next_.attempt;
    next_.system_failures = 0;
    next_.plugin_state = json::value();
    record(task_phase::queued, "CacheOverwrite",
           std::string(keys::cache_overwrite) + "=true: the task runs again and its outputs replace the stored ones",
           "Normal", "CacheOverwrite");
    return true;
  }

  // Returns whether the task goes on to run an attempt in this round.
  bool consult_cache(const task_spec& spec) {
    if (!spec.cache)
      return true;
    auto& c = next_.cache;
    const cache_answer& a = w_.cache;
    auto heartbeat = cfg().cache_reservation_heartbeat;
    bool serial = spec.cache->serializable;
    if (c.result == "Miss" || c.result == "Overwrite") {
      if (c.reserved)
        keep_reservation(spec, heartbeat);
      return true;
    }
    bool overwrite = overwrite_annotated();
    if (overwrite)
      c.overwrite = "true"; // honoured from the start: a later round must not restart the run
    bool stale = a.known && serial && w_.now >= a.at + heartbeat;
    if (!a.known || stale || (!c.key.empty() && a.key != c.key)) {
      ask_cache(serial ? cache_op::reserve : cache_op::lookup, spec, overwrite);
      if (serial)
        hold_finalizer(); // a reservation is about to be held: a delete must give it back
      // A new task's status waits for the answer (the store answers from its index, or after
      // digesting the inputs): a hit then costs one status write, not a start time and then
      // the hit, one after the other.
      if (!cur_.start_time)
        next_.start_time.reset();
      return false;
    }
    c.key = a.key;
    std::string computing = overwrite ? "Overwrite" : "Miss";
    if (!a.error.empty()) {
      c.result = computing;
      out_.events.push_back({"Warning", "CacheUnavailable",
                             "the output cache could not be read (" + a.error + "): the task runs without it"});
      return true;
    }
    if (a.entry && a.entry->outputs && !overwrite) {
      cache_hit(spec, *a.entry->outputs);
      return false;
    }
    if (!serial) {
      c.result = computing;
      return true;
    }
    if (holds_reservation(a.entry, owner(), w_.now)) {
      c.result = computing;
      c.reserved = true;
      wake(a.at + heartbeat);
      return true;
    }
    // Another task holds the reservation: wait for its outputs, or for it to give up.
    const auto& r = *a.entry->reservation;
    std::string holder = r.owner.rfind("taskexecution/", 0) == 0 ? "the task with uid " + r.owner.substr(14) : r.owner;
    record(task_phase::waiting_for_cache, "WaitingForCache",
           holder + " is computing the same outputs (cache key " + c.key.substr(0, 12) +
               "); this task reuses them when they are stored, or computes them if that task fails (its "
               "reservation expires at " + k8s::format_time(r.expires_at) + " unless renewed)",
           "Normal", "WaitingForCache");
    wake(std::min(a.at + heartbeat, r.expires_at));
    return false;
  }

  // The holder extends its reservation every heartbeat (after a restart at once).
  void keep_reservation(const task_spec& spec, std::chrono::milliseconds heartbeat) {
    const cache_answer& a = w_.cache;
    if (!a.known || a.key != next_.cache.key || w_.now >= a.at + heartbeat) {
      ask_cache(cache_op::reserve, spec, true);
      return;
    }
    if (a.error.empty() && !holds_reservation(a.entry, owner(), w_.now)) {
      // Taken over while this controller could not renew it: the task computes all the same and
      // stores what it computes; the other holder's outputs, if first, are overwritten by equal ones.
      next_.cache.reserved = false;
      return;
    }
    wake(a.at + heartbeat);
  }

  void cache_hit(const task_spec& spec, const cache_outputs& o) {
    next_.cache.result = "Hit";
    next_.cache.source = o.task;
    next_.outputs = o.location;
    std::string msg = "the outputs of " + (o.task.empty() ? std::string("an identical task") : o.task) +
                      " are reused (cache key " + next_.cache.key.substr(0, 12) + ", version \"" +
                      spec.cache->version + "\")" + (o.location.empty() ? "" : ": " + o.location);
    record(task_phase::succeeded, "CacheHit", msg, "Normal", "CacheHit", msg);
    end();
  }

  void cache_store(const task_spec& spec) {
    auto& c = next_.cache;
    if (!spec.cache || c.key.empty() || c.result == "Hit")
      return;
    cache_ask a;
    a.op = cache_op::store;
    a.key = c.key;
    a.owner = owner();
    a.outputs = {spec.output_prefix, task_key(), w_.task->metadata.uid, w_.now};
    out_.cache.push_back(std::move(a));
    c.result = "Populated";
    c.reserved = false;
  }

  void cache_release() {
    auto& c = next_.cache;
    if (!c.reserved || c.key.empty())
      return;
    cache_ask a;
    a.op = cache_op::release;
    a.key = c.key;
    a.owner = owner();
    out_.cache.push_back(std::move(a));
    c.reserved = false;
  }

  void wake(time_point at) {
    if (!out_.wake_at || at < *out_.wake_at)
      out_.wake_at = at;
  }

  // Rule 6: a new (phase, version) is recorded, with an Event and a history entry. The message
  // is kept current even when nothing new is recorded.
  void record(task_phase phase, const std::string& reason, const std::string& message, const char* event_type,
              const std::string& event_reason, std::string event_message = {}) {
    next_.message = message;
    auto s = stamp(next_.last_recorded(), phase, reason, next_.attempt);
    if (!s.changed)
      return;
    next_.phase = phase;
    next_.phase_version = s.version;
    next_.reason = reason;
    next_.last_transition_time = w_.now;
    next_.history.push_back({phase, s.version, next_.attempt, reason, w_.now});
    if (next_.history.size() > history_limit)
      next_.history.erase(next_.history.begin(), next_.history.end() - history_limit);
    if (event_message.empty())
      event_message = attempt_prefix(next_.attempt) + (reason.empty() ? "" : reason + ": ") + message;
    out_.events.push_back({event_type, event_reason, std::move(event_message)});
  }

  // The task ended (succeeded, failed or aborted): give everything back (rules 3, 7, 8).
  void end() {
    if (!next_.completion_time)
      next_.completion_time = w_.now;
    cache_release(); // a failure (a success has stored and released already)
    settle_ended();
  }

  void release_pool() {
    if (next_.pool.empty())
      return;
    if (next_.pool_held || !cur_.phase || !is_terminal(*cur_.phase)) {
      out_.pool = pool_action::release;
      out_.pool_name = next_.pool;
    }
    next_.pool_held = false;
  }

  void settle_ended() {
    release_pool();
    int last = next_.attempt;
    for (const auto* p : w_.pods) {
      if (p->metadata.deletion_timestamp || !task_controls(*p, w_.task->metadata))
        continue;
      auto a = attempt_of(p->metadata);
      bool earlier = a && *a < last;
      if (earlier || !pod_finished(*p))
        out_.deletes.push_back({p->metadata.name, p->metadata.uid});
    }
    for (const auto& o : w_.owned) {
      auto a = attempt_of(o.object->metadata);
      if (!o.object->metadata.deletion_timestamp && a && *a < last)
        out_.deletes.push_back({o.object->metadata.name, o.object->metadata.uid, kind_of(o)});
    }
    if (has_finalizer(w_.task->metadata))
      out_.finalizer = finalizer_change::remove;
    else if (out_.finalizer == finalizer_change::add)
      out_.finalizer = finalizer_change::none; // ended in its first rounds: nothing to hold
  }

  void abort_deleted() {
    if (!has_finalizer(w_.task->metadata))
      return; // nothing of ours is left to give back
    for (const auto* p : w_.pods)
      if (!p->metadata.deletion_timestamp && task_controls(*p, w_.task->metadata))
        out_.deletes.push_back({p->metadata.name, p->metadata.uid});
    for (const auto& o : w_.owned)
      if (!o.object->metadata.deletion_timestamp)
        out_.deletes.push_back({o.object->metadata.name, o.object->metadata.uid, kind_of(o)});
    if (!cur_.phase || !is_terminal(*cur_.phase)) {
      record(task_phase::aborted, "Deleted",
             std::string("the TaskExecution was deleted: its ") + (w_.owned.empty() ? "pods are" : "jobs are") +
                 " deleted and its pool token is given back",
             "Normal", "Aborted");
      next_.completion_time = w_.now;
      if (auto* rec = next_.current_attempt(); rec && !rec->end_time) {
        rec->phase = "Aborted";
        rec->end_time = w_.now;
      }
    }
    release_pool();
    cache_release();
    out_.finalizer = finalizer_change::remove;
  }

  // Rule 3: the pool token. Returns false while the task must wait for it.
  bool hold_token(const task_spec& spec) {
    if (spec.resource_pool.empty() || next_.pool_held)
      return true;
    next_.pool = spec.resource_pool;
    switch (w_.grant.what) {
    case pool_grant::state::unasked:
      out_.pool = pool_action::acquire;
      out_.pool_name = spec.resource_pool;
      return false;
    case pool_grant::state::waiting:
      if (!next_.waiting_since)
        next_.waiting_since = w_.now;
      record(task_phase::waiting_for_resources, w_.grant.no_pool ? "ResourcePoolNotFound" : "ResourceExhausted",
             w_.grant.message, "Normal", "WaitingForResources");
      return false;
    case pool_grant::state::granted:
      next_.pool_held = true;
      return true;
    }
    return false;
  }

  attempt_record& attempt_record_for(const task_spec& spec) {
    if (auto* rec = next_.current_attempt())
      return *rec;
    attempt_record rec;
    rec.attempt = next_.attempt;
    rec.phase = "Queued";
    rec.interruptible = attempt_interruptible(spec, cfg(), next_.system_failures);
    rec.start_time = w_.now;
    next_.attempts.push_back(std::move(rec));
    return next_.attempts.back();
  }

  // Plugin state is scoped to an attempt: a new attempt starts with none.
  json::value state_for_attempt() const {
    const json::value& s = next_.plugin_state;
    if (s.is_object() && s.get_int("attempt", -1) == next_.attempt)
      return s.find("data") ? *s.find("data") : json::value();
    return json::value();
  }

  void handle(const task_spec& spec) {
    if (!hold_token(spec))
      return;
    const plugin* plug = w_.plugins->find(spec.type);
    attempt_record& rec = attempt_record_for(spec);
    int attempt = next_.attempt;

    task_context ctx;
    ctx.task = w_.task;
    ctx.spec = &spec;
    ctx.config = w_.config;
    ctx.attempt = attempt;
    ctx.interruptible = rec.interruptible;
    ctx.pods = w_.pods;
    ctx.owned = w_.owned;
    ctx.plugin_state = state_for_attempt();
    ctx.now = w_.now;
    std::string tname = spec.pod_template_name.empty() ? cfg().default_pod_template_name : spec.pod_template_name;
    ctx.template_name = tname;
    if (!tname.empty() && w_.templ.name == tname) {
      ctx.template_known = true;
      if (w_.templ.found)
        ctx.pod_template = &*w_.templ.found;
    }

    plugin_answer a = plug->handle(ctx);
    if (a.needs_template) {
      out_.need_template = tname;
      return;
    }
    for (auto& c : a.creates)
      out_.creates.push_back(std::move(c));
    for (auto& d : a.deletes)
      out_.deletes.push_back(std::move(d));
    next_.plugin_state = json::object{{"version", 1}, {"attempt", attempt}, {"data", std::move(a.plugin_state)}};
    if (!a.object.empty())
      rec.pod = a.object;
    if (!a.job.empty())
      rec.job = a.job;

    phase_info info = std::move(a.info);
    // Rule 5.
    if (spec.timeout && rec.start_time && !info.is_terminal()) {
      auto deadline = *rec.start_time + *spec.timeout;
      if (w_.now >= deadline)
        info = retryable_failure(error_kind::user, "Timeout",
                                 "the attempt ran longer than spec.timeout (" + k8s::format_go_duration(*spec.timeout) +
                                     "); its pod is deleted",
                                 true);
      else
        wake(deadline);
    }
    if (info.wake_at)
      wake(*info.wake_at);

    if (!info.is_terminal()) {
      auto phase = shown_as(info.phase);
      rec.phase = std::string(to_string(phase));
      rec.reason = info.reason;
      rec.message = info.message;
      record(phase, info.reason, info.message, "Normal", std::string(to_string(phase)));
      return;
    }
    attempt_ended(spec, *plug, ctx, rec, info);
  }

  void attempt_ended(const task_spec& spec, const plugin& plug, const task_context& ctx, attempt_record& rec,
                     const phase_info& info) {
    bool succeeded = info.phase == plugin_phase::success;
    rec.end_time = w_.now;
    rec.phase = succeeded ? "Succeeded" : "Failed";
    rec.reason = info.reason;
    rec.message = info.message;
    if (info.cleanup)
      for (auto& d : plug.abort(ctx))
        out_.deletes.push_back(std::move(d));
    for (auto& d : plug.finalize(ctx))
      out_.deletes.push_back(std::move(d));
    int attempt = next_.attempt;
    if (succeeded) {
      next_.outputs = spec.output_prefix;
      cache_store(spec);
      record(task_phase::succeeded, "", info.message.empty() ? "the task succeeded" : info.message, "Normal",
             "Succeeded");
      end();
      return;
    }
    if (info.phase == plugin_phase::permanent_failure) {
      record(task_phase::failed, info.reason, info.message, "Warning", "Failed");
      end();
      return;
    }
    // Rule 4: a retryable failure, counted as the user's or the system's.
    bool system = info.kind == error_kind::system;
    int user_failures = attempt - next_.first_attempt - next_.system_failures + (system ? 0 : 1);
    if (system)
      ++next_.system_failures;
    std::string why_not;
    if (system && next_.system_failures > cfg().max_system_failures)
      why_not = "; it was the platform's failure number " + std::to_string(next_.system_failures) +
                " and the platform allows " + std::to_string(cfg().max_system_failures) + " (max-system-failures)";
    if (!system && user_failures > spec.retries)
      why_not = spec.retries == 0 ? "; no retries (spec.retries is 0)"
                                  : "; all " + std::to_string(spec.retries) + " retries are used (spec.retries)";
    if (!why_not.empty()) {
      record(task_phase::failed, info.reason, info.message + why_not, "Warning", "Failed");
      end();
      return;
    }
    std::string failed = "attempt " + std::to_string(attempt) + " failed: " + info.reason + ": " + info.message;
    std::string left = system ? std::to_string(cfg().max_system_failures - next_.system_failures) + " platform failure(s)"
                              : std::to_string(spec.retries - user_failures) + " retry(ies)";
    out_.events.push_back({"Warning", "AttemptFailed",
                           failed + "; retrying as attempt " + std::to_string(attempt + 1) + " (" + left + " left)"});
    // The next attempt starts in this round: its number is in the status this round writes,
    // before the pod it asks for (the plan writes the status first), so it never starts twice
    // and nothing waits for another event to start it.
    next_.attempt = attempt + 1;
    next_.plugin_state = json::value();
    handle(spec);
  }

  task_round finish() {
    // The plugin and the end-of-task rules may both ask to delete an object: once is enough.
    auto& d = out_.deletes;
    auto key = [](const delete_object& x) { return std::tie(x.kind.resource, x.name); };
    std::sort(d.begin(), d.end(), [&](const delete_object& a, const delete_object& b) { return key(a) < key(b); });
    d.erase(std::unique(d.begin(), d.end(), [&](const delete_object& a, const delete_object& b) { return key(a) == key(b); }),
            d.end());
    if (next_ != cur_)
      out_.status = std::move(next_);
    return std::move(out_);
  }
};

} // namespace

std::vector<const k8s::pod*> pods_of_attempt(const std::vector<const k8s::pod*>& pods, int attempt) {
  std::vector<const k8s::pod*> out;
  for (const auto* p : pods)
    if (auto a = attempt_of(p->metadata); a && *a == attempt)
      out.push_back(p);
  return out;
}

bool attempt_interruptible(const task_spec& spec, const platform_config& config, int system_failures) {
  if (!spec.interruptible)
    return false;
  // The peer's rule, counted in system failures (a spot node taken away is one): a positive
  // threshold N leaves interruptible nodes after N of them; a negative -N keeps the last N
  // attempts the platform allows (max-system-failures + 1) off them.
  int threshold = config.interruptible_failure_threshold;
  int max_attempts = config.max_system_failures + 1;
  int above = threshold > 0 ? threshold : max_attempts + threshold;
  return system_failures < above;
}

task_round run_round(const task_world& world) { return round_builder(world).run(); }

} // namespace kozmo::tasks
