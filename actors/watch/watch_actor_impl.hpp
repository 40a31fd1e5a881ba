// The watch actor's behaviour, as a template. Included only by the .cpp files that
// instantiate it for a type (watch_actor_*.cpp), so CAF's templates compile once per type.
#pragma once

#include "actors/watch/watch_actor.hpp"
#include "k8s/client/client_metrics.hpp"
#include "k8s/client/paths.hpp"
#include "k8s/client/retry.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/watch.hpp"
#include "k8s/protobuf_wire.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <random>

namespace kozmo::watch {

namespace detail {

// Messages from the client's io thread to the actor. `generation` tells stale callbacks of
// an abandoned stream apart from the current one.
template <class T>
struct list_done { // one page's answer, as bytes: decoded on the actor's thread, not the io thread's
  std::uint64_t generation = 0;
  std::shared_ptr<expected<client::response>> result;
};
// A batch of a LIST page's items as the answer arrives ({"items":[...]}), or, with no batch, the
// start of the page's answer (again, when the client retries it: what came before is dropped).
template <class T>
struct list_batch {
  std::uint64_t generation = 0;
  std::shared_ptr<std::string> batch;
};
template <class T>
struct line_arrived {
  std::uint64_t generation = 0;
  std::shared_ptr<expected<watch_line<T>>> line;
};
struct stream_closed {
  std::uint64_t generation = 0;
  std::shared_ptr<expected<ok_t>> how;
};

template <class I, class T>
typename I::result_type inspect(I& f, list_done<T>& x) { return f(caf::meta::type_name("list_done"), x.generation); }
template <class I, class T>
typename I::result_type inspect(I& f, list_batch<T>& x) { return f(caf::meta::type_name("list_batch"), x.generation); }
template <class I, class T>
typename I::result_type inspect(I& f, line_arrived<T>& x) { return f(caf::meta::type_name("line_arrived"), x.generation); }
template <class I>
typename I::result_type inspect(I& f, stream_closed& x) { return f(caf::meta::type_name("stream_closed"), x.generation); }

struct subscription {
  index_kind kind = index_kind::all;
  std::string value;
  caf::actor who;
};

template <class T>
struct watch_state {
  static inline const char* name = "watch";
  using traits = object_traits<T>;

  std::shared_ptr<client::client> cli;
  watch_config cfg;
  cache<T, traits> store;
  client::watch_handle stream;
  std::uint64_t generation = 0;
  std::vector<subscription> subscribers;
  std::vector<caf::response_promise> waiting_for_sync;
  bool synced = false;
  std::optional<client::backoff> backoff; // jitter keeps many watchers from reconnecting in lock-step
  // 410s since the last event that made progress: a relist that is expired again at once
  // (a server whose history is too short for the list's version) waits for the back-off.
  int expired_in_a_row = 0;
  // When the current stream opened and whether it delivered anything: a stream that ends
  // cleanly at once and empty (a misbehaving proxy) is re-opened after the back-off, not in
  // a tight loop.
  std::chrono::steady_clock::time_point stream_opened;
  std::chrono::steady_clock::time_point list_started;
  // The LIST under way: its options (the continue token of the next page) and the items so far.
  client::list_options list_opts;
  std::vector<std::shared_ptr<const T>> list_items;
  // The current page's items decoded so far, batch by batch, and whether a batch could not be
  // read at all (the page is then listed again).
  std::vector<std::shared_ptr<const T>> page_items;
  bool page_unreadable = false;
  bool list_restarted = false; // an expired continue token restarted it unpaged once
  bool stream_delivered = false;
  watch_stats stats;

