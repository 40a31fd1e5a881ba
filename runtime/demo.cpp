#include "runtime/demo.hpp"

#include "actors/controller/watch_into.hpp"
#include "actors/watch/object_traits.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"

#include <caf/all.hpp>

#include <iostream>

namespace kozmo::runtime {
namespace {

constexpr const char* demo_pod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "demo-train", "namespace": "default", "labels": {"app": "kozmo-demo"},
               "annotations": {"kozmo.io/sim-duration": "4s", "kozmo.io/sim-pull-duration": "1s"}},
  "spec": {"restartPolicy": "Never",
           "containers": [{"name": "trainer", "image": "pytorch/pytorch:2.3.0-cuda12.1",
                           "command": ["python", "train.py"],
                           "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}
})";

struct demo_state {
  static inline const char* name = "demo";
  std::string last_line;
  bool created = false;
  bool done = false;
};

// One line per visible change: where the pod is, its phase, and its container's state.
std::string describe(const k8s::pod& p) {
  std::string line = "pod default/demo-train: " + (p.status.phase.empty() ? "Pending" : p.status.phase);
  if (!p.spec.node_name.empty())
    line += " on " + p.spec.node_name;
  for (const auto& cs : p.status.container_statuses) {
    if (cs.state.waiting)
      line += " (" + cs.state.waiting->reason + ")";
    else if (cs.state.running)
      line += " (container running)";
    else if (cs.state.terminated)
      line += " (exit code " + std::to_string(cs.state.terminated->exit_code) + ", " + cs.state.terminated->reason + ")";
  }
  return line;
}

void create_demo_pod(client::client& cli) {
  auto body = json::parse(demo_pod);
  std::cout << "demo: creating pod default/demo-train (2 GPUs, runs 4s)\n" << std::flush;
  cli.create({"", "v1", "pods", "default", "", ""}, *body, [](expected<json::value> r) {
    if (!r && r.err().code != 409)
      std::cout << "demo: could not create the pod: " << r.err().message << "\n" << std::flush;
    else if (!r)
      std::cout << "demo: pod default/demo-train already exists (state kept in --data-dir)\n" << std::flush;
  });
}

caf::behavior demo(caf::stateful_actor<demo_state>* self, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                   caf::actor nodes_watch) {
  controller::subscribe_to(self, pods_watch, controller::no_gate, watch::index_kind::label, "app=kozmo-demo");
  controller::subscribe_to(self, nodes_watch);
  return {
      // The pod is created once a node is there to run it.
      [self, cli](const object_event<k8s::node>& ev) {
        if (self->state.created || ev.type == watch::event_type::deleted)
          return;
        self->state.created = true;
        const auto& cap = ev.object->status.capacity;
        auto gpus = cap.find("nvidia.com/gpu");
        std::cout << "demo: node " << ev.object->metadata.name << " registered with "
                  << (gpus == cap.end() ? std::string("no") : gpus->second.to_string()) << " GPUs\n";
        create_demo_pod(*cli);
      },
      [self](const object_event<k8s::pod>& ev) {
        auto& st = self->state;
        if (ev.type == watch::event_type::deleted) {
          std::cout << "demo: pod default/demo-train deleted\n" << std::flush;
          return;
        }
        auto line = describe(*ev.object);
        if (line != st.last_line)
          std::cout << "demo: " << line << "\n" << std::flush;
        st.last_line = line;
        auto phase = ev.object->status.phase;
        if (!st.done && (phase == "Succeeded" || phase == "Failed")) {
          st.done = true;
          std::cout << "demo: done. The server keeps running; try\n"
                       "        kubectl --server <URL above> get pods,nodes\n"
                       "        kubectl --server <URL above> describe pod demo-train\n"
                    << std::flush;
        }
      },
  };
}

} // namespace

caf::actor spawn_demo(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                      caf::actor nodes_watch) {
  return sys.spawn(demo, std::move(cli), std::move(pods_watch), std::move(nodes_watch));
}

} // namespace kozmo::runtime
