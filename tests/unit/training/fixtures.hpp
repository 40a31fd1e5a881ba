// A tiny fake cluster for the training reconcile core: it runs reconcile, applies the actions
// the way an API server would (create, delete, adopt, release, status), and lets a test move
// pods through their phases. Time only moves when the test says so.
#pragma once

#include "actors/training/reconcile.hpp"
#include "k8s/json/patch.hpp"
#include "k8s/model/kozmo_keys.hpp"
#include "k8s/model/codec.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>

namespace training_test {

using namespace kozmo;
using namespace kozmo::training;
using std::chrono::seconds;

inline json::value parse_json(std::string_view text) {
  auto v = json::parse(text);
  REQUIRE(v.has_value());
  return *v;
}

inline time_point t0() { return k8s::parse_time("2026-11-21T10:00:00Z").value(); }

inline k8s::custom_object make_object(const json::value& doc) {
  auto o = k8s::from_json<k8s::custom_object>(doc);
  REQUIRE(o.has_value());
  return *o;
}

// A replica spec's JSON: `gpus` > 0 adds an nvidia.com/gpu limit.
inline std::string replica(const std::string& container, int replicas, const std::string& restart = "", int gpus = 0,
                           const std::string& extra_spec = "") {
  std::string s = R"({"replicas":)" + std::to_string(replicas);
  if (!restart.empty())
    s += R"(,"restartPolicy":")" + restart + "\"";
  s += R"(,"template":{"metadata":{"annotations":{"kozmo.io/sim-duration":"5s"}},"spec":{)" + extra_spec +
       R"("containers":[{"name":")" + container + R"(","image":"example/train:1")";
  if (gpus > 0)
    s += R"(,"resources":{"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) + "\"}}";
  s += "}]}}}";
  return s;
}

inline json::value job_doc(const std::string& kind, const std::string& specs_key, const std::string& specs,
                           const std::string& extra = "") {
  std::string api = kind == "Caffe2Job" ? "kubeflow.org/v1alpha1" : "kubeflow.org/v1";
  std::string text = R"({"apiVersion":")" + api + R"(","kind":")" + kind +
                     R"(","metadata":{"name":"job","namespace":"ns","uid":"job-uid"},"spec":{)" + extra +
                     (extra.empty() ? "" : ",") + "\"" + specs_key + "\":" + specs + "}}";
  return parse_json(text);
}

struct cluster {
  k8s::custom_object job;
  std::vector<k8s::pod> pods;
  std::vector<k8s::service> services;
  std::optional<std::map<std::string, std::string>> mpi_config;
  std::set<std::string> mpi_rbac; // "roles/<name>", ... as created
  std::optional<json::value> mpi_role_rules;
  std::map<std::string, json::value> rbac_objects; // as created, by "roles/<name>"
  time_point now = t0();
  options opt;
  int next_uid = 1;
  bool job_deleted = false;
  std::optional<observed::create_refusal> refused; // as the actor remembers a refused create
  reconcile_result last;

  explicit cluster(const json::value& doc) : job(make_object(doc)) {}

  reconcile_result step() {
    observed w{job, pods, services, mpi_config, now, mpi_rbac, mpi_role_rules, refused};
    last = reconcile(w, opt);
    for (const auto& a : last.actions)
      std::visit([this](const auto& x) { apply(x); }, a);
    if (last.status) {
      // As the actor writes it: a merge patch {"status": ...} on the status subresource.
      json::value patch = json::object{};
      patch["status"] = *last.status;
      job.document = json::apply_merge_patch(job.document, patch);
    }
    return last;
  }
  // Runs passes until nothing more happens (at most 10).
  void settle() {
    for (int i = 0; i < 10; ++i)
      if (step().actions.empty())
        return;
  }

