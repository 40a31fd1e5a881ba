// A tiny fake cluster for the task machinery: it runs rounds, applies what they decide the way
// the API server and the task actor would (status, finalizer, pod creates and deletes, the pool
// book for tokens, the template store), and lets a test move pods through their lives. Time
// moves only when the test says so.
#pragma once

#include "actors/tasks/machinery.hpp"
#include "actors/tasks/resource_pools.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/kozmo_keys.hpp"
#include "k8s/model/time.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace tasks_test {

using namespace kozmo;
using namespace kozmo::tasks;
using namespace std::chrono_literals;

inline json::value parse_json(std::string_view text) {
  auto v = json::parse(text);
  INFO(text);
  REQUIRE(v.has_value());
  return *v;
}

inline time_point t0() { return k8s::parse_time("2026-11-21T10:00:00Z").value(); }

inline k8s::custom_object make_task(const std::string& name, const std::string& spec_json,
                                    const std::string& labels_json = "{}") {
  auto doc = parse_json(R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution","metadata":{"name":")" + name +
                        R"(","namespace":"ml","uid":"uid-)" + name + R"(","resourceVersion":"1","labels":)" +
                        labels_json + R"(,"creationTimestamp":"2026-11-21T10:00:00Z"},"spec":)" + spec_json + "}");
  auto o = k8s::from_json<k8s::custom_object>(doc);
  REQUIRE(o.has_value());
  return *o;
}

// A container task's spec with extra spec fields ("retries": 2, ...).
inline std::string container_spec(const std::string& extra = "", const std::string& image = "busybox:1.36") {
  return R"({"type":"container","container":{"image":")" + image + R"(","command":["sh","-c","echo hi"]})" +
         (extra.empty() ? "" : "," + extra) + "}";
}

struct owned_object_entry {
  std::string resource;
  std::shared_ptr<k8s::custom_object> object;
};

struct fake_cluster {
  k8s::custom_object task;
  std::map<std::string, std::shared_ptr<k8s::pod>> pods; // by name
  std::map<std::string, owned_object_entry> jobs;         // training jobs, by name
  platform_config config;
  plugin_registry plugins = plugin_registry::with_builtins();
  std::shared_ptr<pool_book> pools = std::make_shared<pool_book>(); // shared by clusters that share a manager
  std::map<std::string, json::value> templates; // by name, in the task's namespace
  pool_grant grant;
  template_answer templ;
  // The cache store's entries by key, shared by clusters that share a store; what it last
  // answered this task.
  std::shared_ptr<std::map<std::string, cache_entry>> cache_book = std::make_shared<std::map<std::string, cache_entry>>();
  cache_answer cache;
  bool cache_down = false; // the store cannot be read
  time_point now = t0();
  int uids = 0;
  std::vector<task_event> events;   // every event recorded, in order
  std::vector<json::value> created; // every pod asked for
  std::optional<time_point> wake_at;
  task_round last;

  explicit fake_cluster(k8s::custom_object t) : task(std::move(t)) {}

  task_status status() const {
    const auto* s = task.document.find("status");
    return status_from_json(s ? *s : json::value());
  }
  std::string phase() const {
    auto s = status();
    return s.phase ? std::string(to_string(*s.phase)) : "";
  }
  bool has_finalizer() const {
    const auto& f = task.metadata.finalizers;
    return std::find(f.begin(), f.end(), keys::task_finalizer) != f.end();
  }

  // One round, applied. Rounds run again while a round asks the pool or the template store
  // something (the actor does the same: the answer comes back at once).
  task_round round() {
    for (int guard = 0; guard < 4; ++guard) {
      task_world w;
      w.task = &task;
      for (const auto& [_, p] : pods)
        w.pods.push_back(p.get());
      for (const auto& [_, j] : jobs)
        w.owned.push_back({j.resource, j.object.get()});
      w.config = &config;
      w.plugins = &plugins;
      w.grant = grant;
      w.templ = templ;
      w.cache = cache;
      w.now = now;
      last = run_round(w);
      bool asked = !last.need_template.empty() ||
                   (last.pool == pool_action::acquire && grant.what == pool_grant::state::unasked) ||
                   std::any_of(last.cache.begin(), last.cache.end(), [](const cache_ask& a) {
                     return a.op == cache_op::lookup || a.op == cache_op::reserve;
                   });
      apply(last);
      if (!asked)
        break;
    }
    return last;
  }

