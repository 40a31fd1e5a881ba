// Watch registration, replay from the history, and delivery of committed changes.
#include "k8s/apiserver/store_impl.hpp"

namespace kozmo::apiserver {

void store::impl::deliver(const watcher& w, const change_event& ev) {
  if (w.filter.resource != ev.resource || ev.rv <= w.min_rv)
    return;
  if (!w.filter.ns.empty() && w.filter.ns != ev.ns)
    return;
  if (!w.filter.matches) {
    w.cb(ev);
    return;
  }
  bool now_in = w.filter.matches(*ev.object);
  bool was_in = ev.previous && w.filter.matches(*ev.previous);
  if (!now_in && !was_in)
    return;
  if (ev.type == event_type::deleted || (now_in && was_in) || (ev.type == event_type::added && now_in)) {
    w.cb(ev);
    return;
  }
  change_event adjusted = ev;
  adjusted.type = now_in ? event_type::added      // moved into the selection
                         : event_type::deleted;   // moved out of it
  w.cb(adjusted);
}

void store::impl::record(change_event ev) {
  for (auto& [id, w] : watchers)
    deliver(w, ev);
  history.push_back(std::move(ev));
  while (history.size() > opts.watch_history) {
    compacted = history.front().rv;
    history.pop_front();
  }
}

// ---- watch -------------------------------------------------------------------------------

expected<store::watch_id> store::watch(watch_filter filter, std::optional<std::uint64_t> from_rv, watch_callback cb,
                                       bool mark_initial_events_end) {
  std::lock_guard lock(impl_->mu);
  auto& p = *impl_;
  auto matches = [&](const json::value& obj) {
    if (!filter.ns.empty() && meta_string(obj, "namespace") != filter.ns)
      return false;
    return !filter.matches || filter.matches(obj);
  };
  impl::watcher w{filter, p.rv, cb};
  if (!from_rv) {
    auto r = p.data.find(filter.resource);
    if (r != p.data.end()) {
      for (const auto& [key, obj] : r->second) {
        if (!matches(*obj))
          continue;
        change_event ev;
        ev.type = event_type::added;
        ev.rv = std::stoull("0" + meta_string(*obj, "resourceVersion"));
        ev.resource = filter.resource;
        ev.ns = meta_string(*obj, "namespace");
        ev.object = obj;
        cb(ev);
      }
    }
    if (mark_initial_events_end) {
      change_event mark;
      mark.type = event_type::bookmark;
      mark.rv = p.rv;
      mark.resource = filter.resource;
      cb(mark);
    }
  } else {
    if (*from_rv < p.compacted)
      return error{"too old resource version: " + std::to_string(*from_rv) + " (" + std::to_string(p.compacted) + ")",
                   410, "Expired"};
    // Replay what the watcher missed through the same selection logic as live events.
    impl::watcher replay{filter, *from_rv, cb};
    for (const auto& ev : p.history)
      impl::deliver(replay, ev);
    w.min_rv = std::max(*from_rv, p.rv);
  }
  watch_id id = p.next_watch++;
  p.watchers.emplace(id, std::move(w));
  return id;
}

void store::unwatch(watch_id id) {
  std::lock_guard lock(impl_->mu);
  impl_->watchers.erase(id);
}

} // namespace kozmo::apiserver
