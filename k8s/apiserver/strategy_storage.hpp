// The registry strategies of PersistentVolumeClaim, PersistentVolume, ResourceQuota, LimitRange
// and StorageClass (strategy.cpp calls these for those kinds): defaults and the starting status
// on create, validation with kube-apiserver's messages; and the DefaultStorageClass admission
// plugin's rule (the create handler calls it for claims).
#pragma once

#include "k8s/apiserver/resource_types.hpp"
#include "k8s/apiserver/status.hpp"
#include "k8s/json/value.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::apiserver {

bool storage_kind(const resource_type& rt);
void prepare_storage_for_create(const resource_type& rt, json::value& obj);
void validate_storage(const resource_type& rt, const json::value& obj, const json::value* old,
                      std::vector<field_error>& errs);

// The default StorageClass among `classes`: annotated storageclass.kubernetes.io/is-default-class
// "true" (or the beta key); when several are, the newest, as kube-apiserver >= 1.26 picks.
std::optional<std::string> default_storage_class(const std::vector<std::shared_ptr<const json::value>>& classes);

// DefaultStorageClass admission: a new claim that does not set spec.storageClassName (absent,
// not ""; nor the beta annotation) gets the default class, when there is one.
void set_default_storage_class(json::value& pvc, const std::vector<std::shared_ptr<const json::value>>& classes);

} // namespace kozmo::apiserver