  // Rounds until nothing more is decided.
  void settle() {
    for (int i = 0; i < 8; ++i) {
      auto r = round();
      if (!r.status && r.creates.empty() && r.deletes.empty() && r.finalizer == finalizer_change::none)
        return;
    }
  }

  void apply(const task_round& r) {
    wake_at = r.wake_at;
    if (r.finalizer == finalizer_change::add)
      task.metadata.finalizers.push_back(keys::task_finalizer);
    if (r.finalizer == finalizer_change::remove)
      task.metadata.finalizers.erase(
          std::remove(task.metadata.finalizers.begin(), task.metadata.finalizers.end(), keys::task_finalizer),
          task.metadata.finalizers.end());
    if (r.status)
      task.document["status"] = status_to_json(*r.status);
    for (const auto& e : r.events)
      events.push_back(e);
    for (const auto& d : r.deletes)
      d.kind.is_pod() ? pods.erase(d.name) : jobs.erase(d.name);
    for (const auto& c : r.creates) {
      created.push_back(c.object);
      json::value doc = c.object;
      if (!c.kind.is_pod()) {
        doc["metadata"]["uid"] = "job-uid-" + std::to_string(++uids);
        doc["metadata"]["resourceVersion"] = "1";
        auto j = k8s::from_json<k8s::custom_object>(doc);
        REQUIRE(j.has_value());
        std::string name = j->metadata.name;
        jobs[name] = {c.kind.resource, std::make_shared<k8s::custom_object>(std::move(*j))};
        continue;
      }
      doc["metadata"]["uid"] = "pod-uid-" + std::to_string(++uids);
      doc["metadata"]["creationTimestamp"] = k8s::format_time(now);
      doc["status"] = json::object{{"phase", "Pending"}};
      auto p = k8s::from_json<k8s::pod>(doc);
      REQUIRE(p.has_value());
      std::string name = p->metadata.name;
      pods[name] = std::make_shared<k8s::pod>(std::move(*p));
    }
    if (r.pool == pool_action::acquire) {
      pool_request req{task.metadata.uid, task.metadata.namespace_, project_of(task.metadata),
                       task.metadata.namespace_ + "/" + task.metadata.name, 0};
      auto a = pools->allocate(r.pool_name, req);
      grant.what = a.what == allocation::granted ? pool_grant::state::granted : pool_grant::state::waiting;
      grant.no_pool = a.what == allocation::no_pool;
      grant.message = a.message;
    }
    if (r.pool == pool_action::release)
      pools->release(r.pool_name, task.metadata.uid);
    for (const auto& a : r.cache) {
      std::string key = a.key;
      if (key.empty()) {
        std::map<std::string, std::string> digests;
        for (const auto& [name, uri] : a.inputs)
          digests[name] = "uri:" + uri;
        key = cache_key(a.signature, digests);
      }
      if (cache_down) {
        cache = {true, key, std::nullopt, now, "connection refused"};
        continue;
      }
      std::optional<cache_entry> current;
      if (auto it = cache_book->find(key); it != cache_book->end())
        current = it->second;
      cache_op_args args{a.op, key, a.signature, a.owner, now, config.cache_reservation_heartbeat, a.overwrite, a.outputs};
      auto change = apply_cache_op(current, args);
      if (change.write)
        (*cache_book)[key] = *change.entry;
      if (a.op == cache_op::lookup || a.op == cache_op::reserve)
        cache = {true, key, change.entry, now, ""};
    }
    if (!r.need_template.empty()) {
      templ.name = r.need_template;
      auto it = templates.find(r.need_template);
      templ.found = it == templates.end() ? std::nullopt : std::optional<json::value>(it->second);
    }
  }

