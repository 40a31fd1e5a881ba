// Request bodies in the media types kube-apiserver accepts: JSON, YAML, and the Kubernetes
// protobuf envelope that kubectl's generator commands send (`create namespace`, `create
// configmap`, `create secret generic`; shared/reference/k8s-wire.md §5). Protobuf is decoded
// for Namespace, ConfigMap, Secret, ServiceAccount, ResourceQuota, Role and RoleBinding into the
// equivalent JSON object.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <string_view>

namespace kozmo::apiserver {

// One YAML document as JSON (plain scalars typed as YAML 1.1 core: true/false, null, numbers).
expected<json::value> yaml_to_json(std::string_view text);

// "k8s\0" + runtime.Unknown{TypeMeta, raw} → {"apiVersion":...,"kind":...,...}. Errors say
// which kind is not supported or where the bytes stop making sense.
expected<json::value> decode_protobuf_object(std::string_view body);

} // namespace kozmo::apiserver
