// The watch actor's pure core: an indexed cache of one resource kind, like an informer's store.
//
// The actor feeds it the result of a LIST (`replace`) and then each watch event (`apply`);
// both return the events subscribers must see so that they converge on the server's state:
//  - `apply` drops an event that changes nothing (same object at the same resourceVersion,
//    a DELETED for an object the cache does not hold), so a re-watch that replays history
//    delivers nothing twice;
//  - `replace` (after a 410 Gone relist, or the first list) emits synthetic ADDED for new
//    objects, MODIFIED for objects whose resourceVersion changed and DELETED for objects
//    that vanished while the watch was down.
//
// T is any object type; `Traits` supplies `static std::string key(const T&)` ("ns/name"),
// `static std::string resource_version(const T&)` and
// `static void index_values(const T&, index_kind, std::vector<std::string>& out)`.
// No CAF here: the actor is a thin shell around this class.
#pragma once

#include "messages/watch_types.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kozmo::watch {

template <class T>
struct event {
  event_type type = event_type::added;
  std::shared_ptr<const T> object;    // the new state (the last state for DELETED)
  std::shared_ptr<const T> previous;  // the state before, for MODIFIED and DELETED
};

template <class T, class Traits>
class cache {
public:
  using ptr = std::shared_ptr<const T>;

  // One watch event. Returns what subscribers should see, or nothing.
  std::optional<event<T>> apply(event_type type, ptr obj) {
    std::string key = Traits::key(*obj);
    std::string rv = Traits::resource_version(*obj);
    note_resource_version(rv);
    auto it = items_.find(key);
    if (type == event_type::deleted) {
      if (it == items_.end())
        return std::nullopt;
      event<T> ev{event_type::deleted, obj, it->second};
      unindex(key, *it->second);
      items_.erase(it);
      return ev;
    }
    if (it == items_.end()) {
      index(key, *obj);
      items_.emplace(key, obj);
      return event<T>{event_type::added, std::move(obj), nullptr};
    }
    if (Traits::resource_version(*it->second) == rv)
      return std::nullopt; // replayed: the cache already has this version
    event<T> ev{event_type::modified, obj, it->second};
    reindex(key, *it->second, *obj);
    it->second = std::move(obj);
    return ev;
  }

  // A full list at `list_rv`. Returns the synthetic events that bring subscribers from the
  // cache's old content to the list's.
  std::vector<event<T>> replace(std::vector<ptr> items, const std::string& list_rv) {
    std::vector<event<T>> out;
    std::unordered_map<std::string, ptr> fresh;
    fresh.reserve(items.size());
    for (auto& o : items)
      fresh.emplace(Traits::key(*o), std::move(o));
    for (auto& [key, old] : items_)
      if (!fresh.count(key))
        out.push_back({event_type::deleted, old, old});
    for (auto& [key, obj] : fresh) {
      auto it = items_.find(key);
      if (it == items_.end())
        out.push_back({event_type::added, obj, nullptr});
      else if (Traits::resource_version(*it->second) != Traits::resource_version(*obj))
        out.push_back({event_type::modified, obj, it->second});
    }
    items_ = std::move(fresh);
    by_index_.clear();
    for (auto& [key, obj] : items_)
      index(key, *obj);
    resource_version_ = list_rv;
    return out;
  }

  // The newest resourceVersion seen (list, event or bookmark): where a re-watch resumes.
  const std::string& resource_version() const { return resource_version_; }
  void note_resource_version(const std::string& rv) {
    if (!rv.empty())
      resource_version_ = rv;
  }

  ptr get(const std::string& key) const {
    auto it = items_.find(key);
    return it == items_.end() ? nullptr : it->second;
  }
  std::size_t size() const { return items_.size(); }

  // Every object, or those whose index `kind` has `value` (for `label`, value is "k=v").
  std::vector<ptr> select(index_kind kind, const std::string& value = {}) const {
    std::vector<ptr> out;
    if (kind == index_kind::all) {
      out.reserve(items_.size());
      for (const auto& [_, o] : items_)
        out.push_back(o);
      return out;
    }
    auto it = by_index_.find({kind, value});
    if (it == by_index_.end())
      return out;
    for (const auto& key : it->second)
      if (auto o = get(key))
        out.push_back(std::move(o));
    return out;
  }

  // Whether `obj` is selected by (kind, value).
  static bool matches(const T& obj, index_kind kind, const std::string& value) {
    if (kind == index_kind::all)
      return true;
    std::vector<std::string> values;
    Traits::index_values(obj, kind, values);
    return std::find(values.begin(), values.end(), value) != values.end();
  }

private:
  static constexpr index_kind indexed[] = {index_kind::owner_uid, index_kind::label, index_kind::node_name,
                                           index_kind::scheduler_name, index_kind::name_space};

  void index(const std::string& key, const T& obj) {
    std::vector<std::string> values;
    for (auto kind : indexed) {
      values.clear();
      Traits::index_values(obj, kind, values);
      for (auto& v : values)
        by_index_[{kind, std::move(v)}].push_back(key);
    }
  }

  // A modified object: only the index entries whose value changed are touched. A status
  // update leaves the namespace, labels and owner alone, and removing a key from the
  // namespace's list (every pod of the namespace) is the costly part.
  void reindex(const std::string& key, const T& before, const T& after) {
    std::vector<std::string> was, now;
    for (auto kind : indexed) {
      was.clear();
      now.clear();
      Traits::index_values(before, kind, was);
      Traits::index_values(after, kind, now);
      for (auto& v : was)
        if (std::find(now.begin(), now.end(), v) == now.end())
          drop_from_index(kind, v, key);
      for (auto& v : now)
        if (std::find(was.begin(), was.end(), v) == was.end())
          by_index_[{kind, std::move(v)}].push_back(key);
    }
  }

  void unindex(const std::string& key, const T& obj) {
    std::vector<std::string> values;
    for (auto kind : indexed) {
      values.clear();
      Traits::index_values(obj, kind, values);
      for (auto& v : values)
        drop_from_index(kind, v, key);
    }
  }

  void drop_from_index(index_kind kind, const std::string& value, const std::string& key) {
    auto it = by_index_.find({kind, value});
    if (it == by_index_.end())
      return;
    auto& keys = it->second;
    keys.erase(std::remove(keys.begin(), keys.end(), key), keys.end());
    if (keys.empty())
      by_index_.erase(it);
  }

  std::unordered_map<std::string, ptr> items_;
  std::map<std::pair<index_kind, std::string>, std::vector<std::string>> by_index_;
  std::string resource_version_;
};

} // namespace kozmo::watch
