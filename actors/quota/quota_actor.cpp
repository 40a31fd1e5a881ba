#include "actors/quota/quota_actor.hpp"

#include "actors/controller/watch_into.hpp"
#include "actors/quota/quota_usage.hpp"
#include "k8s/json/patch.hpp"
#include "k8s/model/custom_object.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <map>
#include <set>

namespace kozmo::quota {
namespace {

using flush_atom = caf::atom_constant<caf::atom("qflush")>;

// The kinds a quota counts, by the plural its watch reads (its events carry no kind).
enum class kind { quotas, claims, services, configmaps, secrets };
constexpr std::pair<kind, const char*> watched[] = {{kind::quotas, "resourcequotas"},
                                                    {kind::claims, "persistentvolumeclaims"},
                                                    {kind::services, "services"},
                                                    {kind::configmaps, "configmaps"},
                                                    {kind::secrets, "secrets"}};

template <class T>
using by_namespace = std::map<std::string, std::map<std::string, std::shared_ptr<const T>>>;

struct quota_state {
  static inline const char* name = "quota_controller";
  std::shared_ptr<client::client> cli;
  std::map<caf::actor_addr, kind> source; // watch → what it watches
  std::map<kind, by_namespace<k8s::custom_object>> objects;
  by_namespace<k8s::pod> pods;
  std::set<std::string> dirty; // namespaces whose quotas need a look
  bool flush_armed = false;
};

using quota_actor = caf::stateful_actor<quota_state>;

template <class T>
void apply(by_namespace<T>& into, watch::event_type type, const std::shared_ptr<const T>& o) {
  auto& ns = into[o->metadata.namespace_];
  if (type == watch::event_type::deleted)
    ns.erase(o->metadata.name);
  else
    ns[o->metadata.name] = o;
}

void touch(quota_actor* self, const std::string& ns) {
  auto& st = self->state;
  auto& quotas = st.objects[kind::quotas];
  if (auto q = quotas.find(ns); q == quotas.end() || q->second.empty())
    return; // no quota here: nothing to count
  st.dirty.insert(ns);
  if (!st.flush_armed) {
    st.flush_armed = true;
    self->delayed_send(self, std::chrono::milliseconds(200), flush_atom::value);
  }
}

void flush(quota_actor* self) {
  auto& st = self->state;
  st.flush_armed = false;
  auto dirty = std::move(st.dirty);
  st.dirty.clear();
  for (const auto& ns : dirty) {
    namespace_objects o;
    for (const auto& [_, p] : st.pods[ns])
      o.pods.push_back(p.get());
    auto collect = [&](kind k, std::vector<const json::value*>& into) {
      for (const auto& [_, x] : st.objects[k][ns])
        into.push_back(&x->document);
    };
    collect(kind::claims, o.claims);
    collect(kind::services, o.services);
    collect(kind::configmaps, o.configmaps);
    collect(kind::secrets, o.secrets);
    for (const auto& [name, q] : st.objects[kind::quotas][ns]) {
      const json::value* hard = q->document.at_path({"spec", "hard"});
      json::value status = json::object{};
      status["hard"] = hard && hard->is_object() ? *hard : json::value(json::object{});
      status["used"] = used_of(status["hard"], o);
      const json::value* old = q->document.find("status");
      static const json::value none = json::object{};
      json::value patch = json::create_merge_patch(old && old->is_object() ? *old : none, status);
      if (patch.is_object() && patch.as_object().empty())
        continue;
      json::value body = json::object{};
      body["status"] = std::move(patch);
      st.cli->patch_status({"", "v1", "resourcequotas", ns, name, ""}, client::patch_type::merge, body, {},
                           [ns, name](expected<json::value> r) {
                             if (!r && r.err().code != 404)
                               spdlog::warn("quota: status of {}/{}: {}", ns, name, r.err().message);
                           });
    }
  }
}

caf::behavior quota_behavior(quota_actor* self, std::shared_ptr<client::client> cli, caf::actor pods_watch) {
  auto& st = self->state;
  st.cli = cli;
  for (const auto& [k, plural] : watched) {
    watch::watch_config wc;
    wc.resource = {"", "v1", plural, "", "", ""};
    st.source[controller::watch_into<k8s::custom_object>(self, cli, wc).address()] = k;
  }
  controller::subscribe_to(self, pods_watch);
  return {
      [self](object_event<k8s::custom_object>& ev) {
        auto& st = self->state;
        auto it = st.source.find(caf::actor_cast<caf::actor_addr>(self->current_sender()));
        if (it == st.source.end() || !ev.object)
          return;
        apply(st.objects[it->second], ev.type, ev.object);
        touch(self, ev.object->metadata.namespace_);
      },
      [self](object_event<k8s::pod>& ev) {
        if (!ev.object)
          return;
        apply(self->state.pods, ev.type, ev.object);
        touch(self, ev.object->metadata.namespace_);
      },
      [self](flush_atom) { flush(self); },
  };
}

} // namespace

caf::actor spawn_quota_controller(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch) {
  return sys.spawn(quota_behavior, std::move(cli), std::move(pods_watch));
}

} // namespace kozmo::quota