  k8s::pod& pod(const std::string& name) {
    auto it = pods.find(name);
    INFO("pod " << name);
    REQUIRE(it != pods.end());
    return *it->second;
  }
  k8s::pod& pod_of_attempt(int attempt) { return pod(task.metadata.name + "-" + std::to_string(attempt)); }

  k8s::custom_object& job(const std::string& name) {
    auto it = jobs.find(name);
    INFO("job " << name);
    REQUIRE(it != jobs.end());
    return *it->second.object;
  }
  // The training controller's part: sets the job's conditions ({"type":"Running","status":"True"}, ...).
  void set_job_conditions(const std::string& name, const std::string& conditions_json) {
    auto& j = job(name);
    j.document["status"] = json::object{{"conditions", parse_json(conditions_json)}};
  }
  // A pod the training controller created for the job: the replica template's labels, the job
  // as controlling owner, Pending.
  k8s::pod& add_job_pod(const std::string& job_name, const std::string& pod_name, const std::string& container) {
    auto& j = job(job_name);
    const auto& labels = j.metadata.labels;
    json::value doc = parse_json(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + pod_name +
                                 R"(","namespace":"ml","uid":"pod-uid-)" + std::to_string(++uids) +
                                 R"(","ownerReferences":[{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","name":")" +
                                 job_name + R"(","uid":")" + j.metadata.uid +
                                 R"(","controller":true}]},"spec":{"containers":[{"name":")" + container +
                                 R"(","image":"x"}]},"status":{"phase":"Pending"}})");
    doc["metadata"]["labels"] = json::object{{keys::task_name, labels.at(keys::task_name)},
                                             {keys::task_attempt, labels.at(keys::task_attempt)}};
    auto p = k8s::from_json<k8s::pod>(doc);
    REQUIRE(p.has_value());
    pods[pod_name] = std::make_shared<k8s::pod>(std::move(*p));
    return *pods[pod_name];
  }

  void advance(std::chrono::milliseconds d) { now += d; }
  void deleting() { task.metadata.deletion_timestamp = now; }
};

// Pod states, as a kubelet writes them.
inline k8s::condition cond(const std::string& type, const std::string& status, time_point at,
                           const std::string& reason = "", const std::string& message = "") {
  k8s::condition c;
  c.type = type;
  c.status = status;
  c.reason = reason;
  c.message = message;
  c.last_transition_time = at;
  return c;
}

inline k8s::container_status waiting(const std::string& name, const std::string& reason, const std::string& msg = "") {
  k8s::container_status s;
  s.name = name;
  s.state.waiting = k8s::container_state_waiting{reason, msg};
  return s;
}

inline k8s::container_status terminated(const std::string& name, int exit_code, const std::string& reason,
                                        const std::string& msg = "") {
  k8s::container_status s;
  s.name = name;
  k8s::container_state_terminated t;
  t.exit_code = exit_code;
  t.reason = reason;
  t.message = msg;
  s.state.terminated = t;
  return s;
}

inline k8s::container_status running_container(const std::string& name) {
  k8s::container_status s;
  s.name = name;
  s.state.running = k8s::container_state_running{};
  s.ready = true;
  return s;
}

// Scheduled, its container waiting for `reason` since `since`.
inline void set_waiting(k8s::pod& p, const std::string& container, const std::string& reason, time_point since,
                        const std::string& msg = "") {
  p.status.phase = "Pending";
  p.status.conditions = {cond("PodScheduled", "True", since), cond("Ready", "False", since, "ContainersNotReady")};
  p.status.container_statuses = {waiting(container, reason, msg)};
}

inline void set_running(k8s::pod& p, const std::string& container = "primary") {
  p.status.phase = "Running";
  p.status.conditions = {cond("PodScheduled", "True", t0()), cond("Ready", "True", t0())};
  p.status.container_statuses = {running_container(container)};
}

inline void set_finished(k8s::pod& p, int exit_code, const std::string& reason = "",
                         const std::string& container = "primary") {
  p.status.phase = exit_code == 0 && reason != "OOMKilled" ? "Succeeded" : "Failed";
  p.status.container_statuses = {terminated(container, exit_code, reason.empty() ? (exit_code ? "Error" : "Completed")
                                                                                  : reason)};
}

} // namespace tasks_test
