#include "k8s/apiserver/status.hpp"

#include "k8s/text.hpp"

#include <cctype>

namespace kozmo::apiserver {

bool iequals(std::string_view a, std::string_view b) { return text::iequals(a, b); }

std::string http_request::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name))
      return v;
  return {};
}

void http_response::set_header(std::string name, std::string value) {
  for (auto& [k, v] : headers)
    if (iequals(k, name)) {
      v = std::move(value);
      return;
    }
  headers.emplace_back(std::move(name), std::move(value));
}

std::string http_response::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name))
      return v;
  return {};
}

std::string go_quote(std::string_view s) {
  std::string out;
  json::write_string(out, s);
  return out;
}

field_error field_error::required(std::string field, std::string why) {
  return {std::move(field), "FieldValueRequired", why.empty() ? "Required value" : "Required value: " + why};
}

field_error field_error::invalid(std::string field, const std::string& value_repr, std::string why) {
  return {std::move(field), "FieldValueInvalid", "Invalid value: " + value_repr + (why.empty() ? "" : ": " + why)};
}

field_error field_error::not_supported(std::string field, const std::string& value,
                                       const std::vector<std::string>& supported) {
  std::string msg = "Unsupported value: " + go_quote(value);
  if (!supported.empty()) {
    msg += ": supported values: ";
    for (std::size_t i = 0; i < supported.size(); ++i)
      msg += (i ? ", " : "") + go_quote(supported[i]);
  }
  return {std::move(field), "FieldValueNotSupported", msg};
}

field_error field_error::duplicate(std::string field, const std::string& value) {
  return {std::move(field), "FieldValueDuplicate", "Duplicate value: " + go_quote(value)};
}

field_error field_error::forbidden(std::string field, std::string why) {
  return {std::move(field), "FieldValueForbidden", "Forbidden: " + why};
}

http_response status_response(const api_error& e) {
  json::object status{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object{}},
                      {"status", "Failure"},  {"message", e.message}, {"reason", e.reason}};
  if (!e.details.is_null())
    status.set("details", e.details);
  status.set("code", e.code);
  http_response res;
  res.status = e.code;
  res.set_header("Content-Type", "application/json");
  res.body = json::dump(json::value(std::move(status)));
  return res;
}

http_response success_response(int http_status, json::value details, int code) {
  json::object status{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object{}}, {"status", "Success"}};
  if (!details.is_null())
    status.set("details", std::move(details));
  if (code)
    status.set("code", code);
  http_response res;
  res.status = http_status;
  res.set_header("Content-Type", "application/json");
  res.body = json::dump(json::value(std::move(status)));
  return res;
}

std::string qualified_kind(const resource_type& rt) { return rt.group.empty() ? rt.kind : rt.kind + "." + rt.group; }

std::string qualified_resource(const resource_type& rt) {
  return rt.group.empty() ? rt.plural : rt.plural + "." + rt.group;
}

namespace {
json::value resource_details(const resource_type& rt, const std::string& name, std::string_view kind_override = {}) {
  json::object d;
  if (!name.empty())
    d.set("name", name);
  if (!rt.group.empty())
    d.set("group", rt.group);
  d.set("kind", kind_override.empty() ? rt.plural : std::string(kind_override));
  return d;
}
} // namespace

api_error not_found_error(const resource_type& rt, const std::string& name) {
  return {404, "NotFound", qualified_resource(rt) + " " + go_quote(name) + " not found", resource_details(rt, name)};
}

api_error unknown_path_error() {
  return {404, "NotFound", "the server could not find the requested resource", json::object{}};
}

api_error bad_request(std::string message) { return {400, "BadRequest", std::move(message), nullptr}; }

api_error method_not_allowed() {
  return {405, "MethodNotAllowed", "the server does not allow this method on the requested resource", json::object{}};
}

api_error invalid_error(const resource_type& rt, const std::string& name, const std::vector<field_error>& errors) {
  std::string msg = qualified_kind(rt) + " " + go_quote(name) + " is invalid: ";
  if (errors.size() == 1) {
    msg += errors[0].field + ": " + errors[0].detail;
  } else {
    msg += "[";
    for (std::size_t i = 0; i < errors.size(); ++i)
      msg += (i ? ", " : "") + errors[i].field + ": " + errors[i].detail;
    msg += "]";
  }
  json::array causes;
  for (const auto& e : errors)
    causes.push_back(json::object{{"reason", e.reason}, {"message", e.detail}, {"field", e.field}});
  json::value details = resource_details(rt, name, rt.kind);
  details.as_object().set("causes", std::move(causes));
  return {422, "Invalid", msg, std::move(details)};
}

api_error from_store_error(const error& e, const resource_type& rt, const std::string& name) {
  api_error out{e.code ? e.code : 500, e.reason.empty() ? "InternalError" : e.reason, e.message, nullptr};
  if (e.code == 404 && e.message.rfind("namespaces \"", 0) == 0) {
    // Creating in a missing namespace names the namespace, not the object.
    auto q = e.message.find('"');
    std::string ns = e.message.substr(q + 1, e.message.find('"', q + 1) - q - 1);
    out.details = json::object{{"name", ns}, {"kind", "namespaces"}};
    return out;
  }
  switch (e.code) {
  case 404:
  case 409:
    out.details = resource_details(rt, name);
    break;
  case 422: {
    // Store-level validation: one field error whose text is "field: detail".
    auto colon = e.message.find(": ");
    field_error fe{e.message.substr(0, colon), "FieldValueInvalid",
                   colon == std::string::npos ? e.message : e.message.substr(colon + 2)};
    if (fe.detail.rfind("Required value", 0) == 0)
      fe.reason = "FieldValueRequired";
    else if (fe.detail.rfind("Forbidden", 0) == 0)
      fe.reason = "FieldValueForbidden";
    return invalid_error(rt, name, {fe});
  }
  case 403:
  case 410:
    out.details = resource_details(rt, name);
    break;
  default:
    break;
  }
  return out;
}

} // namespace kozmo::apiserver
