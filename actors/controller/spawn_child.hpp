// Spawns a controller's child actor linked to its supervisor, or alone (tests, benches) when
// there is none. For actor files only (it brings CAF's spawn in).
#pragma once

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>

#include <utility>

namespace kozmo::controller {

template <class Behavior, class... Args>
caf::actor spawn_child(caf::actor_system& sys, caf::event_based_actor* parent, Behavior behavior, Args&&... args) {
  if (parent)
    return parent->spawn<caf::linked>(behavior, std::forward<Args>(args)...);
  return sys.spawn(behavior, std::forward<Args>(args)...);
}

} // namespace kozmo::controller
