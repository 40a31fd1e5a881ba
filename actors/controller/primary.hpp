// A controller's primary object (the job, the task) as its actor holds it: the copy it keeps
// current from answers and watch events, and the reference its Events name. Pure.
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/object_meta.hpp"

#include <memory>
#include <string>

namespace kozmo::controller {

// An Event's subject: the object itself.
k8s::object_reference reference_to(const k8s::custom_object& obj);

// `obj` with the kind and apiVersion that a LIST item or a subresource's answer may leave out
// (the same pointer when it has them).
std::shared_ptr<const k8s::custom_object> with_kind(std::shared_ptr<const k8s::custom_object> obj,
                                                    const std::string& kind, const std::string& api_version);

// A newer copy of `current` from an answer or a re-read (with_kind filled from `current`); null
// when `doc` is not that object (another uid) or is older than `current`.
std::shared_ptr<const k8s::custom_object> newer_copy(const k8s::custom_object& current, json::value&& doc);

} // namespace kozmo::controller
