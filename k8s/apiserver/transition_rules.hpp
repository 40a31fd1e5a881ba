// Transition rules of custom resources: the `x-kubernetes-validations` entries of a CRD schema
// that compare a field with its stored value on update. Kozmo has no CEL interpreter, so it
// evaluates exactly one rule, `self == oldSelf` (whitespace aside), the rule Kubernetes >= 1.25
// and kubebuilder's "field is immutable" markers use; every other rule (CEL on self alone,
// messageExpression, other transitions) is accepted in the CRD and NOT evaluated, on create or
// update (docs/trainer.md says so). Kubernetes 1.20-1.24 evaluate none of them.
//
// As in Kubernetes, a rule is checked only where both the new and the stored object hold the
// field (adding or removing it is not a transition): through object properties, through
// additionalProperties by key, and through `x-kubernetes-list-type: map` lists by their keys;
// the items of other lists are not correlated. A broken rule is a 422 cause named after the field
// ("spec.trainer: Invalid value: \"object\": field is immutable"). Pure: no I/O.
#pragma once

#include "k8s/apiserver/status.hpp"
#include "k8s/json/value.hpp"

#include <string_view>
#include <vector>

namespace kozmo::apiserver {

// Whether `rule` is `self == oldSelf`, spaces, tabs and newlines aside.
bool is_immutability_rule(std::string_view rule);

// The causes of a 422 for an update of a whole custom resource from `old` to `obj` under the
// version's openAPIV3Schema `schema` (both objects already defaulted).
std::vector<field_error> check_transition_rules(const json::value& schema, const json::value& obj,
                                                const json::value& old);

} // namespace kozmo::apiserver
