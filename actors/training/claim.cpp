#include "actors/training/claim.hpp"

#include "actors/training/pod_builder.hpp"

namespace kozmo::training {
namespace {

enum class verdict { own, adopt, release, ignore };

bool selector_matches(const training_job& job, const k8s::object_meta& meta) {
  for (const auto& [k, v] : job_labels(job)) {
    auto it = meta.labels.find(k);
    if (it == meta.labels.end() || it->second != v)
      return false;
  }
  return true;
}

verdict judge(const training_job& job, const k8s::object_meta& meta) {
  if (meta.namespace_ != job.metadata.namespace_)
    return verdict::ignore;
  const bool matches = selector_matches(job, meta);
  if (const k8s::owner_reference* ref = meta.controller_ref()) {
    if (ref->uid != job.metadata.uid)
      return verdict::ignore;
    return matches ? verdict::own : verdict::release;
  }
  // An orphan being deleted is not worth adopting.
  if (!matches || meta.deletion_timestamp)
    return verdict::ignore;
  return verdict::adopt;
}

json::value adopt_patch(const training_job& job, const k8s::object_meta& meta) {
  json::value patch = json::object{};
  patch["metadata"]["ownerReferences"] = json::array{controller_ref(job)};
  patch["metadata"]["uid"] = meta.uid; // the patch applies only to this very object
  return patch;
}

json::value release_patch(const training_job& job, const k8s::object_meta& meta) {
  json::value drop = json::object{};
  drop["$patch"] = "delete";
  drop["uid"] = job.metadata.uid;
  json::value patch = json::object{};
  patch["metadata"]["ownerReferences"] = json::array{drop};
  patch["metadata"]["uid"] = meta.uid;
  return patch;
}

template <class Object>
bool claim_one(const training_job& job, const Object& obj, const char* resource, std::vector<action>& actions) {
  switch (judge(job, obj.metadata)) {
  case verdict::own: return true;
  case verdict::adopt:
    actions.push_back(adopt_object{resource, obj.metadata.name, adopt_patch(job, obj.metadata), job.metadata.uid});
    return true;
  case verdict::release:
    if (!obj.metadata.deletion_timestamp)
      actions.push_back(release_object{resource, obj.metadata.name, release_patch(job, obj.metadata)});
    return false;
  case verdict::ignore: return false;
  }
  return false;
}

} // namespace

claimed_objects claim_objects(const training_job& job, const observed& world, std::vector<action>& actions) {
  claimed_objects out;
  for (const auto& pod : world.pods) {
    if (!claim_one(job, pod, "pods", actions))
      continue;
    if (pod.metadata.deletion_timestamp)
      out.terminating_pods.insert(pod.metadata.name);
    else
      out.pods.push_back(&pod);
  }
  for (const auto& svc : world.services)
    if (claim_one(job, svc, "services", actions) && !svc.metadata.deletion_timestamp)
      out.services.push_back(&svc);
  return out;
}

} // namespace kozmo::training
