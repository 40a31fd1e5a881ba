// A small world for the TrainJob core: the job, its runtime, the snapshot and the pods, kept as the
// API server would after each plan (creates add, deletes remove, status and annotation patches
// merge), so tests read like what a user sees between two `kubectl get`s.
#pragma once

#include "actors/trainer/trainjob_reconcile.hpp"
#include "k8s/json/patch.hpp"
#include "k8s/json/yaml.hpp"
#include "k8s/model/codec.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <string>

namespace trainer_test {

using namespace kozmo;
using namespace std::chrono_literals;
using trainer::observed;

inline k8s::time_point t0() { return k8s::time_point{std::chrono::seconds{1'800'000'000}}; }

inline json::value yaml(const std::string& text) {
  auto v = json::parse_yaml(text);
  REQUIRE(v);
  return *v;
}

inline k8s::custom_object object_of(const json::value& doc) {
  auto o = k8s::from_json<k8s::custom_object>(doc);
  REQUIRE(o);
  o->document = doc;
  return *o;
}

inline const char* torch_runtime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels: {trainer.kubeflow.org/framework: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:runtime
                  command: [echo, runtime]
)";

// torch with a dataset initializer the trainer waits for (dependsOn Complete).
inline const char* init_runtime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: dataset-initializer
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer}}
          spec: {template: {spec: {containers: [{name: dataset-initializer, image: ghcr.io/kubeflow/trainer/dataset-initializer}]}}}
      - name: node
        dependsOn: [{name: dataset-initializer, status: Complete}]
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: torch}]}}}
)";

inline std::string trainjob(const std::string& spec_extra, const std::string& name = "mnist") {
  return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: " + name +
         "\n  namespace: team\n  uid: uid-" + name + "\n  resourceVersion: \"1\"\n  creationTimestamp: \"2027-01-15T08:00:00Z\"\n"
         "spec:\n  runtimeRef: {name: torch-distributed}\n" + spec_extra;
}

struct world {
  json::value job;
  std::optional<json::value> runtime;
  std::optional<json::value> snapshot;
  std::map<std::string, json::value> pods;
  std::vector<std::string> services;
  std::map<std::string, json::value> claims;
  std::map<std::string, json::value> config_maps; // other than the snapshot
  std::optional<json::value> secret;
  std::optional<trainer::ssh_key_pair> keys;
  std::vector<std::string> events; // "Reason: message"
  trainer::options opt;
  k8s::time_point now = t0() + 10s;
  trainer::pass_result last;
  std::optional<observed::create_refusal> refused;
  int rv = 1;

  explicit world(const std::string& job_yaml, const char* runtime_yaml = torch_runtime) : job(yaml(job_yaml)) {
    job["metadata"]["creationTimestamp"] = k8s::format_time(t0());
    if (runtime_yaml)
      runtime = yaml(runtime_yaml);
  }

  trainer::pass_result& step() {
    observed w;
    w.job = object_of(job);
    if (runtime)
      w.runtime = object_of(*runtime);
    if (snapshot)
      w.snapshot = object_of(*snapshot);
    for (const auto& [_, p] : pods) {
      auto pod = k8s::from_json<k8s::pod>(p);
      REQUIRE(pod);
      w.pods.push_back(*pod);
    }
    for (const auto& s : services) {
      k8s::service svc;
      svc.metadata.name = s;
      svc.metadata.namespace_ = "team";
      w.services.push_back(svc);
    }
    for (const auto& [n, _] : claims)
      w.claims.push_back(n);
    for (const auto& [n, _] : config_maps)
      w.config_maps.push_back(n);
    w.ssh_secret_exists = secret.has_value();
    w.ssh_keys = keys;
    w.now = now;
    w.create_refused = refused;
    last = trainer::reconcile(w, opt);
    apply(last.plan);
    return last;
  }

  void apply(const controller::plan& plan) {
    for (const auto& s : plan.steps) {
      if (const auto* c = std::get_if<controller::create_step>(&s)) {
        json::value obj = c->object;
        auto name = obj["metadata"].get_string("name");
        obj["metadata"]["uid"] = "uid-" + name;
        if (c->where.resource == "pods") {
          obj["status"] = json::object{{"phase", "Pending"}};
          pods[name] = obj;
        } else if (c->where.resource == "services") {
          services.push_back(name);
        } else if (c->where.resource == "configmaps" && name.find("-runtime-snapshot") != std::string::npos) {
          snapshot = obj;
        } else if (c->where.resource == "configmaps") {
          config_maps[name] = obj;
        } else if (c->where.resource == "secrets") {
          secret = obj;
        } else if (c->where.resource == "persistentvolumeclaims") {
          claims[name] = obj;
        }
      } else if (const auto* d = std::get_if<controller::delete_step>(&s)) {
        pods.erase(d->ref.name);
      } else if (const auto* p = std::get_if<controller::patch_step>(&s)) {
        job = json::apply_merge_patch(job, p->patch);
        job["metadata"]["resourceVersion"] = std::to_string(++rv);
      } else if (const auto* e = std::get_if<controller::event_step>(&s)) {
        events.push_back(e->note.reason + ": " + e->note.message);
      }
    }
  }

  void phase(const std::string& pod, const std::string& phase, bool ready = false) {
    REQUIRE(pods.count(pod));
    json::value status = json::object{{"phase", phase}};
    if (ready)
      status["conditions"] = json::array{json::object{{"type", "Ready"}, {"status", "True"}}};
    pods[pod]["status"] = status;
  }
  void all(const std::string& phase_name) {
    for (auto& [name, _] : pods)
      phase(name, phase_name, phase_name == "Running");
  }

  trainer::train_status status() const { return trainer::status_from_json(job.find("status")); }
  std::string condition(std::string_view type) const {
    auto s = status();
    const auto* c = trainer::find_condition(s, type);
    return c ? c->status + "/" + c->reason : std::string();
  }
  std::string message(std::string_view type) const {
    auto s = status();
    const auto* c = trainer::find_condition(s, type);
    return c ? c->message : std::string();
  }
  bool has_event(const std::string& reason) const {
    for (const auto& e : events)
      if (e.rfind(reason + ":", 0) == 0)
        return true;
    return false;
  }
  std::string env(const std::string& pod, const std::string& name) const {
    const auto& c = pods.at(pod).at_path({"spec", "containers"})->as_array().front();
    for (const auto& e : c.find("env")->as_array())
      if (e.get_string("name") == name)
        return e.get_string("value");
    return "<unset>";
  }
  const trainer::jobs_status* jobs(const std::string& rjob) const {
    static trainer::train_status s;
    s = status();
    for (const auto& j : s.jobs)
      if (j.name == rjob)
        return &j;
    return nullptr;
  }
};

} // namespace trainer_test
