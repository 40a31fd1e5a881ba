#include "actors/tasks/template_store_actor.hpp"

#include "actors/controller/watch_into.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/custom_object.hpp"
#include "messages/task_messages.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <unordered_map>

namespace kozmo::tasks {
namespace {

// The answer of a confirming GET (from the client's io thread).
struct template_fetched {
  std::uint64_t id = 0;
  std::shared_ptr<expected<json::value>> result;
};
KOZMO_LOCAL_MESSAGE(template_fetched)

struct lookup {
  template_request req;
  caf::response_promise rp;
  bool in_fallback = false; // the task's namespace was tried
  client::backoff retries = controller::read_backoff(); // GETs that got no answer
};

struct store_state {
  static inline const char* name = "template_store";
  template_store_config cfg;
  caf::actor watch;
  controller::listed_gate listed; // lookups wait until the templates are listed
  std::unordered_map<std::string, std::shared_ptr<const json::value>> templates; // "ns/name"
  std::unordered_map<std::uint64_t, lookup> fetching;
  std::uint64_t next_id = 0;
};

using store_actor = caf::stateful_actor<store_state>;

std::shared_ptr<const json::value> cached(store_actor* self, const std::string& ns, const std::string& name) {
  auto it = self->state.templates.find(ns + "/" + name);
  return it == self->state.templates.end() ? nullptr : it->second;
}

void fetch(store_actor* self, lookup l);

// Cache first, then a confirming GET; the task's namespace, then the platform's.
void resolve(store_actor* self, lookup l) {
  const std::string& ns = l.in_fallback ? self->state.cfg.fallback_namespace : l.req.ns;
  if (auto t = cached(self, ns, l.req.name)) {
    l.rp.deliver(template_reply{l.req.name, t});
    return;
  }
  fetch(self, std::move(l));
}

void fetch(store_actor* self, lookup l) {
  auto& st = self->state;
  auto id = ++st.next_id;
  const std::string& ns = l.in_fallback ? st.cfg.fallback_namespace : l.req.ns;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  st.cfg.cli->get({"", "v1", "podtemplates", ns, l.req.name, ""}, [me, id](expected<json::value> r) {
    caf::anon_send(me, template_fetched{id, std::make_shared<expected<json::value>>(std::move(r))});
  });
  st.fetching.emplace(id, std::move(l));
}

void on_fetched(store_actor* self, template_fetched& msg) {
  auto& st = self->state;
  auto it = st.fetching.find(msg.id);
  if (it == st.fetching.end())
    return;
  lookup l = std::move(it->second);
  st.fetching.erase(it);
  auto& r = *msg.result;
  if (r) {
    l.rp.deliver(template_reply{l.req.name, std::make_shared<const json::value>(std::move(*r))});
    return;
  }
  if (r.err().code != 404) {
    // Not an answer about the template: say so in the log and try again after a back-off.
    auto delay = l.retries.next();
    spdlog::warn("tasks: reading PodTemplate {}/{}: {} (retrying in {} ms)", l.req.ns, l.req.name, r.err().message,
                 delay.count());
    auto id = ++st.next_id;
    st.fetching.emplace(id, std::move(l));
    self->delayed_send(self, delay, template_fetched{id, nullptr});
    return;
  }
  if (!l.in_fallback && l.req.ns != st.cfg.fallback_namespace) {
    l.in_fallback = true;
    resolve(self, std::move(l));
    return;
  }
  l.rp.deliver(template_reply{l.req.name, nullptr});
}

caf::behavior template_store(store_actor* self, template_store_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  watch::watch_config wc;
  wc.resource = {"", "v1", "podtemplates", "", "", ""};
  st.watch = controller::watch_into<k8s::custom_object>(self, st.cfg.cli, wc, &st.listed);
  return {
      [self](object_event<k8s::custom_object>& ev) {
        if (!ev.object)
          return;
        auto key = ev.object->metadata.namespace_ + "/" + ev.object->metadata.name;
        if (ev.type == watch::event_type::deleted)
          self->state.templates.erase(key);
        else
          self->state.templates[key] = std::make_shared<const json::value>(ev.object->document);
      },
      [self](template_request& req) -> caf::result<template_reply> {
        auto rp = self->make_response_promise<template_reply>();
        self->state.listed.when_listed(
            [self, l = lookup{std::move(req), rp, false}]() mutable { resolve(self, std::move(l)); });
        return rp;
      },
      [self](template_fetched& msg) {
        if (msg.result)
          return on_fetched(self, msg);
        // A retry after an error: fetch the same lookup again.
        auto it = self->state.fetching.find(msg.id);
        if (it == self->state.fetching.end())
          return;
        lookup l = std::move(it->second);
        self->state.fetching.erase(it);
        fetch(self, std::move(l));
      },
  };
}

} // namespace

caf::actor spawn_template_store(caf::actor_system& sys, template_store_config cfg) {
  return sys.spawn(template_store, std::move(cfg));
}

} // namespace kozmo::tasks
