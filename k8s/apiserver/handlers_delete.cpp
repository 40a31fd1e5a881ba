// DELETE of one object and of a collection. DeleteOptions come from the body or the query
// (gracePeriodSeconds, propagationPolicy, orphanDependents, preconditions).
#include "k8s/apiserver/encoding.hpp"
#include "k8s/apiserver/handlers.hpp"
#include "k8s/apiserver/selection.hpp"

namespace kozmo::apiserver {
namespace {

// Kinds whose registry returns the deleted object instead of a Status (ReturnDeletedObject).
bool returns_deleted_object(const resource_type& rt) {
  return rt.builtin && (rt.kind == "Pod" || rt.kind == "Service" || rt.kind == "Namespace");
}

using options_or_error = std::variant<delete_options, api_error>;

options_or_error parse_delete_options(const request_context& ctx) {
  delete_options opts;
  const auto& t = ctx.target;
  if (t.has("gracePeriodSeconds")) {
    auto g = parse_int(t.param("gracePeriodSeconds"));
    if (!g)
      return bad_request("gracePeriodSeconds: invalid value " + go_quote(t.param("gracePeriodSeconds")));
    opts.grace_period_seconds = *g;
  }
  opts.propagation = t.param("propagationPolicy");
  if (t.has("orphanDependents") && opts.propagation.empty())
    opts.propagation = t.flag("orphanDependents") ? "Orphan" : "Background";

  std::string_view body = ctx.req.body;
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body.front())))
    body.remove_prefix(1);
  if (!body.empty()) {
    auto parsed = json::parse(body);
    if (!parsed || !parsed->is_object())
      return bad_request("the body of the request was in an unknown format - accepted media types include: "
                         "application/json, application/yaml, application/vnd.kubernetes.protobuf");
    const json::value& o = *parsed;
    if (const auto* g = o.find("gracePeriodSeconds"); g && g->is_int())
      opts.grace_period_seconds = g->as_int();
    if (const auto* p = o.find("propagationPolicy"); p && p->is_string())
      opts.propagation = p->as_string();
    if (const auto* orphan = o.find("orphanDependents"); orphan && orphan->is_bool() && opts.propagation.empty())
      opts.propagation = orphan->as_bool() ? "Orphan" : "Background";
    if (const auto* pre = o.find("preconditions"); pre && pre->is_object()) {
      opts.precondition_uid = pre->get_string("uid");
      opts.precondition_rv = pre->get_string("resourceVersion");
    }
  }
  if (!opts.propagation.empty() && opts.propagation != "Orphan" && opts.propagation != "Background" &&
      opts.propagation != "Foreground") {
    resource_type options_type = *ctx.rt;
    options_type.kind = "DeleteOptions";
    return invalid_error(options_type, "",
                         {field_error::not_supported("propagationPolicy", opts.propagation,
                                                     {"Foreground", "Background", "Orphan"})});
  }
  return opts;
}

} // namespace

route_result handle_delete(const request_context& ctx) {
  auto parsed = parse_delete_options(ctx);
  if (auto* e = std::get_if<api_error>(&parsed))
    return status_response(*e);
  const auto& opts = std::get<delete_options>(parsed);
  if (ctx.target.param("dryRun") == "All") {
    auto obj = ctx.st.get(*ctx.rt, ctx.ns, ctx.name);
    if (!obj)
      return status_response(not_found_error(*ctx.rt, ctx.name));
    return object_response(ctx, 200, **obj);
  }
  auto outcome = ctx.st.remove(*ctx.rt, ctx.ns, ctx.name, opts);
  if (!outcome) {
    if (outcome.err().code == 404)
      return status_response(not_found_error(*ctx.rt, ctx.name));
    return status_response(from_store_error(outcome.err(), *ctx.rt, ctx.name));
  }
  if (returns_deleted_object(*ctx.rt) || !outcome->removed)
    return object_response(ctx, 200, *outcome->object);
  json::object details{{"name", ctx.name}};
  if (!ctx.rt->group.empty())
    details.set("group", ctx.rt->group);
  details.set("kind", ctx.rt->plural);
  details.set("uid", outcome->object->at_path({"metadata", "uid"}) ? *outcome->object->at_path({"metadata", "uid"})
                                                                     : json::value(""));
  return success_response(200, json::value(std::move(details)));
}

route_result handle_delete_collection(const request_context& ctx) {
  auto parsed = parse_delete_options(ctx);
  if (auto* e = std::get_if<api_error>(&parsed))
    return status_response(*e);
  const auto& opts = std::get<delete_options>(parsed);
  auto selection = make_selection(*ctx.rt, ctx.target.param("labelSelector"), ctx.target.param("fieldSelector"));
  if (!selection)
    return status_response(bad_request(selection.err().message));
  list_page page = ctx.st.list(*ctx.rt, ctx.has_ns ? ctx.ns : std::string(), *selection);
  std::vector<object_ptr> deleted;
  for (const auto& obj : page.items) {
    const json::value* m = obj->find("metadata");
    auto outcome = ctx.st.remove(*ctx.rt, m ? m->get_string("namespace") : std::string(),
                                 m ? m->get_string("name") : std::string(), opts);
    if (outcome)
      deleted.push_back(outcome->object);
  }
  http_response res;
  res.set_header("Content-Type", "application/json");
  res.body = encode_list(*ctx.rt, ctx.version, json::object{{"resourceVersion", std::to_string(ctx.st.current_rv())}},
                         deleted);
  return res;
}

} // namespace kozmo::apiserver
