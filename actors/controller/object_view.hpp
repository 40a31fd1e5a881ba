// The objects a controller actor keeps by name (its pods, its services), fed by the watch and
// by the executor's answers. Pure.
//
// resourceVersions are opaque, but both servers Kozmo talks to (etcd-backed and embedded)
// hand out increasing integers: the answer to our own write can overtake the watch, and the
// watch's older echo must not roll the view back.
#pragma once

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kozmo::controller {

inline bool older_than(const std::string& incoming, const std::string& held) {
  std::uint64_t a = 0, b = 0;
  auto ra = std::from_chars(incoming.data(), incoming.data() + incoming.size(), a);
  auto rb = std::from_chars(held.data(), held.data() + held.size(), b);
  if (ra.ec != std::errc{} || rb.ec != std::errc{} || incoming.empty() || held.empty())
    return false;
  return a < b;
}

template <class T>
struct object_view {
  std::map<std::string, std::shared_ptr<const T>> items; // by name

  void upsert(std::shared_ptr<const T> obj) {
    auto& slot = items[obj->metadata.name];
    if (slot && older_than(obj->metadata.resource_version, slot->metadata.resource_version))
      return;
    slot = std::move(obj);
  }
  // What the server holds under a name now (a 409's re-read): ours (controlled by `owner_uid`)
  // replaces what the view has; another's means that ours is gone.
  void take_reread(std::shared_ptr<const T> obj, const std::string& owner_uid) {
    const auto* ref = obj->metadata.controller_ref();
    if (ref != nullptr && ref->uid == owner_uid)
      upsert(std::move(obj));
    else
      items.erase(obj->metadata.name);
  }
  // Only the object with this uid: a namesake created since stays.
  void erase(const T& obj) {
    auto it = items.find(obj.metadata.name);
    if (it != items.end() && it->second->metadata.uid == obj.metadata.uid)
      items.erase(it);
  }
  // A watch event of an owned object in namespace `ns`: applied, and a deleted object leaves the
  // child's expectations (`deleting`: uids it deleted and may still see). Returns whether it was
  // for this view (then a pass is due).
  bool take_event(bool deleted, const std::shared_ptr<const T>& obj, const std::string& ns,
                  std::vector<std::string>& deleting) {
    if (!obj || obj->metadata.namespace_ != ns)
      return false;
    if (deleted) {
      erase(*obj);
      deleting.erase(std::remove(deleting.begin(), deleting.end(), obj->metadata.uid), deleting.end());
    } else {
      upsert(obj);
    }
    return true;
  }
};

} // namespace kozmo::controller
