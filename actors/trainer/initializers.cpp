#include "actors/trainer/initializers.hpp"

#include "k8s/model/quantity.hpp"

#include <algorithm>

namespace kozmo::trainer {
namespace {

inline constexpr std::string_view automatic_claim = "initializer";
inline constexpr std::string_view workspace = "/workspace";

json::value claim_object(const train_job& job, json::value tmpl, bool retain) {
  json::value& meta = tmpl["metadata"];
  if (!meta.is_object())
    meta = json::object{};
  auto name = meta.get_string("name") + "-" + job.metadata.name;
  meta["name"] = name;
  meta["namespace"] = job.metadata.namespace_;
  json::value& labels = meta["labels"];
  if (!labels.is_object())
    labels = json::object{};
  labels[label::jobset_name] = job.metadata.name;
  if (!retain)
    meta["ownerReferences"] = json::array{owner_reference(job)};
  tmpl["apiVersion"] = "v1";
  tmpl["kind"] = "PersistentVolumeClaim";
  tmpl.as_object().erase("status");
  return tmpl;
}

bool mounts(const json::value& container, std::string_view volume) {
  const auto* list = container.find("volumeMounts");
  return list && list->is_array() &&
         std::any_of(list->as_array().begin(), list->as_array().end(),
                     [&](const auto& m) { return m.get_string("name") == volume; });
}

bool mounts_at(const json::value& container, std::string_view path) {
  const auto* list = container.find("volumeMounts");
  return list && list->is_array() &&
         std::any_of(list->as_array().begin(), list->as_array().end(),
                     [&](const auto& m) { return m.get_string("mountPath") == path; });
}

std::string env_value(const json::value& env, std::string_view name) {
  if (env.is_array())
    for (const auto& e : env.as_array())
      if (e.get_string("name") == name)
        return e.get_string("value");
  return {};
}

} // namespace

expected<bool> check_initializers(const train_job& job, const runtime_spec& rt) {
  for (auto [init, name] : {std::pair{&job.dataset, step::dataset}, std::pair{&job.model, step::model}}) {
    if (!init->has_value())
      continue;
    const std::string_view wanted = name; // (clang 14 cannot capture a structured binding)
    bool has = std::any_of(rt.jobs.begin(), rt.jobs.end(), [&](const auto& j) { return j.name == wanted; });
    if (!has)
      return error::invalid("runtime " + rt.name + " must have a " + std::string(name) +
                            " job when the TrainJob is configured with spec.initializer." +
                            (name == step::dataset ? "dataset" : "model"));
  }
  return true;
}

expected<claim_plan> plan_claims(const train_job& job, const runtime_spec& rt) {
  claim_plan out;
  const auto& policies = rt.volume_claim_policies;
  if (policies.is_array()) {
    for (const auto& policy : policies.as_array()) {
      bool retain = policy.at_path({"retentionPolicy", "whenDeleted"}) &&
                    json::scalar_text(*policy.at_path({"retentionPolicy", "whenDeleted"})) == "Retain";
      const auto* templates = policy.find("templates");
      if (templates == nullptr || !templates->is_array())
        continue;
      for (const auto& t : templates->as_array()) {
        auto name = t.at_path({"metadata", "name"}) ? json::scalar_text(*t.at_path({"metadata", "name"})) : "";
        if (name.empty())
          return error::invalid("runtime " + rt.name + ": a volumeClaimPolicies template has no metadata.name");
        if (out.names.size() >= 16)
          return error::invalid("runtime " + rt.name + ": more than 16 volumeClaimPolicies templates");
        out.names.push_back(name);
        out.claims.push_back(claim_object(job, t, retain));
      }
    }
  }
  bool wants = job.dataset.has_value() || job.model.has_value();
  bool declared = std::find(out.names.begin(), out.names.end(), automatic_claim) != out.names.end();
  if (wants && !declared) {
    std::string size = "10Gi";
    if (auto it = job.metadata.annotations.find("kozmo.io/initializer-storage"); it != job.metadata.annotations.end()) {
      auto q = k8s::quantity::parse(it->second);
      if (!q || q->milli_value() <= 0)
        return error::invalid("annotation kozmo.io/initializer-storage is \"" + it->second.substr(0, 64) +
                              "\": write the claim's size as a quantity such as 10Gi");
      size = it->second;
    }
    json::value tmpl = json::object{
        {"metadata", json::object{{"name", std::string(automatic_claim)}}},
        {"spec", json::object{{"accessModes", json::array{"ReadWriteOnce"}},
                              {"resources", json::object{{"requests", json::object{{"storage", size}}}}}}}};
    out.names.emplace_back(automatic_claim);
    out.claims.push_back(claim_object(job, std::move(tmpl), false));
    out.automatic = true;
  }
  return out;
}

void attach_claims(json::value& pod_spec, const claim_plan& claims, const std::string& job, const std::string& main) {
  json::value& containers = pod_spec["containers"];
  if (!containers.is_array())
    return;
  if (claims.automatic) {
    for (auto& c : containers.as_array()) {
      if (main.empty() || !c.is_object() || c.get_string("name") != main || mounts(c, automatic_claim) ||
          mounts_at(c, workspace))
        continue;
      json::value& list = c["volumeMounts"];
      if (!list.is_array())
        list = json::array{};
      list.as_array().push_back(json::object{{"name", std::string(automatic_claim)}, {"mountPath", std::string(workspace)}});
    }
  }
  json::value& volumes = pod_spec["volumes"];
  if (!volumes.is_array())
    volumes = json::array{};
  for (const auto& name : claims.names) {
    bool used = false;
    for (const char* key : {"containers", "initContainers"})
      if (const auto* list = pod_spec.find(key); list && list->is_array())
        for (const auto& c : list->as_array())
          used = used || mounts(c, name);
    bool declared = std::any_of(volumes.as_array().begin(), volumes.as_array().end(),
                                [&](const auto& v) { return v.get_string("name") == name; });
    if (used && !declared)
      volumes.as_array().push_back(
          json::object{{"name", name}, {"persistentVolumeClaim", json::object{{"claimName", name + "-" + job}}}});
  }
  if (volumes.as_array().empty())
    pod_spec.as_object().erase("volumes");
}

expected<bool> native_initializer(json::value& container, const initializer& init, std::string_view step_name) {
  const auto* command = container.find("command");
  if ((command && command->is_array() && !command->as_array().empty()) || init.storage_uri.empty())
    return false; // the runtime's own program fetches
  const auto& uri = init.storage_uri;
  const bool fetchable = uri.rfind("file://", 0) == 0 || uri.rfind("s3://", 0) == 0;
  if (!fetchable) {
    auto scheme = uri.substr(0, std::min(uri.find("://"), std::size_t{32}));
    return error{"spec.initializer." + std::string(step_name == step::dataset ? "dataset" : "model") + ".storageUri " +
                     uri.substr(0, 200) + ": kozmo local fetches file:// and s3:// itself; " + scheme +
                     ":// needs the peer's initializer image and a network that reaches its host, which this "
                     "cluster's pods do not have: copy the data to a file:// path or an S3 bucket",
                 422, "InitializerNotSupported"};
  }
  const std::string what = step_name == step::dataset ? "dataset" : "model";
  json::array cmd{"kozmo", "copilot", "download", "--input-path", std::string(workspace), "--input", what + "=" + uri};
  if (auto endpoint = env_value(init.env, "ENDPOINT"); !endpoint.empty()) {
    cmd.push_back("--s3-endpoint");
    cmd.push_back(endpoint);
  }
  if (auto region = env_value(init.env, "REGION"); !region.empty()) {
    cmd.push_back("--s3-region");
    cmd.push_back(region);
  }
  container["command"] = std::move(cmd);
  container.as_object().erase("args");
  return true;
}

} // namespace kozmo::trainer
