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

// Events wait in the client's last lane: behind binds and status writes (a background view's
// too), as client-go's broadcaster never holds up the controller that records.
void send_write(recorder_actor* self, event_write w) {
  auto& st = self->state;
  st.writing[w.key];
  caf::actor me = caf::actor_cast<caf::actor>(self);
  const bool update = w.what == event_write::kind::update;
  client::request req;
  req.method = update ? "PATCH" : "POST";
  req.path = "/api/v1/namespaces/" + w.ns + "/events" + (update ? "/" + w.name : std::string());
  req.body = json::dump(w.body);
  req.content_type = update ? "application/merge-patch+json" : "application/json";
  req.lane = client::lane::events;
  st.cli->send(std::move(req), [me, key = w.key, update](expected<client::response> r) {
    int code = !r ? (r.err().code ? r.err().code : -1) : r->status >= 400 ? r->status : 0;
    std::string why = !r ? r.err().message : code ? "HTTP " + std::to_string(code) + ": " + r->body : std::string();
    caf::anon_send(me, event_written{key, update, code, std::move(why)});
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
  if (w.code == 404 && w.updated) // expired (--event-ttl) between two repeats: back, count kept
    return submit(self, st.correlator->recreate(w.key, st.cfg.time->now()));
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
      // The same, answered once the write is handed to the client (or folded into the one in
      // flight, or dropped): what the caller writes next is queued after it.
      [self](atoms::written_atom, event_note& note) {
        auto& s = self->state;
        submit(self, s.correlator->observe(note, s.cfg.time->now()));
        return caf::ok_atom::value;
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
