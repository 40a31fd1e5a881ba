// The watch actor instantiated for custom objects (CRD kinds such as PyTorchJob).
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor_impl.hpp"

namespace kozmo::watch {
template caf::actor spawn_watch<k8s::custom_object>(caf::actor_system&, std::shared_ptr<client::client>, watch_config);
} // namespace kozmo::watch
