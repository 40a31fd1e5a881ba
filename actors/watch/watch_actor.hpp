// The watch actor: one per resource kind. It lists, then watches from the list's
// resourceVersion with bookmarks, keeps an indexed cache, and fans typed events out to
// subscribers.
//
//   client io thread ──list batches, list done / decoded watch line / stream closed──▶ watch_actor<T>
//   watch_actor<T>  ──object_event<T>──▶ subscribers (by kind + key: owner uid, label, node, ...)
//
// The first LIST asks for resourceVersion=0 (the API server's watch cache, unpaged), as
// client-go's reflector does; later relists are consistent reads. A LIST's items reach the
// actor in batches of about 256 KiB while the answer is still arriving (the client's
// list_splitter), and each batch is decoded on the actor's thread: a LIST of 30,000 pods is
// never one 50 MB document in memory.
//
// Recovery, as an informer does it:
//   stream ended cleanly (server timeout)   → re-watch at once from the last seen version
//   connection error, 429, 5xx              → re-watch after an exponential back-off
//   410 Gone (ERROR event or HTTP 410)      → relist; the cache emits the difference
#pragma once

#include "actors/watch/watch_line.hpp"
#include "k8s/client/client.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"

#include <caf/fwd.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <memory>

namespace kozmo::watch {

struct watch_config {
  client::resource_ref resource;      // group/version/resource, and ns to restrict to one namespace
  std::string label_selector;
  std::string field_selector;
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  std::int64_t watch_timeout_seconds = 0; // 0: let the server decide
  // Pods only: keep just what a scheduler reads of a pod (metadata, node, scheduler, priority,
  // containers' resources, phase; k8s::decode_counted_pod_list), for a watch whose subscribers
  // need no more: the other schedulers' pods it counts, or its own when it runs alone. Such a
  // watch LISTs in protobuf (JSON from a server that does not speak it), as kube-scheduler's
  // informers do: two fifths of the bytes, and less of the API server's CPU than its JSON.
  bool counted_pods = false;
};

// Spawns the watch actor for objects of type T (pods, nodes, custom objects; see
// object_traits.hpp). Messages it understands:
//   (subscribe_atom, index_kind, std::string value, caf::actor subscriber)
//   (synced_atom) → replies ok_atom once the first LIST has been applied
//   (stats_atom)  → replies watch_stats
template <class T>
caf::actor spawn_watch(caf::actor_system& sys, std::shared_ptr<client::client> cli, watch_config cfg);

} // namespace kozmo::watch
