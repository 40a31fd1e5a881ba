// Private to the router's translation units: one function per verb.
#pragma once

#include "k8s/apiserver/field_schema.hpp"
#include "k8s/apiserver/request_util.hpp"
#include "k8s/apiserver/router.hpp"
#include "k8s/apiserver/status.hpp"

#include <variant>

namespace kozmo::apiserver {

struct request_context {
  const http_request& req;
  const parsed_target& target;
  store& st;
  resource_ptr rt;
  std::string version;
  std::string ns;           // from the path ("" when none)
  bool has_ns = false;
  std::string name;         // from the path
  std::string subresource;  // "status", "binding", "finalize" or ""
};

route_result handle_get(const request_context& ctx);
route_result handle_list(const request_context& ctx);
route_result handle_watch(const request_context& ctx);
route_result handle_create(const request_context& ctx);
route_result handle_update(const request_context& ctx);
route_result handle_patch(const request_context& ctx);
route_result handle_delete(const request_context& ctx);
route_result handle_delete_collection(const request_context& ctx);
// POST pods/<name>/binding, or POST namespaces/<ns>/bindings (ctx.rt = pods, ctx.name = "").
route_result handle_binding(const request_context& ctx);
// GET pods/<name>/log (handlers_log.cpp): the process runtime's logs under `logs_root`
// (pod_log_layout.hpp; "" = none kept); a log_stream when following a running container.
route_result handle_pod_log(const request_context& ctx, const std::string& logs_root);

// A decoded request body (JSON, YAML or protobuf), or the Status to answer with.
using decoded_body = std::variant<json::value, api_error>;
decoded_body decode_object_body(const request_context& ctx);

// fieldValidation handling for a body about to be stored: prunes unknown fields; in Strict
// mode returns the 400 to answer with; in Warn mode adds Warning headers to `warnings`.
std::optional<api_error> apply_field_validation(const request_context& ctx, json::value& obj,
                                                std::vector<std::string>& warnings, bool server_side_apply = false);

http_response object_response(const request_context& ctx, int status, const json::value& obj);
void add_warnings(http_response& res, const std::vector<std::string>& warnings);

} // namespace kozmo::apiserver
