// `kozmo local --demo`: creates a GPU pod and narrates its life on the terminal.
#pragma once

#include "k8s/client/client.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace kozmo::runtime {

caf::actor spawn_demo(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                      caf::actor nodes_watch);

} // namespace kozmo::runtime