  void apply(const create_object& c) {
    json::value obj = c.object;
    obj["metadata"]["uid"] = "uid-" + std::to_string(next_uid++);
    if (c.resource == "pods") {
      auto p = k8s::from_json<k8s::pod>(obj);
      REQUIRE(p.has_value());
      REQUIRE(find_pod(p->metadata.name) == nullptr);
      p->status.phase = "Pending";
      pods.push_back(*p);
    } else if (c.resource == "services") {
      auto s = k8s::from_json<k8s::service>(obj);
      REQUIRE(s.has_value());
      services.push_back(*s);
    } else if (c.resource == "serviceaccounts" || c.resource == "roles" || c.resource == "rolebindings") {
      REQUIRE(mpi_rbac.insert(c.resource + "/" + obj["metadata"].get_string("name")).second);
      if (c.resource == "roles")
        mpi_role_rules = obj["rules"];
      rbac_objects[c.resource + "/" + obj["metadata"].get_string("name")] = obj;
    } else if (c.resource == "configmaps") {
      std::map<std::string, std::string> data;
      for (const auto& [k, v] : obj["data"].as_object())
        data[k] = v.as_string();
      mpi_config = data;
    }
  }
  void apply(const delete_object& d) {
    if (d.resource == "pods")
      std::erase_if(pods, [&](const k8s::pod& p) { return p.metadata.name == d.name && p.metadata.uid == d.uid; });
    else
      std::erase_if(services, [&](const k8s::service& s) { return s.metadata.name == d.name; });
  }
  void apply(const adopt_object& a) {
    k8s::owner_reference ref{std::string(job.api_version), job.kind, job.metadata.name, job.metadata.uid, true, true};
    if (a.resource == "pods")
      find_pod(a.name)->metadata.owner_references.push_back(ref);
    else
      for (auto& s : services)
        if (s.metadata.name == a.name)
          s.metadata.owner_references.push_back(ref);
  }
  void apply(const release_object& r) {
    auto drop = [&](k8s::object_meta& m) {
      std::erase_if(m.owner_references, [&](const auto& o) { return o.uid == job.metadata.uid; });
    };
    if (r.resource == "pods")
      drop(find_pod(r.name)->metadata);
    else
      for (auto& s : services)
        if (s.metadata.name == r.name)
          drop(s.metadata);
  }
  void apply(const patch_object& p) {
    if (p.resource == "roles") {
      mpi_role_rules = *p.patch.find("rules");
      return;
    }
    for (const auto& [k, v] : p.patch.find("data")->as_object())
      (*mpi_config)[k] = v.as_string();
  }
  void apply(const patch_job& p) { job = make_object(json::apply_merge_patch(job.document, p.patch)); }
  void apply(const delete_job&) { job_deleted = true; }
  void apply(const record_event&) {}

  k8s::pod* find_pod(const std::string& name) {
    for (auto& p : pods)
      if (p.metadata.name == name)
        return &p;
    return nullptr;
  }
  k8s::pod& pod(const std::string& name) {
    k8s::pod* p = find_pod(name);
    REQUIRE(p != nullptr);
    return *p;
  }
  void set_phase(const std::string& name, const std::string& phase) { pod(name).status.phase = phase; }
  void run_all() {
    for (auto& p : pods)
      p.status.phase = "Running";
  }
  // The default container terminated with `code`; phase Failed (or Succeeded for 0).
  void exit_with(const std::string& name, const std::string& container, int code) {
    k8s::pod& p = pod(name);
    p.status.phase = code == 0 ? "Succeeded" : "Failed";
    k8s::container_status cs;
    cs.name = container;
    cs.state.terminated = k8s::container_state_terminated{};
    cs.state.terminated->exit_code = code;
    p.status.container_statuses = {cs};
  }
  void wait_on(const std::string& name, const std::string& container, const std::string& reason) {
    k8s::pod& p = pod(name);
    p.status.phase = "Pending";
    k8s::container_status cs;
    cs.name = container;
    cs.state.waiting = k8s::container_state_waiting{reason, "Back-off pulling image \"example/nope:1\""};
    p.status.container_statuses = {cs};
  }

  job_status status() const {
    const json::value* st = job.document.find("status");
    return st != nullptr ? status_from_json(*st) : job_status{};
  }
  bool condition(std::string_view type) const { return has_true(status(), type); }
  // The job's kozmo.io/recreated-pods annotation ("" when absent).
  std::string recreated_pods() const {
    const json::value* a = job.document.at_path({"metadata", "annotations"});
    return a != nullptr ? a->get_string(keys::recreated_pods) : "";
  }
  std::string reason_of(std::string_view type) const {
    auto s = status();
    const job_condition* c = find_condition(s, type);
    return c != nullptr ? c->reason : "";
  }
  std::vector<std::string> pod_names() const {
    std::vector<std::string> names;
    for (const auto& p : pods)
      names.push_back(p.metadata.name);
    std::sort(names.begin(), names.end());
    return names;
  }
  template <class A>
  int count_actions(const std::string& resource = "") const {
    int n = 0;
    for (const auto& a : last.actions)
      if (const A* x = std::get_if<A>(&a)) {
        if constexpr (requires { x->resource; }) {
          if (!resource.empty() && x->resource != resource)
            continue;
        }
        ++n;
      }
    return n;
  }
  bool has_event(const std::string& reason) const {
    for (const auto& a : last.actions)
      if (const auto* e = std::get_if<record_event>(&a); e != nullptr && e->reason == reason)
        return true;
    return false;
  }
  std::string event_message(const std::string& reason) const {
    for (const auto& a : last.actions)
      if (const auto* e = std::get_if<record_event>(&a); e != nullptr && e->reason == reason)
        return e->message;
    return "";
  }
};

inline std::string env_of(const k8s::pod& p, const std::string& name) {
  for (const auto& c : p.spec.containers)
    for (const auto& e : c.env)
      if (e.name == name)
        return e.value;
  return "<unset>";
}

} // namespace training_test
