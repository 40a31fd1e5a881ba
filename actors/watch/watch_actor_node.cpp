// The watch actor instantiated for k8s::node (one translation unit per type keeps CAF's
// template instantiation parallel and small).
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor_impl.hpp"

namespace kozmo::watch {
template caf::actor spawn_watch<k8s::node>(caf::actor_system&, std::shared_ptr<client::client>, watch_config);
} // namespace kozmo::watch
