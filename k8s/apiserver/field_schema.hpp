// Which fields an object may carry, for `fieldValidation` (Strict / Warn / Ignore) and for
// pruning, plus schema validation of custom resources against their CRD's openAPIV3Schema.
//
// Built-in kinds use a table of the fields of the Go types we serve (Pod with PodSpec and
// Container, Node, Service, ConfigMap, Secret, Namespace, Event, PodTemplate, Lease, CRD, ...).
// The table is exact where it declares a struct; below that (volumes, probes, affinity,
// status...) values are opaque and never reported, so a legitimate field is never rejected
// because the table does not know it.
#pragma once

#include "k8s/apiserver/resource_types.hpp"
#include "k8s/apiserver/status.hpp"
#include "k8s/json/value.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kozmo::apiserver {

enum class field_validation { ignore, warn, strict };

// Unknown fields of `obj` as Kubernetes names them ("spec.containers[0].bogusField"), in
// document order; with `prune`, they are removed from `obj` as well.
std::vector<std::string> find_unknown_fields(const resource_type& rt, std::string_view version, json::value& obj,
                                             bool prune);

// Custom resources: nulls of non-nullable fields dropped and defaults applied (in place), then
// the schema's value validations as 422 Invalid causes (see structural.hpp); on an update
// (`old` the stored object) also the transition rule `self == oldSelf` (transition_rules.hpp).
std::vector<field_error> validate_custom_resource(const resource_type& rt, std::string_view version,
                                                  json::value& obj, const json::value* old = nullptr);

// The built-in table as an OpenAPI v3 schema for `kind` (properties only; opaque parts as
// {"x-kubernetes-preserve-unknown-fields": true}), or null when the kind has no table.
json::value builtin_openapi_schema(std::string_view kind);

} // namespace kozmo::apiserver
