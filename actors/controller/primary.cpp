#include "actors/controller/primary.hpp"

#include "actors/controller/object_view.hpp"
#include "k8s/model/codec.hpp"

namespace kozmo::controller {

k8s::object_reference reference_to(const k8s::custom_object& obj) {
  return {obj.kind, obj.metadata.namespace_, obj.metadata.name, obj.metadata.uid, obj.api_version, "", ""};
}

std::shared_ptr<const k8s::custom_object> with_kind(std::shared_ptr<const k8s::custom_object> obj,
                                                    const std::string& kind, const std::string& api_version) {
  if (!obj->kind.empty() && !obj->api_version.empty())
    return obj;
  auto copy = std::make_shared<k8s::custom_object>(*obj);
  copy->kind = kind;
  copy->api_version = api_version;
  return copy;
}

std::shared_ptr<const k8s::custom_object> newer_copy(const k8s::custom_object& current, json::value&& doc) {
  auto obj = k8s::custom_object_from(std::move(doc));
  if (!obj || obj->metadata.uid != current.metadata.uid ||
      older_than(obj->metadata.resource_version, current.metadata.resource_version))
    return nullptr;
  return with_kind(std::make_shared<const k8s::custom_object>(std::move(*obj)), current.kind, current.api_version);
}

} // namespace kozmo::controller