  std::string what() const {
    const auto& r = cfg.resource;
    std::string selected = cfg.label_selector;
    if (!cfg.field_selector.empty())
      selected += (selected.empty() ? "" : ",") + cfg.field_selector;
    return (r.group.empty() ? "" : r.group + "/") + r.resource + (r.ns.empty() ? "" : " in " + r.ns) +
           (selected.empty() ? "" : " (" + selected + ")");
  }
};

template <class T>
using watch_actor = caf::stateful_actor<watch_state<T>>;

template <class T>
void deliver(watch_actor<T>* self, const event<T>& ev) {
  using cache_t = cache<T, object_traits<T>>;
  for (auto& s : self->state.subscribers) {
    bool now = cache_t::matches(*ev.object, s.kind, s.value);
    bool before = ev.previous && cache_t::matches(*ev.previous, s.kind, s.value);
    if (!now && !before)
      continue;
    object_event<T> msg{ev.type, ev.object, ev.previous};
    // An object that stops matching a subscriber's selection is gone as far as it knows.
    if (!now && ev.type != event_type::deleted)
      msg.type = event_type::deleted;
    else if (now && !before && ev.type == event_type::modified)
      msg.type = event_type::added;
    self->send(s.who, std::move(msg));
  }
}

template <class T>
void start_list(watch_actor<T>* self);

// Whether a LIST of this watch asks for protobuf: only the counted pods have a protobuf decoder.
// The API server then answers in protobuf, a server that does not speak it (the embedded one) in
// JSON; each batch and the rest say which by their first bytes.
template <class T>
bool lists_in_protobuf(const watch_config& cfg) {
  if constexpr (std::is_same_v<T, k8s::pod>)
    return cfg.counted_pods;
  return false;
}

// A LIST page or batch, and a watch line, as the watch's configuration asks them decoded.
template <class T>
expected<k8s::object_list<T>> decode_page(watch_actor<T>* self, std::string_view body) {
  auto& st = self->state;
  if constexpr (std::is_same_v<T, k8s::pod>)
    if (st.cfg.counted_pods) {
      if (!body.starts_with(k8s::protobuf::magic))
        return object_traits<T>::decode_counted_list(body);
      std::vector<std::string> skipped;
      auto out = object_traits<T>::decode_counted_list_protobuf(body, skipped);
      for (auto& what : skipped) {
        ++st.stats.decode_errors;
        spdlog::warn("watch={} skipping an undecodable object: {}", st.what(), what);
      }
      return out;
    }
  return object_traits<T>::decode_list(body);
}
template <class T>
expected<watch_line<T>> decode_line(bool counted_pods, std::string_view line) {
  if constexpr (std::is_same_v<T, k8s::pod>)
    if (counted_pods)
      return object_traits<T>::decode_counted_line(line);
  return object_traits<T>::decode_line(line);
}

template <class T>
void start_watch(watch_actor<T>* self) {
  auto& st = self->state;
  auto gen = ++st.generation;
  st.stream_opened = std::chrono::steady_clock::now();
  st.stream_delivered = false;
  client::watch_options opts;
  opts.resource_version = st.store.resource_version();
  opts.label_selector = st.cfg.label_selector;
  opts.field_selector = st.cfg.field_selector;
  opts.allow_bookmarks = true;
  opts.timeout_seconds = st.cfg.watch_timeout_seconds;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  st.stream = st.cli->watch(
      st.cfg.resource, opts,
      [me, gen, counted = st.cfg.counted_pods](std::string_view line) {
        // Decoded here, on the io thread, so the actor receives typed objects.
        auto decoded = std::make_shared<expected<watch_line<T>>>(decode_line<T>(counted, line));
        caf::anon_send(me, line_arrived<T>{gen, std::move(decoded)});
      },
      [me, gen](expected<ok_t> how) {
        caf::anon_send(me, stream_closed{gen, std::make_shared<expected<ok_t>>(std::move(how))});
      });
}

template <class T>
void schedule_retry(watch_actor<T>* self, bool relist) {
  auto& st = self->state;
  auto delay = st.backoff->next();
  if (relist)
    self->delayed_send(self, delay, atoms::relist_atom::value);
  else
    self->delayed_send(self, delay, atoms::rewatch_atom::value);
}

template <class T>
void request_page(watch_actor<T>* self);

// The slow way through a LIST page: as a JSON tree, each item decoded alone, the undecodable
// ones counted and skipped (a watch must not stop on one object it cannot read).
template <class T>
expected<k8s::object_list<T>> decode_list_skipping(watch_actor<T>* self, const std::string& body) {
  auto& st = self->state;
  auto doc = json::parse(body);
  if (!doc)
    return doc.err();
  k8s::object_list<T> out;
  if (const auto* meta = doc->find("metadata")) {
    out.resource_version = meta->get_string("resourceVersion");
    out.continue_token = meta->get_string("continue");
  }
  if (const auto* arr = doc->find("items"); arr && arr->is_array())
    for (const auto& item : arr->as_array()) {
      auto obj = k8s::from_json<T>(item);
      if (!obj) {
        ++st.stats.decode_errors;
        spdlog::warn("watch={} skipping an undecodable object: {}", st.what(), obj.err().message);
        continue;
      }
      out.items.push_back(std::move(*obj));
    }
  return out;
}

template <class T>
void on_list_batch(watch_actor<T>* self, list_batch<T>& msg) {
  auto& st = self->state;
  if (msg.generation != st.generation)
    return;
  if (!msg.batch) {
    st.page_items.clear();
    st.page_unreadable = false;
    return;
  }
  auto batch = decode_page<T>(self, *msg.batch);
  if (!batch && !msg.batch->starts_with(k8s::protobuf::magic))
    batch = decode_list_skipping(self, *msg.batch);
  if (!batch) {
    spdlog::warn("watch={} list answer cannot be read: {}", st.what(), batch.err().message);
    st.page_unreadable = true;
    return;
  }
  for (auto& obj : batch->items)
    st.page_items.push_back(std::make_shared<const T>(std::move(obj)));
}

template <class T>
void on_list(watch_actor<T>* self, list_done<T>& msg) {
  auto& st = self->state;
  if (msg.generation != st.generation)
    return;
  auto& result = *msg.result;
  std::vector<std::shared_ptr<const T>> streamed = std::move(st.page_items);
  st.page_items.clear();
  if (result && st.page_unreadable) {
    st.page_unreadable = false;
    schedule_retry(self, true);
    return;
  }
  if (!result) {
    // An expired continue token: start over as one unpaged list (client-go's pager).
    if (result.err().code == 410 && !st.list_opts.continue_token.empty() && !st.list_restarted) {
      st.list_restarted = true;
      st.list_opts.continue_token.clear();
      st.list_opts.limit = 0;
      st.list_items.clear();
      request_page(self);
      return;
    }
    spdlog::warn("watch={} list failed: {} (retrying)", st.what(), result.err().message);
    schedule_retry(self, true);
    return;
  }
  // Straight from the bytes to typed objects (simdjson, or the protobuf reader), no JSON tree in
  // between; a JSON page with an object the model cannot read is read again item by item,
  // skipping that one (the protobuf decoder skips it itself). The items came in batches while the
  // answer arrived (list_batch); the body holds the rest, without the items.
  const bool protobuf = result->body.starts_with(k8s::protobuf::magic);
  auto page = decode_page<T>(self, result->body);
  if (!page && !protobuf)
    page = decode_list_skipping(self, result->body);
  result->body.clear();
  if (!page) {
    spdlog::warn("watch={} list answer cannot be read: {} (retrying)", st.what(), page.err().message);
    schedule_retry(self, true);
    return;
  }
  if (st.list_items.empty())
    st.list_items = std::move(streamed);
  else
    st.list_items.insert(st.list_items.end(), streamed.begin(), streamed.end());
  for (auto& obj : page->items)
    st.list_items.push_back(std::make_shared<const T>(std::move(obj)));
  if (!page->continue_token.empty()) {
    st.list_opts.continue_token = std::move(page->continue_token);
    request_page(self);
    return;
  }
  std::vector<std::shared_ptr<const T>> items = std::move(st.list_items);
  st.list_items.clear();
  std::string rv = std::move(page->resource_version);

  ++st.stats.lists;
  for (auto& ev : st.store.replace(std::move(items), rv))
    deliver(self, ev);
  st.stats.objects = st.store.size();
  if (!st.synced) {
    st.synced = true;
    for (auto& rp : st.waiting_for_sync)
      rp.deliver(caf::ok_atom::value);
    st.waiting_for_sync.clear();
  }
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - st.list_started);
  spdlog::info("watch={} listed {} objects at resourceVersion {} in {} ms{}", st.what(), st.store.size(), rv,
               took.count(), protobuf ? " (protobuf)" : "");
  start_watch(self);
}

template <class T>
void start_list(watch_actor<T>* self) {
  auto& st = self->state;
  st.stream.cancel();
  ++st.generation; // answers to an abandoned LIST or stream are dropped
  st.list_started = std::chrono::steady_clock::now();
  st.list_items.clear();
  st.page_items.clear();
  st.page_unreadable = false;
  st.list_restarted = false;
  client::list_options& opts = st.list_opts;
  opts = {};
  opts.label_selector = st.cfg.label_selector;
  opts.field_selector = st.cfg.field_selector;
  opts.limit = 500;
  // The first LIST is served from the API server's watch cache (resourceVersion=0, whole and
  // unpaged), as client-go's reflector starts: no read of every object from etcd page by page at
  // start-up. Relists once synced (after a 410) are consistent reads, as the reflector's after an
  // expired version.
  if (!st.synced)
    opts.resource_version = "0";
  request_page(self);
}

template <class T>
void request_page(watch_actor<T>* self) {
  auto& st = self->state;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  client::request req{"GET", client::collection_path(st.cfg.resource) + client::list_query(st.list_opts)};
  if (lists_in_protobuf<T>(st.cfg))
    req.accept = std::string(k8s::protobuf::media_type) + ", application/json";
  auto items = std::make_shared<client::list_items_handler>();
  items->restart = [me, gen = st.generation] { caf::anon_send(me, list_batch<T>{gen, nullptr}); };
  items->batch = [me, gen = st.generation](std::string batch, std::size_t) {
    caf::anon_send(me, list_batch<T>{gen, std::make_shared<std::string>(std::move(batch))});
  };
  req.list_items = std::move(items);
  st.cli->send(std::move(req), [me, gen = st.generation](expected<client::response> r) {
    caf::anon_send(me, list_done<T>{gen, std::make_shared<expected<client::response>>(std::move(r))});
  });
}

// The first 410 relists at once, as an informer does; repeated ones back off.
template <class T>
void relist_after_expiry(watch_actor<T>* self) {
  auto& st = self->state;
  st.stream.cancel();
  ++st.generation; // ignore whatever the cancelled stream still reports
  const auto& r = st.cfg.resource;
  client::count_relist(r.group.empty() ? r.resource : r.resource + "." + r.group);
  if (st.expired_in_a_row++ == 0)
    start_list(self);
  else
    schedule_retry(self, true);
}

template <class T>
void on_line(watch_actor<T>* self, line_arrived<T>& msg) {
  auto& st = self->state;
  if (msg.generation != st.generation)
    return;
  auto& decoded = *msg.line;
  if (!decoded) {
    ++st.stats.decode_errors;
    spdlog::warn("watch={} undecodable event: {}", st.what(), decoded.err().message);
    return;
  }
  auto& line = *decoded;
  st.stream_delivered = true;
  using kind = typename watch_line<T>::kind;
  switch (line.what) {
  case kind::bookmark:
    st.store.note_resource_version(line.resource_version);
    st.expired_in_a_row = 0;
    return;
  case kind::error:
    if (line.error_code == 410) {
      spdlog::info("watch={} resourceVersion {} expired: relisting", st.what(), st.store.resource_version());
      relist_after_expiry(self);
    } else {
      spdlog::warn("watch={} error event {}: {}", st.what(), line.error_code, line.error_message);
      st.stream.cancel(); // the close callback schedules the re-watch
    }
    return;
  default:
    break;
  }
  event_type type = line.what == kind::added      ? event_type::added
                    : line.what == kind::modified ? event_type::modified
                                                  : event_type::deleted;
  st.backoff->reset(); // the stream works
  st.expired_in_a_row = 0;
  if (auto ev = st.store.apply(type, std::move(line.object))) {
    ++st.stats.events;
    deliver(self, *ev);
  }
  st.stats.objects = st.store.size();
}

template <class T>
void on_closed(watch_actor<T>* self, stream_closed& msg) {
  auto& st = self->state;
  if (msg.generation != st.generation)
    return;
  auto& how = *msg.how;
  ++st.stats.rewatches;
  if (how) {
    bool instant_and_empty =
        !st.stream_delivered && std::chrono::steady_clock::now() - st.stream_opened < std::chrono::seconds(1);
    if (instant_and_empty)
      schedule_retry(self, false);
    else
      start_watch(self); // a clean end (server timeout): carry on from the last version
    return;
  }
  if (how.err().code == 410) {
    spdlog::info("watch={} {}: relisting", st.what(), how.err().message);
    relist_after_expiry(self);
    return;
  }
  spdlog::warn("watch={} stream failed: {} (re-watching from {})", st.what(), how.err().message,
               st.store.resource_version());
  schedule_retry(self, false);
}

template <class T>
caf::behavior watch_behavior(watch_actor<T>* self, std::shared_ptr<client::client> cli, watch_config cfg) {
  self->state.cli = std::move(cli);
  self->state.cfg = std::move(cfg);
  self->state.backoff.emplace(self->state.cfg.min_backoff, self->state.cfg.max_backoff, 0.25);
  self->set_down_handler([self](caf::down_msg& down) {
    auto& subs = self->state.subscribers;
    subs.erase(std::remove_if(subs.begin(), subs.end(), [&](const subscription& s) { return s.who == down.source; }),
               subs.end());
  });
  self->attach_functor([self] { self->state.stream.cancel(); });
  start_list(self);
  return {
      [self](list_batch<T>& msg) { on_list_batch(self, msg); },
      [self](list_done<T>& msg) { on_list(self, msg); },
      [self](line_arrived<T>& msg) { on_line(self, msg); },
      [self](stream_closed& msg) { on_closed(self, msg); },
      [self](atoms::relist_atom) { start_list(self); },
      [self](atoms::rewatch_atom) { start_watch(self); },
      [self](atoms::subscribe_atom, index_kind kind, std::string& value, caf::actor& who) {
        self->monitor(who);
        for (auto& obj : self->state.store.select(kind, value))
          self->send(who, object_event<T>{event_type::added, obj, nullptr});
        self->state.subscribers.push_back({kind, std::move(value), std::move(who)});
      },
      [self](atoms::synced_atom) -> caf::result<caf::ok_atom> {
        if (self->state.synced)
          return caf::ok_atom::value;
        auto rp = self->make_response_promise();
        self->state.waiting_for_sync.push_back(rp);
        return caf::delegated<caf::ok_atom>();
      },
      [self](atoms::stats_atom) -> watch_stats {
        auto s = self->state.stats;
        s.resource_version = self->state.store.resource_version();
        return s;
      },
  };
}

} // namespace detail

template <class T>
caf::actor spawn_watch(caf::actor_system& sys, std::shared_ptr<client::client> cli, watch_config cfg) {
  return sys.spawn(detail::watch_behavior<T>, std::move(cli), std::move(cfg));
}

} // namespace kozmo::watch
