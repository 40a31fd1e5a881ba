// POST (create), PUT (update), PATCH and the pod binding subresource.
#include "k8s/apiserver/body_codec.hpp"
#include "k8s/apiserver/json_util.hpp"
#include "k8s/apiserver/encoding.hpp"
#include "k8s/apiserver/handlers.hpp"
#include "k8s/apiserver/strategy.hpp"
#include "k8s/apiserver/strategy_storage.hpp"

#include "k8s/json/patch.hpp"

namespace kozmo::apiserver {
namespace {

const char* const accepted_media =
    "the body of the request was in an unknown format - accepted media types include: application/json, "
    "application/yaml, application/vnd.kubernetes.protobuf";

std::string internal_group(const resource_type& rt) {
  return rt.group.empty() ? "core" : rt.group.substr(0, rt.group.find('.'));
}

// "/v1, Kind=ConfigMap" / "apps/v1, Kind=Deployment", as Go prints a GroupVersionKind.
std::string gvk_string(const resource_type& rt, const std::string& version) {
  return rt.group + "/" + version + ", Kind=" + rt.kind;
}

// dryRun=All: validate and answer as if written, store nothing (kubectl diff, --dry-run=server).
bool dry_run(const request_context& ctx) { return ctx.target.param("dryRun") == "All"; }

bool allows_create_on_update(const resource_type& rt) {
  return rt.builtin && (rt.kind == "Event" || rt.kind == "Endpoints" || rt.kind == "Lease");
}

std::string namespace_mismatch() {
  return "the namespace of the provided object does not match the namespace sent on the request";
}

// Everything a write does after the body is known: strategy, validation, store.
struct write_failure {
  std::optional<api_error> err;
};

std::vector<field_error> validate_for_write(const request_context& ctx, json::value& obj, const json::value* old) {
  std::vector<field_error> errs;
  if (!ctx.rt->builtin)
    errs = validate_custom_resource(*ctx.rt, ctx.version, obj, old);
  auto more = validate_object(*ctx.rt, obj, old);
  errs.insert(errs.end(), more.begin(), more.end());
  return errs;
}

std::string object_name(const json::value& obj) {
  const json::value* m = obj.find("metadata");
  return m ? m->get_string("name") : std::string();
}

route_result create_object(const request_context& ctx, json::value obj, std::vector<std::string> warnings) {
  const resource_type& rt = *ctx.rt;
  if (rt.namespaced) {
    std::string body_ns = obj.at_path({"metadata", "namespace"}) && obj.at_path({"metadata", "namespace"})->is_string()
                              ? obj.at_path({"metadata", "namespace"})->as_string()
                              : std::string();
    if (!body_ns.empty() && body_ns != ctx.ns)
      return status_response(bad_request(namespace_mismatch()));
  }
  prepare_for_create(rt, obj);
  if (rt.is_builtin("PersistentVolumeClaim"))
    if (auto classes = ctx.st.resolve("storage.k8s.io", "v1", "storageclasses"))
      set_default_storage_class(obj, ctx.st.list(*classes, "", {}).items);
  auto errs = validate_for_write(ctx, obj, nullptr);
  if (!errs.empty())
    return status_response(invalid_error(rt, object_name(obj), errs));
  auto created = ctx.st.create(rt, ctx.ns, std::move(obj), dry_run(ctx));
  if (!created)
    return status_response(from_store_error(created.err(), rt, object_name(obj)));
  auto res = object_response(ctx, 201, **created);
  add_warnings(res, warnings);
  return res;
}

// The stored object with kind/apiVersion, as patches see it.
json::value typed(const request_context& ctx, const json::value& stored) {
  json::object out{{"kind", ctx.rt->kind}, {"apiVersion", ctx.rt->api_version(ctx.version)}};
  if (stored.is_object())
    for (const auto& [k, v] : stored.as_object())
      out.set(k, v);
  return out;
}

// Applies the subresource rules and validation to a proposed new state.
expected<json::value> finish_update(const request_context& ctx, json::value next, const json::value& cur,
                                    write_failure& failure) {
  const resource_type& rt = *ctx.rt;
  if (ctx.subresource == "status") {
    prepare_for_status_update(rt, next, cur);
  } else if (ctx.subresource == "finalize") {
    // namespaces/<ns>/finalize changes spec.finalizers only.
    json::value result = cur;
    const json::value* f = next.at_path({"spec", "finalizers"});
    member_object(result, "spec").as_object().set("finalizers", f ? *f : json::value(json::array{}));
    if (const auto* rv = next.at_path({"metadata", "resourceVersion"}))
      member_object(result, "metadata").as_object().set("resourceVersion", *rv);
    next = std::move(result);
  } else {
    prepare_for_update(rt, next, cur);
  }
  auto errs = validate_for_write(ctx, next, &cur);
  if (!errs.empty()) {
    failure.err = invalid_error(rt, ctx.name, errs);
    return error::invalid("invalid");
  }
  return next;
}

} // namespace

decoded_body decode_object_body(const request_context& ctx) {
  const resource_type& rt = *ctx.rt;
  std::string ct = media_type(ctx.req.header("Content-Type"));
  std::string unrecognized = "the object provided is unrecognized (must be of type " + rt.kind + "): ";
  expected<json::value> parsed = json::value();
  if (ct.empty() || ct == "application/json") {
    parsed = json::parse(ctx.req.body);
  } else if (ct == "application/yaml") {
    parsed = yaml_to_json(ctx.req.body);
  } else if (ct == "application/vnd.kubernetes.protobuf") {
    parsed = decode_protobuf_object(ctx.req.body);
    if (!parsed && parsed.err().code == 415)
      return api_error{415, "UnsupportedMediaType", parsed.err().message, nullptr};
  } else {
    return api_error{415, "UnsupportedMediaType", accepted_media, nullptr};
  }
  if (!parsed)
    return bad_request(unrecognized + "couldn't get version/kind; " + parsed.err().message);
  json::value& body = *parsed;
  if (!body.is_object())
    return bad_request(unrecognized + "couldn't get version/kind; json parse error: expected a JSON object");
  std::string kind = body.get_string("kind");
  std::string api_version = body.get_string("apiVersion");
  std::string version = api_version.substr(api_version.find('/') == std::string::npos ? 0 : api_version.find('/') + 1);
  std::string group = api_version.find('/') == std::string::npos ? std::string() : api_version.substr(0, api_version.find('/'));
  if (!api_version.empty() && group != rt.group)
    return bad_request("the API version in the data (" + api_version + ") does not match the expected API version (" +
                       rt.api_version(ctx.version) + ")");
  if (!kind.empty() && kind != rt.kind)
    return bad_request(kind + " in version " + go_quote(version.empty() ? ctx.version : version) +
                       " cannot be handled as a " + rt.kind + ": converting (" + (version.empty() ? ctx.version : version) +
                       "." + kind + ") to (" + internal_group(rt) + "." + rt.kind + "): unknown conversion");
  if (const json::value* m = body.find("metadata"); m && !m->is_object())
    return bad_request(unrecognized + "json: cannot unmarshal " + (m->is_string() ? "string" : "value") +
                       " into Go struct field .metadata of type v1.ObjectMeta");
  return strip_type(std::move(body));
}

std::optional<api_error> apply_field_validation(const request_context& ctx, json::value& obj,
                                                std::vector<std::string>& warnings, bool server_side_apply) {
  std::string mode = ctx.target.param("fieldValidation");
  auto unknown = find_unknown_fields(*ctx.rt, ctx.version, obj, true);
  if (unknown.empty() || mode == "Ignore")
    return std::nullopt;
  if (mode == "Strict") {
    std::string msg;
    if (server_side_apply) {
      msg = "failed to create typed patch object (" + gvk_string(*ctx.rt, ctx.version) + "): ";
      for (std::size_t i = 0; i < unknown.size(); ++i)
        msg += (i ? ", " : "") + std::string(".") + unknown[i] + ": field not declared in schema";
    } else {
      msg = ctx.rt->kind + " in version " + go_quote(ctx.version) + " cannot be handled as a " + ctx.rt->kind +
            ": strict decoding error: ";
      for (std::size_t i = 0; i < unknown.size(); ++i)
        msg += (i ? ", " : "") + std::string("unknown field ") + go_quote(unknown[i]);
    }
    return bad_request(msg);
  }
  for (const auto& f : unknown)
    warnings.push_back("unknown field " + go_quote(f));
  return std::nullopt;
}

route_result handle_create(const request_context& ctx) {
  if (ctx.rt->namespaced && !ctx.has_ns)
    return status_response(method_not_allowed());
  auto body = decode_object_body(ctx);
  if (auto* e = std::get_if<api_error>(&body))
    return status_response(*e);
  json::value obj = std::move(std::get<json::value>(body));
  std::vector<std::string> warnings;
  if (auto e = apply_field_validation(ctx, obj, warnings))
    return status_response(*e);
  return create_object(ctx, std::move(obj), std::move(warnings));
}

route_result handle_update(const request_context& ctx) {
  auto body = decode_object_body(ctx);
  if (auto* e = std::get_if<api_error>(&body))
    return status_response(*e);
  json::value obj = std::move(std::get<json::value>(body));
  json::value& meta = member_object(obj, "metadata");
  std::string body_name = meta.get_string("name");
  if (body_name.empty())
    meta.as_object().set("name", ctx.name);
  else if (body_name != ctx.name)
    return status_response(bad_request("the name of the object (" + body_name +
                                       ") does not match the name on the URL (" + ctx.name + ")"));
  if (ctx.rt->namespaced) {
    std::string body_ns = meta.get_string("namespace");
    if (!body_ns.empty() && body_ns != ctx.ns)
      return status_response(bad_request(namespace_mismatch()));
  }
  if (!ctx.rt->builtin && meta.get_string("resourceVersion").empty())
    return status_response(invalid_error(*ctx.rt, ctx.name,
                                         {field_error::invalid("metadata.resourceVersion", "0x0",
                                                               "must be specified for an update")}));
  std::vector<std::string> warnings;
  if (auto e = apply_field_validation(ctx, obj, warnings))
    return status_response(*e);

  write_failure failure;
  auto updated = ctx.st.update(
      *ctx.rt, ctx.ns, ctx.name, [&](const json::value& cur) { return finish_update(ctx, obj, cur, failure); },
      dry_run(ctx));
  if (!updated) {
    if (failure.err)
      return status_response(*failure.err);
    if (updated.err().code == 404 && ctx.subresource.empty() && allows_create_on_update(*ctx.rt)) {
      // Not `meta`: pruning unknown fields (apply_field_validation) may have moved the members.
      member_object(obj, "metadata").as_object().erase("resourceVersion");
      return create_object(ctx, std::move(obj), std::move(warnings));
    }
    return status_response(from_store_error(updated.err(), *ctx.rt, ctx.name));
  }
  auto res = object_response(ctx, 200, **updated);
  add_warnings(res, warnings);
  return res;
}

route_result handle_patch(const request_context& ctx) {
  std::string ct = media_type(ctx.req.header("Content-Type"));
  enum { json_patch, merge_patch, strategic, apply } kind;
  if (ct == "application/json-patch+json")
    kind = json_patch;
  else if (ct == "application/merge-patch+json")
    kind = merge_patch;
  else if (ct == "application/strategic-merge-patch+json")
    kind = strategic;
  else if (ct == "application/apply-patch+yaml" || ct == "application/apply-patch+json")
    kind = apply;
  else
    return status_response(api_error{415, "UnsupportedMediaType", "415: Unsupported Media Type", json::object{}});
  if (kind == strategic && (!ctx.rt->builtin || !json::strategic_patch_supported(ctx.rt->kind)))
    return status_response(api_error{415, "UnsupportedMediaType",
                                     "the body of the request was in an unknown format - accepted media types "
                                     "include: application/json-patch+json, application/merge-patch+json, "
                                     "application/apply-patch+yaml",
                                     nullptr});
  auto patch = json::parse(ctx.req.body);
  if (!patch && kind == apply)
    patch = yaml_to_json(ctx.req.body);
  if (!patch)
    return status_response(bad_request("error decoding patch: " + patch.err().message));
  if (kind == json_patch && !patch->is_array())
    return status_response(bad_request("json: cannot unmarshal object into Go value of type jsonpatch.Patch"));
  if (kind != json_patch && !patch->is_object())
    return status_response(bad_request("error decoding patch: the patch must be a JSON object"));

  std::vector<std::string> warnings;
  write_failure failure;
  auto updated = ctx.st.update(*ctx.rt, ctx.ns, ctx.name, [&](const json::value& cur) -> expected<json::value> {
    json::value full = typed(ctx, cur);
    json::value patched;
    switch (kind) {
    case json_patch: {
      auto r = json::apply_json_patch(full, *patch);
      if (!r && r.err().code == 413) {
        failure.err = api_error{413, "RequestEntityTooLarge", r.err().message, json::object{}};
        return r.err();
      }
      if (!r) {
        failure.err = api_error{422, "Invalid", r.err().message, json::object{{"name", ctx.name}, {"kind", ctx.rt->kind}}};
        return r.err();
      }
      patched = std::move(*r);
      break;
    }
    case strategic: {
      auto r = json::apply_strategic_patch(full, *patch, ctx.rt->kind);
      if (!r) {
        failure.err = bad_request(r.err().message);
        return r.err();
      }
      patched = std::move(*r);
      break;
    }
    case merge_patch:
    case apply:
      patched = json::apply_merge_patch(full, *patch);
      break;
    }
    if (!patched.is_object()) {
      failure.err = bad_request("the patch produced something that is not an object");
      return error::bad_request("not an object");
    }
    // A patch may not rename the object or move it to another namespace (kube-apiserver's
    // words); the change used to be dropped silently with a 200.
    if (const json::value* meta = patched.find("metadata"); meta && meta->is_object()) {
      const json::value* name = meta->find("name");
      if (name && name->is_string() && name->as_string() != ctx.name) {
        failure.err = bad_request("the name of the object (" + name->as_string() +
                                  ") does not match the name on the URL (" + ctx.name + ")");
        return error::bad_request(failure.err->message);
      }
      const json::value* ns = meta->find("namespace");
      if (ctx.rt->namespaced && ns && ns->is_string() && !ns->as_string().empty() && ns->as_string() != ctx.ns) {
        failure.err = bad_request("the namespace of the object (" + ns->as_string() +
                                  ") does not match the namespace on the request (" + ctx.ns + ")");
        return error::bad_request(failure.err->message);
      }
    }
    json::value obj = strip_type(std::move(patched));
    if (auto e = apply_field_validation(ctx, obj, warnings, kind == apply)) {
      failure.err = *e;
      return error::bad_request(e->message);
    }
    return finish_update(ctx, std::move(obj), cur, failure);
  }, dry_run(ctx));
  if (!updated) {
    if (failure.err)
      return status_response(*failure.err);
    if (updated.err().code == 404 && kind == apply && ctx.subresource.empty()) {
      // Server-side apply creates what does not exist yet.
      json::value obj = strip_type(*patch);
      if (obj.at_path({"metadata", "name"}) == nullptr)
        member_object(obj, "metadata").as_object().set("name", ctx.name);
      std::vector<std::string> create_warnings;
      if (auto e = apply_field_validation(ctx, obj, create_warnings, true))
        return status_response(*e);
      return create_object(ctx, std::move(obj), std::move(create_warnings));
    }
    return status_response(from_store_error(updated.err(), *ctx.rt, ctx.name));
  }
  auto res = object_response(ctx, 200, **updated);
  add_warnings(res, warnings);
  return res;
}

route_result handle_binding(const request_context& ctx) {
  auto parsed = json::parse(ctx.req.body);
  if (!parsed || !parsed->is_object())
    return status_response(bad_request("the object provided is unrecognized (must be of type Binding): couldn't get "
                                       "version/kind; " + (parsed ? std::string("expected a JSON object") : parsed.err().message)));
  const json::value& binding = *parsed;
  std::string pod = ctx.name.empty() ? (binding.at_path({"metadata", "name"}) && binding.at_path({"metadata", "name"})->is_string()
                                            ? binding.at_path({"metadata", "name"})->as_string()
                                            : std::string())
                                     : ctx.name;
  std::string node = binding.at_path({"target", "name"}) && binding.at_path({"target", "name"})->is_string()
                         ? binding.at_path({"target", "name"})->as_string()
                         : std::string();
  resource_type binding_type = *ctx.rt;
  binding_type.kind = "Binding";
  if (pod.empty() || node.empty()) {
    std::vector<field_error> errs;
    if (pod.empty())
      errs.push_back(field_error::required("metadata.name"));
    if (node.empty())
      errs.push_back(field_error::required("target.name"));
    return status_response(invalid_error(binding_type, pod, errs));
  }
  const json::value* annotations = binding.at_path({"metadata", "annotations"});
  std::optional<api_error> failure;
  auto conflict = [&](const std::string& why) {
    failure = api_error{409, "Conflict", "Operation cannot be fulfilled on pods/binding " + go_quote(pod) + ": " + why,
                        json::object{{"name", pod}, {"kind", "pods/binding"}}};
    return error::conflict(why);
  };
  auto updated = ctx.st.update(*ctx.rt, ctx.ns, pod, [&](const json::value& cur) -> expected<json::value> {
    if (cur.at_path({"metadata", "deletionTimestamp"}))
      return conflict("pod " + pod + " is being deleted, cannot be assigned to a host");
    const json::value* assigned = cur.at_path({"spec", "nodeName"});
    if (assigned && assigned->is_string() && !assigned->as_string().empty())
      return conflict("pod " + pod + " is already assigned to node " + go_quote(assigned->as_string()));
    json::value next = cur;
    member_object(next, "spec").as_object().set("nodeName", node);
    if (annotations && annotations->is_object()) {
      json::value& a = member_object(member_object(next, "metadata"), "annotations");
      for (const auto& [k, v] : annotations->as_object())
        a.as_object().set(k, v);
    }
    json::value& conditions = member_array(member_object(next, "status"), "conditions");
    json::value scheduled = json::object{{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr},
                                         {"lastTransitionTime", now_rfc3339()}};
    bool replaced = false;
    for (auto& c : conditions.as_array())
      if (c.get_string("type") == "PodScheduled") {
        c = scheduled;
        replaced = true;
      }
    if (!replaced)
      conditions.as_array().push_back(std::move(scheduled));
    member_object(next, "metadata").as_object().erase("resourceVersion");
    return next;
  });
  if (!updated) {
    if (failure)
      return status_response(*failure);
    return status_response(from_store_error(updated.err(), *ctx.rt, pod));
  }
  return success_response(201, nullptr, 201);
}

} // namespace kozmo::apiserver
