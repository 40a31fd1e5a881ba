// Per-kind rules of kube-apiserver's registry strategies and admission plugins that decide what
// a write stores: defaults on create (pods, services, nodes, secrets), which parts of an
// object a write to the main resource or to /status may change, and validation (422 Invalid).
#pragma once

#include "k8s/apiserver/resource_types.hpp"
#include "k8s/apiserver/status.hpp"
#include "k8s/json/value.hpp"

#include <vector>

namespace kozmo::apiserver {

// Defaults and status reset for a new object (status is kept only for nodes and for kinds
// without a status subresource).
void prepare_for_create(const resource_type& rt, json::value& obj);

// A write to the main resource: kinds with a status subresource keep the stored status.
void prepare_for_update(const resource_type& rt, json::value& next, const json::value& old);

// A write to /status: only status, labels and annotations change.
void prepare_for_status_update(const resource_type& rt, json::value& next, const json::value& old);

// Validation of a new or updated object (`old` null on create). Empty = valid.
std::vector<field_error> validate_object(const resource_type& rt, const json::value& obj, const json::value* old);

// The pod QoS class of a pod spec ("BestEffort", "Burstable", "Guaranteed").
std::string pod_qos_class(const json::value& pod);

} // namespace kozmo::apiserver
