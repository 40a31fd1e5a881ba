// The watch actor instantiated for k8s::service (the training jobs' headless services).
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor_impl.hpp"

namespace kozmo::watch {
template caf::actor spawn_watch<k8s::service>(caf::actor_system&, std::shared_ptr<client::client>, watch_config);
} // namespace kozmo::watch
