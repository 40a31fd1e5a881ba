// Structural schemas of custom resources (a CRD version's openAPIV3Schema), applied the way
// kube-apiextensions v1.20 applies them to an object after pruning:
//   1. null values of fields that are not `nullable` are dropped;
//   2. `default`s fill fields that are absent, outside-in (a defaulted object gets its own
//      members' defaults), inside arrays and maps too; metadata is never defaulted;
//   3. the value validations (type, enum, bounds, lengths, pattern, format, anyOf/allOf/oneOf/
//      not, list types) give 422 causes named the way kube-apiserver names them.
// Pruning of unknown fields lives in field_schema (it also serves built-in kinds).
#pragma once

#include "k8s/apiserver/status.hpp"
#include "k8s/json/value.hpp"

#include <vector>

namespace kozmo::apiserver {

// Steps 1 and 2 on a whole custom resource; returns whether anything changed.
bool default_custom_resource(const json::value& schema, json::value& obj);

// Step 3 on a whole custom resource (apiVersion, kind and metadata are checked elsewhere).
std::vector<field_error> check_custom_resource(const json::value& schema, const json::value& obj);

// What a CRD's schemas may not say (uniqueItems, defaults that fail their own schema, list-map
// keys neither required nor defaulted), as 422 causes under v1.20's paths.
std::vector<field_error> check_crd_schemas(const json::value& crd);

// Whether the schema declares any `default` (so stored objects need defaulting when it changes).
bool schema_has_defaults(const json::value& schema);

} // namespace kozmo::apiserver
