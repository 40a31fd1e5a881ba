// URL paths and query strings of the Kubernetes REST API, built from `resource_ref` and the
// option structs. Pure functions: the client uses them, and tests check them directly.
#pragma once

#include "k8s/client/resource.hpp"

#include <string>
#include <string_view>

namespace kozmo::client {

// "/api/v1" for the core group, "/apis/<group>/<version>" otherwise.
std::string api_prefix(std::string_view group, std::string_view version);

// The path of `ref`: prefix [/namespaces/NS]/resource[/name[/subresource]].
// A namespace object itself is `{resource: "namespaces", name: NS}` with `ns` empty.
std::string resource_path(const resource_ref& ref);

// The path of the collection `ref` belongs to (name and subresource dropped).
std::string collection_path(const resource_ref& ref);

// Builds "?a=b&c=d" step by step; empty when nothing was added.
class query_builder {
public:
  query_builder& add(std::string_view key, std::string_view value);
  // Adds only when `value` is not empty.
  query_builder& add_if(std::string_view key, std::string_view value);
  const std::string& str() const { return q_; }

private:
  std::string q_;
};

// "?labelSelector=...&limit=..." for a list; empty when no option is set.
std::string list_query(const list_options& opts);
// "?watch=1&..." for a watch.
std::string watch_query(const watch_options& opts);

// The Content-Type of a patch body.
std::string_view patch_content_type(patch_type t);

} // namespace kozmo::client
