// The registry strategies of PersistentVolumeClaim, PersistentVolume, ResourceQuota and
// LimitRange (strategy.cpp calls these for those kinds): defaults and the starting status on
// create, validation with kube-apiserver's messages.
#pragma once

#include "k8s/apiserver/resource_types.hpp"
#include "k8s/apiserver/status.hpp"
#include "k8s/json/value.hpp"

#include <vector>

namespace kozmo::apiserver {

bool storage_kind(const resource_type& rt);
void prepare_storage_for_create(const resource_type& rt, json::value& obj);
void validate_storage(const resource_type& rt, const json::value& obj, const json::value* old,
                      std::vector<field_error>& errs);

} // namespace kozmo::apiserver
