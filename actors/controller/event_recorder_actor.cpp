#include "actors/controller/event_recorder_actor.hpp"

#include "k8s/client/client.hpp"

#include "messages/atoms.hpp"
#include "messages/local_message.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <optional>
#include <unordered_map>

namespace kozmo::controller {


namespace {

// The answer to one Event write, back from the client's io thread.
struct event_written {
  std::string key;
  bool updated = false; // a PATCH (else a POST)
  int code = 0;         // 0: written; otherwise the HTTP status (or -1: no answer)
  std::string error;
};

template <class I>
typename I::result_type inspect(I& f, event_written& x) {
  return f(caf::meta::type_name("event_written"), x.key, x.updated, x.code, x.error);
}

// Callers waiting for a write to be done (written or failed), in the order they asked.
using waiters = std::vector<caf::response_promise>;

struct in_flight {
  waiters current;                 // wait for the write on the wire
  std::optional<event_write> next; // the latest write that waits for this one
  waiters for_next;                // wait for `next`
};

void settle(waiters& w) {
  for (auto& rp : w)
    rp.deliver(caf::ok_atom::value);
  w.clear();
}

struct recorder_state {
  static inline const char* name = "event_recorder";
  std::shared_ptr<client::client> cli;
  recorder_config cfg;
  std::optional<event_correlator> correlator;
  std::unordered_map<std::string, in_flight> writing; // by Event key
};

using recorder_actor = caf::stateful_actor<recorder_state>;

void send_write(recorder_actor* self, event_write w, waiters wait) {
  auto& st = self->state;
  st.writing[w.key].current = std::move(wait);
  caf::actor me = caf::actor_cast<caf::actor>(self);
  bool update = w.what == event_write::kind::update;
  auto done = [me, key = w.key, update](expected<json::value> r) {
    caf::anon_send(me, event_written{key, update, r ? 0 : (r.err().code ? r.err().code : -1),
                                     r ? std::string() : r.err().message});
  };
  if (!update) {
    st.cli->create_event(w.body, std::move(done));
    return;
  }
  client::request req;
  req.method = "PATCH";
  req.path = "/api/v1/namespaces/" + w.ns + "/events/" + w.name;
  req.body = json::dump(w.body);
  req.content_type = "application/merge-patch+json";
  req.background = true; // as create_event: behind binds and status writes
  st.cli->send(std::move(req), [done = std::move(done)](expected<client::response> r) {
    if (!r)
      return done(r.err());
    if (r->status >= 400)
      return done(error{"PATCH event: HTTP " + std::to_string(r->status), r->status});
    done(json::value{});
  });
}

void submit(recorder_actor* self, event_write w, waiters wait = {}) {
  if (w.what == event_write::kind::drop)
    return settle(wait);
  auto& st = self->state;
  if (auto it = st.writing.find(w.key); it != st.writing.end()) {
    it->second.next = std::move(w); // folded: only the latest count matters
    for (auto& rp : wait)
      it->second.for_next.push_back(std::move(rp));
    return;
  }
  send_write(self, std::move(w), std::move(wait));
}

void on_written(recorder_actor* self, const event_written& w) {
  auto& st = self->state;
  auto it = st.writing.find(w.key);
  if (it == st.writing.end())
    return;
  auto done = std::move(it->second);
  st.writing.erase(it);
  if (w.code == 404 && w.updated) {
    // Expired (--event-ttl) between two repeats: the Event comes back with its latest count.
    for (auto& rp : done.for_next)
      done.current.push_back(std::move(rp));
    return submit(self, st.correlator->recreate(w.key, st.cfg.time->now()), std::move(done.current));
  }
  if (w.code != 0)
    spdlog::debug("event recorder: an Event was not written: {}", w.error);
  settle(done.current);
  if (done.next)
    submit(self, std::move(*done.next), std::move(done.for_next));
}

caf::behavior recorder(recorder_actor* self, std::shared_ptr<client::client> cli, recorder_config cfg) {
  auto& st = self->state;
  st.cli = std::move(cli);
  st.cfg = std::move(cfg);
  st.correlator.emplace(st.cfg.correlation);
  return {
      [self](event_note& note) {
        auto& s = self->state;
        submit(self, s.correlator->observe(note, s.cfg.time->now()));
      },
      [self](atoms::written_atom, event_note& note) -> caf::result<caf::ok_atom> {
        auto& s = self->state;
        submit(self, s.correlator->observe(note, s.cfg.time->now()), {self->make_response_promise()});
        return caf::delegated<caf::ok_atom>();
      },
      [self](const event_written& w) { on_written(self, w); },
  };
}

} // namespace

caf::actor spawn_event_recorder(caf::actor_system& sys, std::shared_ptr<client::client> cli, recorder_config cfg) {
  return sys.spawn(recorder, std::move(cli), std::move(cfg));
}

void record(const caf::actor& recorder, event_note note) {
  if (recorder)
    caf::anon_send(recorder, std::move(note));
}

} // namespace kozmo::controller
