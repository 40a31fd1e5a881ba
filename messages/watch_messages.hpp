// Messages between watch actors and their subscribers.
//
//   subscriber ──(subscribe_atom, index_kind, value)──▶ watch actor<T>
//   watch actor<T> ──object_event<T>──▶ subscriber    (synthetic ADDED for what it already
//                                                      holds, then every change that matches)
//   anyone ──(synced_atom)──▶ watch actor<T> ──▶ replies once the first LIST is in the cache
//   anyone ──(stats_atom)──▶ watch actor<T> ──▶ watch_stats
#pragma once

#include "messages/watch_types.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace kozmo {

template <class T>
struct object_event {
  watch::event_type type = watch::event_type::added;
  std::shared_ptr<const T> object;
  std::shared_ptr<const T> previous;
};

template <class Inspector, class T>
typename Inspector::result_type inspect(Inspector& f, object_event<T>& x) {
  // Objects are shared, immutable and local: only the event type is printable.
  (void)x;
  return f(caf::meta::type_name("object_event"));
}

// Counters a test or the bench reads to see what the watch went through.
struct watch_stats {
  std::uint64_t objects = 0;
  std::uint64_t events = 0;      // watch events applied (after dedup)
  std::uint64_t lists = 0;       // LISTs done (first + relists)
  std::uint64_t rewatches = 0;   // watch streams opened after the first
  std::uint64_t decode_errors = 0;
  std::string resource_version;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, watch_stats& x) {
  return f(caf::meta::type_name("watch_stats"), x.objects, x.events, x.lists, x.rewatches, x.decode_errors,
           x.resource_version);
}

} // namespace kozmo
