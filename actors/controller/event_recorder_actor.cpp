#include "actors/controller/event_recorder_actor.hpp"

#include "k8s/client/client.hpp"

#include "messages/local_message.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <optional>
#include <unordered_map>

namespace kozmo::controller {

KOZMO_LOCAL_MESSAGE(event_note)

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

struct in_flight {
  std::optional<event_write> next; // the latest write that waits for this one
};

struct recorder_state {
  static inline const char* name = "event_recorder";
  std::shared_ptr<client::client> cli;
  recorder_config cfg;
  std::optional<event_correlator> correlator;
  std::unordered_map<std::string, in_flight> writing; // by Event key
};

using recorder_actor = caf::stateful_actor<recorder_state>;

void send_write(recorder_actor* self, event_write w) {
  auto& st = self->state;
  st.writing[w.key];
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

void submit(recorder_actor* self, event_write w) {
  if (w.what == event_write::kind::drop)
    return;
  auto& st = self->state;
  if (auto it = st.writing.find(w.key); it != st.writing.end()) {
    it->second.next = std::move(w); // folded: only the latest count matters
    return;
  }
  send_write(self, std::move(w));
}

void on_written(recorder_actor* self, const event_written& w) {
  auto& st = self->state;
  auto it = st.writing.find(w.key);
  if (it == st.writing.end())
    return;
  auto next = std::move(it->second.next);
  st.writing.erase(it);
  if (w.code == 404 && w.updated) {
    // Expired (--event-ttl) between two repeats: the Event comes back, count kept.
    submit(self, st.correlator->recreate(w.key, st.cfg.time->now()));
    return;
  }
  if (w.code != 0)
    spdlog::debug("event recorder: an Event was not written: {}", w.error);
  if (next)
    submit(self, std::move(*next));
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
