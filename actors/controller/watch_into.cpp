#include "actors/controller/watch_into.hpp"

#include "k8s/client/client.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/node.hpp"
#include "k8s/model/pod.hpp"
#include "k8s/model/service.hpp"
#include "messages/atoms.hpp"
#include "messages/local_message.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace kozmo::controller {
namespace {

// The client's answer to one LIST (from its io thread).
struct list_answer {
  std::shared_ptr<expected<json::value>> list;
};
// The list, handed to the actor that asked for it.
struct listed_list {
  std::shared_ptr<const json::value> list;
};
KOZMO_LOCAL_MESSAGE(list_answer)
KOZMO_LOCAL_MESSAGE(listed_list)

// A one-shot reader for list_into: it reads until the server answers, replies with the list and
// ends; it also ends when the actor that asked does.
struct reader_state {
  static inline const char* name = "list_reader";
  std::shared_ptr<client::client> cli;
  client::resource_ref ref;
  std::string who;
  client::backoff backoff = read_backoff();
  caf::response_promise rp;
};

using reader = caf::stateful_actor<reader_state>;

void read(reader* self) {
  caf::actor me = caf::actor_cast<caf::actor>(self);
  self->state.cli->list_all(self->state.ref, {}, [me](expected<json::value> r) {
    caf::anon_send(me, list_answer{std::make_shared<expected<json::value>>(std::move(r))});
  });
}

void on_answer(reader* self, expected<json::value>& r) {
  auto& st = self->state;
  if (!r) {
    auto delay = st.backoff.next();
    spdlog::warn("{}: cannot list {}: {} (retrying in {} ms)", st.who, st.ref.resource, r.err().message,
                 delay.count());
    self->delayed_send(self, delay, atoms::retry_atom::value);
    return;
  }
  st.rp.deliver(listed_list{std::make_shared<const json::value>(std::move(*r))});
  self->quit();
}

caf::behavior read_until_answered(reader* self, caf::actor asker, std::shared_ptr<client::client> cli,
                                  client::resource_ref ref, std::string who) {
  self->state.cli = std::move(cli);
  self->state.ref = std::move(ref);
  self->state.who = std::move(who);
  self->monitor(asker);
  self->set_down_handler([self](caf::down_msg&) { self->quit(); });
  return {
      [self](caf::get_atom) -> caf::result<listed_list> {
        self->state.rp = self->make_response_promise();
        read(self);
        return caf::delegated<listed_list>();
      },
      [self](list_answer& a) { on_answer(self, *a.list); },
      [self](atoms::retry_atom) { read(self); },
  };
}

} // namespace

void subscribe_to(caf::event_based_actor* self, const caf::actor& watch, listed_gate* gate, watch::index_kind index,
                  std::string key) {
  self->send(watch, atoms::subscribe_atom::value, index, std::move(key), caf::actor_cast<caf::actor>(self));
  if (!gate)
    return;
  gate->expect();
  auto listed = self->request(watch, caf::infinite, atoms::synced_atom::value);
  if (!gate->on_error) {
    listed.then([gate](caf::ok_atom) { gate->done(); });
    return;
  }
  listed.then([gate](caf::ok_atom) { gate->done(); },
              [gate](caf::error& e) { gate->on_error(caf::to_string(e)); });
}

void subscribe_to(caf::event_based_actor* self, const caf::actor& watch, std::function<void()> on_listed,
                  watch::index_kind index, std::string key) {
  self->send(watch, atoms::subscribe_atom::value, index, std::move(key), caf::actor_cast<caf::actor>(self));
  self->request(watch, caf::infinite, atoms::synced_atom::value).then([f = std::move(on_listed)](caf::ok_atom) { f(); });
}

template <class T>
caf::actor watch_into(caf::event_based_actor* self, std::shared_ptr<client::client> cli, watch::watch_config cfg,
                      listed_gate* gate) {
  auto w = watch::spawn_watch<T>(self->system(), std::move(cli), std::move(cfg));
  self->link_to(w);
  subscribe_to(self, w, gate);
  return w;
}

template caf::actor watch_into<k8s::pod>(caf::event_based_actor*, std::shared_ptr<client::client>,
                                         watch::watch_config, listed_gate*);
template caf::actor watch_into<k8s::node>(caf::event_based_actor*, std::shared_ptr<client::client>,
                                          watch::watch_config, listed_gate*);
template caf::actor watch_into<k8s::service>(caf::event_based_actor*, std::shared_ptr<client::client>,
                                             watch::watch_config, listed_gate*);
template caf::actor watch_into<k8s::custom_object>(caf::event_based_actor*, std::shared_ptr<client::client>,
                                                   watch::watch_config, listed_gate*);

void list_into(caf::event_based_actor* self, std::shared_ptr<client::client> cli, client::resource_ref ref,
               std::string who, listed_gate& gate, std::function<void(const json::value& list)> on_list) {
  gate.expect();
  auto r = self->system().spawn(read_until_answered, caf::actor_cast<caf::actor>(self), std::move(cli),
                                std::move(ref), std::move(who));
  self->request(r, caf::infinite, caf::get_atom::value)
      .then([g = &gate, on_list = std::move(on_list)](listed_list& l) {
        on_list(*l.list);
        g->done();
      });
}

} // namespace kozmo::controller
