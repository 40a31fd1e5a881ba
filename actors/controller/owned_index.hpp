// Which primary object (a job, a task) an owned object (pod, service, config map) belongs to:
// by the uid of its controller reference, and by a label whose value names the primary in the
// same namespace (pods a controller created before it crashed and whose owner reference was
// removed still route by label). Pure; the supervisor keeps one index per owned kind.
#pragma once

#include "k8s/model/object_meta.hpp"
#include "messages/watch_types.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace kozmo::controller {

// Where an object may belong: "uid:<controller uid>" and "name:<ns>/<label value>".
inline std::vector<std::string> route_keys(const k8s::object_meta& m, const std::string& route_label) {
  std::vector<std::string> out;
  if (const auto* ref = m.controller_ref())
    out.push_back("uid:" + ref->uid);
  if (!route_label.empty())
    if (auto it = m.labels.find(route_label); it != m.labels.end())
      out.push_back("name:" + m.namespace_ + "/" + it->second);
  return out;
}

// The route keys a primary object answers to.
inline std::vector<std::string> primary_routes(const k8s::object_meta& m) {
  return {"uid:" + m.uid, "name:" + m.namespace_ + "/" + m.name};
}

// The objects of one kind that may belong to some primary, shared from the watch cache and
// indexed by route key, so a child spawned late (or after a restart) gets what exists.
template <class T>
struct owned_index {
  std::string route_label;
  std::unordered_map<std::string, std::shared_ptr<const T>> items; // "ns/name"
  std::unordered_map<std::string, std::vector<std::string>> by_route;

  static std::string key(const T& o) { return o.metadata.namespace_ + "/" + o.metadata.name; }

  void remove(const std::string& k) {
    auto it = items.find(k);
    if (it == items.end())
      return;
    for (const auto& r : route_keys(it->second->metadata, route_label)) {
      auto& v = by_route[r];
      v.erase(std::remove(v.begin(), v.end(), k), v.end());
      if (v.empty())
        by_route.erase(r);
    }
    items.erase(it);
  }

  void apply(watch::event_type type, const std::shared_ptr<const T>& obj) {
    auto k = key(*obj);
    remove(k);
    if (type == watch::event_type::deleted)
      return;
    auto routes = route_keys(obj->metadata, route_label);
    if (routes.empty())
      return; // belongs to no primary
    for (const auto& r : routes)
      by_route[r].push_back(k);
    items.emplace(k, obj);
  }

  std::vector<std::shared_ptr<const T>> select(const std::vector<std::string>& routes) const {
    std::vector<std::shared_ptr<const T>> out;
    for (const auto& r : routes) {
      auto it = by_route.find(r);
      if (it == by_route.end())
        continue;
      for (const auto& k : it->second) {
        auto obj = items.at(k);
        if (std::find(out.begin(), out.end(), obj) == out.end())
          out.push_back(std::move(obj));
      }
    }
    return out;
  }
};

} // namespace kozmo::controller
