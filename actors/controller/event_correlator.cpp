#include "actors/controller/event_correlator.hpp"

#include "k8s/model/make_event.hpp"
#include "k8s/model/time.hpp"

#include <algorithm>
#include <cstdio>

namespace kozmo::controller {
namespace {

// Fields joined with a separator no name or reason contains.
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) {
    out += p;
    out += '\x1f';
  }
  return out;
}

// The core/v1 Event for `n`, named `name`, counted `count` times since `first`.
json::value event_json(const event_note& n, const std::string& name, std::chrono::system_clock::time_point first,
                       std::chrono::system_clock::time_point last, int count) {
  json::value ev = k8s::make_event(n.about, n.source, n.type, n.reason, n.message, last);
  ev["metadata"].as_object().erase("generateName");
  ev["metadata"]["name"] = name;
  ev["firstTimestamp"] = k8s::format_time(first);
  ev["count"] = count;
  return ev;
}

std::string spam_key(const event_note& n) {
  const auto& o = n.about;
  return join({n.source.component, n.source.host, o.kind, o.namespace_, o.name, o.uid, o.api_version});
}

} // namespace

event_note pod_note(const std::string& ns, const std::string& name, const std::string& uid,
                    const k8s::event_source& source, std::string type, std::string reason, std::string message) {
  return {k8s::pod_reference(ns, name, uid), source, std::move(type), std::move(reason), std::move(message)};
}

template <class V>
V* event_correlator::lru<V>::find(const std::string& key) {
  auto it = index.find(key);
  if (it == index.end())
    return nullptr;
  order.splice(order.begin(), order, it->second);
  return &it->second->second;
}

template <class V>
V& event_correlator::lru<V>::insert(const std::string& key, V value, std::size_t capacity) {
  if (V* v = find(key)) {
    *v = std::move(value);
    return *v;
  }
  order.emplace_front(key, std::move(value));
  index[key] = order.begin();
  while (order.size() > capacity) {
    index.erase(order.back().first);
    order.pop_back();
  }
  return order.front().second;
}

event_correlator::event_correlator(correlator_options opts) : opts_(opts) {}

bool event_correlator::take_token(const std::string& key, time_point now) {
  bucket* b = buckets_.find(key);
  if (!b)
    b = &buckets_.insert(key, bucket{static_cast<double>(opts_.spam_burst), now}, opts_.cache_size);
  auto elapsed = std::chrono::duration<double>(now - b->last).count();
  auto refill = std::chrono::duration<double>(opts_.spam_refill).count();
  if (elapsed > 0 && refill > 0)
    b->tokens = std::min(static_cast<double>(opts_.spam_burst), b->tokens + elapsed / refill);
  b->last = std::max(b->last, now);
  if (b->tokens < 1)
    return false;
  b->tokens -= 1;
  return true;
}

std::string event_correlator::unique_name(const std::string& object_name, time_point now) {
  // As Kubernetes' recorder names Events (<object>.<nanoseconds in hex>), plus a sequence so
  // that two Events in the same nanosecond differ.
  auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(nanos) + sequence_++);
  return object_name + suffix;
}

event_write event_correlator::observe(const event_note& note, time_point now) {
  event_write out;
  const std::string spam = spam_key(note);
  if (!take_token(spam, now))
    return out; // dropped
  // Aggregation of similar notes (same object, source, type and reason).
  const std::string aggregate = spam + join({note.type, note.reason});
  std::string message = note.message;
  std::string key = aggregate + message;
  similar* s = similar_.find(aggregate);
  if (!s || now - s->last > opts_.similar_window)
    s = &similar_.insert(aggregate, similar{{}, now}, opts_.cache_size);
  s->last = now;
  if (std::find(s->messages.begin(), s->messages.end(), message) == s->messages.end())
    s->messages.push_back(message);
  if (s->messages.size() >= opts_.max_similar) {
    s->messages.pop_front(); // the set never grows past the limit
    message = "(combined from similar events): " + message;
    key = aggregate;
  }
  // Dedup: count on the Event already written for this key.
  const std::string stamp = k8s::format_time(now);
  out.key = key;
  out.ns = note.about.namespace_.empty() ? std::string("default") : note.about.namespace_;
  if (recorded* r = events_.find(key)) {
    ++r->count;
    r->note.message = message;
    out.what = event_write::kind::update;
    out.name = r->name;
    out.body = json::object{{"count", r->count}, {"lastTimestamp", stamp}, {"message", message}};
    return out;
  }
  event_note written = note;
  written.message = message;
  out.name = unique_name(note.about.name, now);
  out.body = event_json(written, out.name, now, now, 1);
  events_.insert(key, recorded{std::move(written), out.name, now, 1}, opts_.cache_size);
  out.what = event_write::kind::create;
  return out;
}

event_write event_correlator::recreate(const std::string& key, time_point now) {
  event_write out;
  recorded* r = events_.find(key);
  if (!r)
    return out;
  out.what = event_write::kind::create;
  out.key = key;
  r->name = unique_name(r->note.about.name, now);
  out.name = r->name;
  out.ns = r->note.about.namespace_.empty() ? std::string("default") : r->note.about.namespace_;
  out.body = event_json(r->note, r->name, r->first, now, r->count);
  return out;
}

} // namespace kozmo::controller
