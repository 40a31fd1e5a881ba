// Plain descriptions of what a request addresses and how: a resource reference and the
// options of list, watch, patch and delete. No I/O here; `paths.hpp` turns them into URLs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kozmo::client {

// One resource or a collection of them. Core kinds have group "" (served under /api/v1),
// others /apis/<group>/<version>. `ns` empty = cluster-scoped (or all namespaces for a
// list/watch); `name` empty = the collection.
struct resource_ref {
  std::string group;
  std::string version;
  std::string resource;  // plural, lower case: "pods", "pytorchjobs"
  std::string ns;
  std::string name;
  std::string subresource;  // "status", "binding", "scale", ...
};

struct list_options {
  std::string label_selector;
  std::string field_selector;
  std::int64_t limit = 0;  // 0 = no limit
  std::string continue_token;
  std::string resource_version;
};

struct watch_options {
  std::string resource_version;
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;
  std::int64_t timeout_seconds = 0;  // 0 = let the server choose
};

enum class patch_type { merge, json, strategic, apply };

// Extra query parameters of a patch. Server-side apply requires a field manager; when empty
// the client sends "kozmo".
struct patch_options {
  std::string field_manager;
  bool force = false;  // apply only: take ownership of conflicting fields
};

struct delete_options {
  std::optional<std::int64_t> grace_period_seconds;
  std::string propagation_policy;  // "Foreground", "Background", "Orphan" or empty
  std::string precondition_uid;
  std::string precondition_resource_version;
};

// A pod-to-node binding (POST pods/NAME/binding). The API server copies `annotations` onto
// the pod and refuses the binding when `pod_uid` is set and no longer matches.
struct binding {
  std::string ns;
  std::string pod;
  std::string node;
  std::string pod_uid;
  std::map<std::string, std::string> annotations;
};

} // namespace kozmo::client
