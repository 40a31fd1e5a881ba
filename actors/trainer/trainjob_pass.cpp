#include "actors/trainer/trainjob_pass.hpp"

#include <algorithm>

namespace kozmo::trainer::detail {

bool ours(const k8s::pod& p, const std::string& uid) {
  const auto* ref = p.metadata.controller_ref();
  return ref != nullptr && ref->uid == uid && !p.metadata.deletion_timestamp;
}

bool pod_ready(const k8s::pod& p) {
  if (p.status.phase != "Running")
    return false;
  return std::any_of(p.status.conditions.begin(), p.status.conditions.end(),
                     [](const auto& c) { return c.type == "Ready" && c.status == "True"; });
}

std::map<std::string, int> read_restarts(const k8s::object_meta& m) {
  std::map<std::string, int> out;
  auto it = m.annotations.find(std::string(restarts_annotation));
  if (it == m.annotations.end())
    return out;
  auto doc = json::parse(it->second);
  if (!doc || !doc->is_object())
    return out;
  for (const auto& [k, v] : doc->as_object())
    if (v.is_int())
      out[k] = static_cast<int>(std::clamp<std::int64_t>(v.as_int(), 0, 1 << 20));
  return out;
}

// The runtime this pass runs: the snapshot's, else the live one (taking the snapshot).
std::optional<json::value> runtime_document(pass& p, const train_job& job) {
  if (p.w.snapshot) {
    if (const auto* data = p.w.snapshot->document.at_path({"data", "runtime.json"}); data && data->is_string())
      if (auto doc = json::parse(data->as_string()); doc && doc->is_object())
        return *doc;
    p.fail("TrainingRuntimeSnapshotInvalid", "ConfigMap " + snapshot_name(p.name) + " does not hold a runtime: delete it "
                                             "and the TrainJob");
    return std::nullopt;
  }
  if (job.runtime.api_group != group ||
      (job.runtime.kind != kind_runtime && job.runtime.kind != kind_cluster_runtime)) {
    p.fail("TrainingRuntimeNotSupported", "unsupported runtime: " + job.runtime.kind + "." + job.runtime.api_group);
    return std::nullopt;
  }
  if (!p.w.runtime) {
    auto created = p.w.job.metadata.creation_timestamp.value_or(p.w.now);
    if (p.w.now < created + p.opt.runtime_grace) {
      p.out.wake_at = created + p.opt.runtime_grace;
      return std::nullopt;
    }
    p.fail("TrainingRuntimeNotFound", job.runtime.kind + " \"" + job.runtime.name + "\" not found" +
                                          (job.runtime.kind == kind_runtime ? " in namespace " + p.ns : std::string()) +
                                          ": create it, or name one of `kubectl get clustertrainingruntimes`");
    return std::nullopt;
  }
  auto doc = snapshot_document(p.w.runtime->document);
  json::value cm = json::object{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata",
       json::object{{"name", snapshot_name(p.name)},
                    {"namespace", p.ns},
                    {"labels", json::object{{std::string(label::jobset_name), p.name}}},
                    {"ownerReferences", json::array{owner_reference(p.name, p.uid)}}}},
      {"data", json::object{{"runtime.json", json::dump(doc)}}}};
  p.create("configmaps", std::move(cm));
  return doc;
}

} // namespace kozmo::trainer::detail
