#include "actors/extender/extender_actor.hpp"

#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/watch_into.hpp"
#include "messages/local_message.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <functional>

namespace kozmo::extender {
namespace {

// Requests from the server's io thread, each with the callback that answers it. Local only:
// the inspect functions make them printable by name, nothing more.
struct filter_request {
  filter_args args;
  reply_fn<filter_result> done;
};
struct preempt_request {
  preempt_args args;
  reply_fn<preempt_result> done;
};
struct bind_request {
  bind_args args;
  reply_fn<bind_result> done;
};
struct inspect_request {
  std::string path;
  inspect_fn done;
};
// The binding write's outcome, back from the client's io thread.
struct bind_written {
  std::string uid;
  std::string failure; // empty: bound
  reply_fn<bind_result> done;
};

KOZMO_LOCAL_MESSAGE(filter_request)
KOZMO_LOCAL_MESSAGE(preempt_request)
KOZMO_LOCAL_MESSAGE(bind_request)
KOZMO_LOCAL_MESSAGE(inspect_request)
KOZMO_LOCAL_MESSAGE(bind_written)

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct extender_state {
  static inline const char* name = "extender";
  std::shared_ptr<client::client> cli;
  std::shared_ptr<extender_logic> logic;
  extender_actor_config cfg;
  controller::listed_gate listed; // requests wait until pods and nodes are listed
};

using extender_actor = caf::stateful_actor<extender_state>;

void post_warning(extender_actor* self, const pod_warning& w) {
  spdlog::warn("extender pod={}/{} reason={} message=\"{}\"", w.ns, w.name, w.reason, w.message);
  controller::record(self->state.cfg.recorder, controller::pod_note(w.ns, w.name, w.uid,
                                                                    {self->state.cfg.event_component, ""}, "Warning",
                                                                    w.reason, w.message));
}

// What the core noticed on its own (a lazy preemption), said on every pod of the group.
void announce_notices(extender_actor* self) {
  for (const auto& n : self->state.logic->take_notices()) {
    spdlog::warn("extender group={} {}: {}", n.group, scheduler::event_reason(n.kind), n.message);
    for (const auto& p : n.pods)
      controller::record(self->state.cfg.recorder,
                         controller::pod_note(p.ns, p.name, p.uid, {self->state.cfg.event_component, ""},
                                              scheduler::event_type(n.kind), scheduler::event_reason(n.kind),
                                              n.message));
  }
}

void on_filter(extender_actor* self, filter_request& req) {
  auto& st = self->state;
  auto out = st.logic->filter(req.args, now_ms());
  if (out.warning) post_warning(self, *out.warning);
  announce_notices(self);
  const auto& p = req.args.pod.metadata;
  if (!out.result.node_names.empty())
    spdlog::info("extender filter pod={}/{} node={}", p.namespace_, p.name, out.result.node_names.front());
  else if (out.result.error.empty() && !out.result.failed_nodes.empty())
    spdlog::info("extender filter pod={}/{} waiting: {}", p.namespace_, p.name, out.result.failed_nodes.begin()->second);
  req.done(std::move(out.result));
}

void on_bind(extender_actor* self, bind_request& req) {
  auto& st = self->state;
  auto binding = st.logic->bind(req.args);
  if (!binding) {
    spdlog::warn("extender bind pod={}/{} refused: {}", req.args.pod_namespace, req.args.pod_name,
                 binding.err().message);
    req.done(binding.err());
    return;
  }
  auto me = caf::actor_cast<caf::actor>(self);
  auto uid = binding->pod_uid;
  st.cli->bind(*binding, [me, uid, done = std::move(req.done)](expected<json::value> r) {
    caf::anon_send(me, bind_written{uid, r ? std::string() : r.err().message, done});
  });
}

caf::behavior extender(extender_actor* self, std::shared_ptr<client::client> cli, std::shared_ptr<extender_logic> logic,
                       caf::actor pods_watch, caf::actor nodes_watch, extender_actor_config cfg) {
  auto& st = self->state;
  st.cli = std::move(cli);
  st.logic = std::move(logic);
  st.cfg = std::move(cfg);
  if (!st.cfg.recorder) {
    st.cfg.recorder = controller::spawn_event_recorder(self->system(), st.cli);
    self->link_to(st.cfg.recorder);
  }
  st.listed.on_open = [self] {
    spdlog::info("extender: pods and nodes listed; answering kube-scheduler");
    announce_notices(self); // groups downgraded by a configuration change
  };
  st.listed.on_error = [](const std::string& e) { spdlog::error("extender: a watch did not sync: {}", e); };
  for (const auto& w : {nodes_watch, pods_watch})
    controller::subscribe_to(self, w, &st.listed);
  return {
      [self](const object_event<k8s::pod>& ev) {
        if (auto st = self->state.logic->on_pod(*ev.object, ev.type == watch::event_type::deleted); !st)
          spdlog::error("extender {}", st.err().message);
        if (self->state.listed.listed())
          announce_notices(self);
      },
      [self](const object_event<k8s::node>& ev) {
        self->state.logic->on_node(*ev.object, ev.type == watch::event_type::deleted);
      },
      [self](filter_request& req) {
        // Now when pods and nodes are listed, else held until they are.
        self->state.listed.when_listed([self, req = std::move(req)]() mutable { on_filter(self, req); });
      },
      [self](preempt_request& req) {
        self->state.listed.when_listed([self, req = std::move(req)]() mutable {
          auto out = self->state.logic->preempt(req.args, now_ms());
          announce_notices(self);
          req.done(std::move(out));
        });
      },
      [self](bind_request& req) {
        self->state.listed.when_listed([self, req = std::move(req)]() mutable { on_bind(self, req); });
      },
      [self](inspect_request& req) { req.done(self->state.logic->inspect(req.path)); },
      [self](bind_written& w) {
        self->state.logic->bind_done(w.uid, w.failure.empty());
        if (w.failure.empty())
          spdlog::info("extender bound pod-uid={}", w.uid);
        else
          spdlog::warn("extender binding of pod-uid={} failed: {}", w.uid, w.failure);
        w.done(bind_result{w.failure});
      },
  };
}

class actor_backend final : public extender_backend {
public:
  explicit actor_backend(caf::actor a) : actor_(std::move(a)) {}
  void filter(filter_args args, reply_fn<filter_result> done) override {
    caf::anon_send(actor_, filter_request{std::move(args), std::move(done)});
  }
  void preempt(preempt_args args, reply_fn<preempt_result> done) override {
    caf::anon_send(actor_, preempt_request{std::move(args), std::move(done)});
  }
  void bind(bind_args args, reply_fn<bind_result> done) override {
    caf::anon_send(actor_, bind_request{std::move(args), std::move(done)});
  }
  void inspect(std::string path, inspect_fn done) override {
    caf::anon_send(actor_, inspect_request{std::move(path), std::move(done)});
  }

private:
  caf::actor actor_;
};

} // namespace

caf::actor spawn_extender_actor(caf::actor_system& sys, std::shared_ptr<client::client> cli,
                                std::shared_ptr<extender_logic> logic, caf::actor pods_watch, caf::actor nodes_watch,
                                extender_actor_config cfg) {
  return sys.spawn(extender, std::move(cli), std::move(logic), std::move(pods_watch), std::move(nodes_watch),
                   std::move(cfg));
}

std::shared_ptr<extender_backend> make_actor_backend(caf::actor extender) {
  return std::make_shared<actor_backend>(std::move(extender));
}

} // namespace kozmo::extender
