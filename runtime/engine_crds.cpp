// Kozmo's CRDs on the embedded server, before the training and task controllers start, the
// built-in ClusterTrainingRuntimes after them, and `kozmo local`'s default StorageClass.
#include "runtime/engine_impl.hpp"

#include "actors/training/job_model.hpp"
#include "k8s/json/yaml.hpp"
#include "runtime/crds.hpp"

namespace kozmo {
namespace {

// Every `replicas` property of a schema gets `maximum` (a training CRD's replica specs).
void cap_replicas(json::value& schema, int maximum) {
  if (schema.is_array()) {
    for (auto& item : schema.as_array())
      cap_replicas(item, maximum);
    return;
  }
  if (!schema.is_object())
    return;
  if (json::value* props = schema.find("properties"); props && props->is_object())
    if (json::value* replicas = props->find("replicas"); replicas && replicas->get_string("type") == "integer")
      (*replicas)["maximum"] = maximum;
  for (auto& [key, child] : schema.as_object())
    cap_replicas(child, maximum);
}

// Creates one built-in runtime unless one of its name exists: a user's edit of a built-in runtime
// (kept in --data-dir) survives a restart, and a deleted one comes back.
status create_if_absent(apiserver::server& srv, const json::value& obj, std::string_view file) {
  const json::value* meta = obj.find("metadata");
  const std::string name = meta ? meta->get_string("name") : std::string();
  if (obj.get_string("kind") != "ClusterTrainingRuntime" || name.empty())
    return error::bad_request("runtimes: " + std::string(file) + ": not a named ClusterTrainingRuntime");
  const std::string collection = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes";
  auto existing = srv.handle({"GET", collection + "/" + name, {}, ""});
  if (existing.status == 200)
    return ok;
  if (existing.status != 404)
    return error::internal("runtimes: reading " + name + ": HTTP " + std::to_string(existing.status));
  auto created = srv.handle({"POST", collection + "?fieldManager=kozmo", {{"Content-Type", "application/json"}}, json::dump(obj)});
  if (created.status == 201 || created.status == 409) // 409: someone else was quicker, theirs stays
    return ok;
  return error::bad_request("runtimes: " + std::string(file) + ": HTTP " + std::to_string(created.status) + ": " + created.body);
}

} // namespace

status install_training_runtimes(apiserver::server& srv) {
  for (const auto& file : embedded_training_runtimes()) {
    auto docs = json::parse_yaml_documents(file.text);
    if (!docs)
      return error::bad_request("runtimes: " + std::string(file.name) + ": " + docs.err().message);
    for (const auto& obj : *docs)
      if (obj.is_object())
        if (auto st = create_if_absent(srv, obj, file.name); !st)
          return st;
  }
  return ok;
}

// kind's and minikube's `standard` class, served by the volume binder's local-path provisioner.
status install_default_storage_class(apiserver::server& srv) {
  const std::string path = "/apis/storage.k8s.io/v1/storageclasses";
  auto existing = srv.handle({"GET", path + "/standard", {}, ""});
  if (existing.status == 200)
    return ok; // a user's edit, or their own class of that name, stays
  if (existing.status != 404)
    return error::internal("storage class standard: HTTP " + std::to_string(existing.status));
  json::value sc = json::object{{"apiVersion", "storage.k8s.io/v1"}, {"kind", "StorageClass"}};
  sc["metadata"]["name"] = "standard";
  sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] = "true";
  sc["provisioner"] = "kozmo.io/local-path";
  sc["reclaimPolicy"] = "Delete";
  sc["volumeBindingMode"] = "Immediate";
  auto created = srv.handle({"POST", path + "?fieldManager=kozmo", {{"Content-Type", "application/json"}}, json::dump(sc)});
  if (created.status == 201 || created.status == 409)
    return ok;
  return error::internal("storage class standard: HTTP " + std::to_string(created.status) + ": " + created.body);
}

// Kozmo's CRDs embedded in the binary, applied to the embedded server (create or update), one
// YAML document at a time; the training kinds' replicas capped as the engine's options say.
status install_crds(apiserver::server& srv, const engine_options& opts) {
  for (const auto& file : embedded_crds()) {
    auto docs = json::parse_yaml_documents(file.text);
    if (!docs)
      return error::bad_request("CRDs: " + std::string(file.name) + ": " + docs.err().message);
    for (auto& obj : *docs) {
      if (!obj.is_object())
        continue;
      std::string kind;
      if (const json::value* names = obj.at_path({"spec", "names"}); names != nullptr)
        kind = names->get_string("kind");
      if (training::traits_for(kind) != nullptr) {
        auto it = opts.parts.training_max_replicas_by_kind.find(kind);
        if (json::value* versions = obj.at_path({"spec", "versions"}))
          cap_replicas(*versions, it == opts.parts.training_max_replicas_by_kind.end() ? opts.parts.training_max_replicas
                                                                                 : it->second);
      }
      if (auto applied = srv.apply_object(obj); !applied)
        return error::bad_request("CRDs: " + std::string(file.name) + ": " + applied.err().message);
    }
  }
  return ok;
}

} // namespace kozmo
