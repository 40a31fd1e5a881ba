// Patches on json::value documents, as a Kubernetes API server applies them.
//
//   application/merge-patch+json           apply_merge_patch     (RFC 7386)
//   application/json-patch+json            apply_json_patch      (RFC 6902)
//   application/strategic-merge-patch+json apply_strategic_patch (Kubernetes SMP, built-in kinds)
//
// All three leave `target` untouched and return a new document, or an error whose message
// says what is wrong with the patch (HTTP 400/422 at the server).
#pragma once

#include "k8s/json/value.hpp"

#include <string>
#include <string_view>

namespace kozmo::json {

// RFC 7386: objects merge recursively, null deletes a key, anything else replaces.
value apply_merge_patch(const value& target, const value& patch);

// The merge patch that turns `original` into `modified` (the inverse of apply_merge_patch):
// changed members, nested objects as their own diffs, removed members as null. Arrays are
// replaced whole. A JSON null in `modified` cannot be expressed and is treated as removal.
value create_merge_patch(const value& original, const value& modified);

// RFC 6902 operations add/remove/replace/move/copy/test with JSON Pointer paths (RFC 6901).
// A failed `test` or a path that does not exist is an error; nothing is applied then. As
// kube-apiserver bounds them: at most 10000 operations (else a 413 error), and what `copy`
// operations copy in all at most a million nodes (copies can double a document each time).
inline constexpr std::size_t max_json_patch_operations = 10000;
inline constexpr std::size_t max_json_patch_copied_nodes = 1000000;
expected<value> apply_json_patch(const value& target, const value& patch);

// Strategic merge patch for a built-in kind ("Pod", "Node", "Service", "ConfigMap", "Secret",
// "Namespace", "Event", "PodTemplate", "Lease", ...; `kind` is the object's kind).
// Lists tagged with a patch strategy in Kubernetes' Go types merge by their key (containers by
// name, env by name, ports by containerPort, conditions by type, ...); untagged lists are
// replaced. Supports the directives $patch (replace/merge/delete), $retainKeys,
// $setElementOrder/<field> and $deleteFromPrimitiveList/<field>, and null deletion.
// See shared/reference/strategic-merge-patch.md.
expected<value> apply_strategic_patch(const value& target, const value& patch, std::string_view kind);

// Whether `kind` is one for which strategic merge patch is defined (built-in kinds). Custom
// resources answer false: the server rejects SMP for them with 415, as Kubernetes does.
bool strategic_patch_supported(std::string_view kind);

} // namespace kozmo::json
