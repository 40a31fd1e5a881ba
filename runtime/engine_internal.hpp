// What in-tree code (the CLI's modes, tests, bench) reaches of an engine beyond its public face
// (include/kozmo/engine.hpp): the actor system, the actors, the client and the embedded server,
// which a host never needs. Not installed. Valid while the engine runs.
#pragma once

#include <kozmo/engine.hpp>

#include "actors/kubelet/cluster_shape.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <vector>

namespace kozmo {

namespace apiserver {
class server;
}
namespace client {
class client;
}

struct engine_internal {
  // The actor system (for code that spawns its own actors next to Kozmo's). Requires start().
  static caf::actor_system& system(engine& e);
  // The scheduler actor (messages/scheduler_messages.hpp); invalid when not running.
  static caf::actor scheduler(const engine& e);
  // The pods watch the actors share (actors/watch); invalid when not running.
  static caf::actor pods_watch(const engine& e);
  // The client the actors use (shared; thread-safe).
  static std::shared_ptr<client::client> api(const engine& e);
  // The embedded API server (null when the API is elsewhere or before start()).
  static apiserver::server* embedded_server(engine& e);
};

// Simulated nodes between the public face and the kubelets' shape (which adds the addresses).
std::vector<simulated_node> simulated_nodes(const kubelet::cluster_shape& shape);
kubelet::cluster_shape cluster_shape_of(const std::vector<simulated_node>& nodes);

} // namespace kozmo
