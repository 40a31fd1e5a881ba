// Kubernetes `Status` responses: every error the server returns is one of these, with the
// reasons, messages and details kube-apiserver uses (shared/reference/k8s-wire.md §8).
#pragma once

#include "k8s/apiserver/http_types.hpp"
#include "k8s/apiserver/resource_types.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <string>
#include <vector>

namespace kozmo::apiserver {

// An API error on its way to the wire. `details` null = no "details" member.
struct api_error {
  int code = 500;
  std::string reason;
  std::string message;
  json::value details;
};

// One field problem of a 422 Invalid (k8s.io/apimachinery field.Error).
struct field_error {
  std::string field;   // "spec.containers[0].image"
  std::string reason;  // "FieldValueRequired", "FieldValueInvalid", ...
  std::string detail;  // "Required value", "Invalid value: \"x\": must be ..."

  static field_error required(std::string field, std::string why = {});
  static field_error invalid(std::string field, const std::string& value_repr, std::string why);
  static field_error not_supported(std::string field, const std::string& value, const std::vector<std::string>& supported);
  static field_error duplicate(std::string field, const std::string& value);
  static field_error forbidden(std::string field, std::string why);
};

http_response status_response(const api_error& e);
// {"kind":"Status",...,"status":"Success",...}; `code` 0 = no "code" member.
http_response success_response(int http_status, json::value details, int code = 0);

// Builders for the common errors. `rt` names the resource in details ("pods", group).
api_error not_found_error(const resource_type& rt, const std::string& name);
api_error unknown_path_error();
api_error bad_request(std::string message);
api_error method_not_allowed();
api_error invalid_error(const resource_type& rt, const std::string& name, const std::vector<field_error>& errors);
// A store error (kozmo::error) with the details Kubernetes attaches for this resource and name.
api_error from_store_error(const error& e, const resource_type& rt, const std::string& name);

// "Pod" for core kinds, "Gizmo.wire.example.com" for others: how Invalid messages name a kind.
std::string qualified_kind(const resource_type& rt);
// "pods", "widgets.example.com": how NotFound/Conflict messages name a resource.
std::string qualified_resource(const resource_type& rt);
// Go's %q of a string (for messages).
std::string go_quote(std::string_view s);

} // namespace kozmo::apiserver
