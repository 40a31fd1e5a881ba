// Label and field selectors of list and watch requests, turned into object predicates.
// The field labels each kind supports are the ones kube-apiserver registers
// (pods: spec.nodeName, status.phase, ...; events: involvedObject.*, ...).
#pragma once

#include "k8s/apiserver/resource_types.hpp"
#include "k8s/apiserver/store.hpp"
#include "k8s/error.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace kozmo::apiserver {

// An empty predicate when both selectors are empty. Errors are 400 BadRequest with
// Kubernetes' wording ("field label not supported: spec.foo", "unable to parse requirement...").
expected<object_predicate> make_selection(const resource_type& rt, std::string_view label_selector,
                                          std::string_view field_selector);

// The value of a supported field label on `obj` (missing fields read as ""), or nullopt when
// `field` is not a field label of this kind.
std::optional<std::string> field_label_value(const resource_type& rt, const json::value& obj, std::string_view field);

} // namespace kozmo::apiserver
