// Path → handler. Paths follow kube-apiserver's layout:
//   /api/v1/<resource>[/<name>[/<sub>]]                         cluster-scoped, or all namespaces
//   /api/v1/namespaces/<ns>/<resource>[/<name>[/<sub>]]         namespaced
//   /apis/<group>/<version>/...                                  the same for named groups
//   /api/v1/watch/...                                            legacy watch prefix
#include "k8s/apiserver/discovery.hpp"
#include "k8s/apiserver/handlers.hpp"

namespace kozmo::apiserver {
namespace {

http_response text_response(int status, std::string body) {
  http_response res;
  res.status = status;
  res.set_header("Content-Type", "text/plain; charset=utf-8");
  res.body = std::move(body);
  return res;
}

route_result not_found() { return status_response(unknown_path_error()); }

route_result discovery(const http_request& req, const parsed_target& t, const store& s) {
  const auto& seg = t.segments;
  if (req.method != "GET" && req.method != "HEAD")
    return status_response(method_not_allowed());
  if (seg[0] == "api") {
    if (seg.size() == 1) {
      std::string host = req.header("Host");
      return api_versions_response(host.empty() ? "127.0.0.1" : host);
    }
    if (auto r = resource_list_response(s, "", seg[1]))
      return *r;
    return not_found();
  }
  if (seg.size() == 1)
    return api_group_list_response(s);
  if (seg.size() == 2) {
    if (auto r = api_group_response(s, seg[1]))
      return *r;
    return not_found();
  }
  if (auto r = resource_list_response(s, seg[1], seg[2]))
    return *r;
  return not_found();
}

} // namespace

route_result router::handle(const http_request& req) const {
  parsed_target t = parse_target(req.target);
  const auto& seg = t.segments;
  if (seg.empty())
    return not_found();
  if (seg[0] == "version" && seg.size() == 1)
    return version_response();
  if ((seg[0] == "healthz" || seg[0] == "livez" || seg[0] == "readyz") && seg.size() == 1)
    return text_response(200, "ok");
  if (seg[0] == "openapi") {
    if (seg.size() >= 2 && seg[1] == "v3") {
      std::string rest;
      for (std::size_t i = 2; i < seg.size(); ++i)
        rest += (i > 2 ? "/" : "") + seg[i];
      if (auto r = openapi_v3_response(store_, rest))
        return *r;
    }
    return not_found();
  }
  if (seg[0] != "api" && seg[0] != "apis")
    return not_found();

  // Where the resource part of the path starts.
  std::size_t base = seg[0] == "api" ? 2 : 3;
  if (seg.size() <= base)
    return discovery(req, t, store_);
  std::string group = seg[0] == "api" ? std::string() : seg[1];
  std::string version = seg[0] == "api" ? seg[1] : seg[2];
  if (seg[0] == "api" && seg[1] != "v1")
    return not_found();

  std::vector<std::string> rest(seg.begin() + static_cast<std::ptrdiff_t>(base), seg.end());
  bool legacy_watch = false;
  if (rest[0] == "watch") {
    legacy_watch = true;
    rest.erase(rest.begin());
    if (rest.empty())
      return not_found();
  }

  std::string ns, plural, name, sub;
  bool has_ns = false;
  if (rest[0] == "namespaces" && rest.size() >= 3 && rest[2] != "status" && rest[2] != "finalize") {
    if (rest.size() > 5)
      return not_found();
    has_ns = true;
    ns = rest[1];
    plural = rest[2];
    name = rest.size() > 3 ? rest[3] : "";
    sub = rest.size() > 4 ? rest[4] : "";
  } else {
    if (rest.size() > 3)
      return not_found();
    plural = rest[0];
    name = rest.size() > 1 ? rest[1] : "";
    sub = rest.size() > 2 ? rest[2] : "";
  }

  // POST /api/v1/namespaces/<ns>/bindings: the legacy binding endpoint.
  if (group.empty() && plural == "bindings" && has_ns && name.empty()) {
    if (req.method != "POST")
      return status_response(method_not_allowed());
    auto pods = store_.resolve("", "v1", "pods");
    request_context ctx{req, t, store_, pods, version, ns, true, "", "binding"};
    return handle_binding(ctx);
  }

  resource_ptr rt = store_.resolve(group, version, plural);
  if (!rt)
    return not_found();
  if (has_ns && !rt->namespaced)
    return not_found();
  if (rt->namespaced && !has_ns && !name.empty())
    return not_found();
  if (sub == "log" && rt->builtin && rt->kind == "Pod" && has_ns && !name.empty()) {
    request_context ctx{req, t, store_, rt, version, ns, has_ns, name, sub};
    return handle_pod_log(ctx, pod_logs_root_);
  }
  if (!sub.empty()) {
    const crd_version* cv = rt->crd_version_of(version);
    bool status_ok = cv ? cv->status_subresource : rt->status_subresource;
    bool known = (sub == "status" && status_ok) || (sub == "binding" && rt->binding_subresource) ||
                 (sub == "finalize" && rt->builtin && rt->kind == "Namespace");
    if (!known)
      return not_found();
  }
  request_context ctx{req, t, store_, rt, version, ns, has_ns, name, sub};

  bool watch = legacy_watch || t.flag("watch");
  const std::string& m = req.method;
  if (m == "GET" || m == "HEAD") {
    if (watch)
      return handle_watch(ctx);
    return name.empty() ? handle_list(ctx) : handle_get(ctx);
  }
  if (m == "POST") {
    if (sub == "binding")
      return handle_binding(ctx);
    if (!name.empty())
      return status_response(method_not_allowed());
    return handle_create(ctx);
  }
  if (m == "PUT")
    return name.empty() ? route_result(status_response(method_not_allowed())) : handle_update(ctx);
  if (m == "PATCH")
    return name.empty() ? route_result(status_response(method_not_allowed())) : handle_patch(ctx);
  if (m == "DELETE") {
    if (!sub.empty())
      return status_response(method_not_allowed());
    return name.empty() ? handle_delete_collection(ctx) : handle_delete(ctx);
  }
  return status_response(method_not_allowed());
}

} // namespace kozmo::apiserver
