// Discovery documents (/version, /api, /apis, /apis/<g>, /api/v1, /apis/<g>/<v>) and the
// OpenAPI v3 documents kubectl fetches before create/apply (shared/reference/k8s-wire.md §2, §4).
//
// Only the legacy (non-aggregated) discovery format is served, with Content-Type
// application/json, whatever the Accept header asks: kubectl then falls back to per
// group-version requests, as it does against kube-apiserver 1.20.
#pragma once

#include "k8s/apiserver/http_types.hpp"
#include "k8s/apiserver/store.hpp"

#include <optional>
#include <string>

namespace kozmo::apiserver {

// The version the server reports; minor 32 makes the kubectl dispatcher pick kubectl 1.32.
http_response version_response();
http_response api_versions_response(const std::string& server_address);
http_response api_group_list_response(const store& s);
std::optional<http_response> api_group_response(const store& s, const std::string& group);
std::optional<http_response> resource_list_response(const store& s, const std::string& group, const std::string& version);

// GET /openapi/v3 and /openapi/v3/<api/v1 | apis/g/v>. Each group-version document lists, per
// resource path, the operations with x-kubernetes-group-version-kind and a fieldValidation
// query parameter, which tells kubectl to leave unknown-field checks to this server.
std::optional<http_response> openapi_v3_response(const store& s, const std::string& path);

} // namespace kozmo::apiserver
