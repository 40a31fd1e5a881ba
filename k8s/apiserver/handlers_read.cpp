// GET of one object, LIST (selectors, paging, resourceVersion semantics) and WATCH set-up.
#include "k8s/apiserver/encoding.hpp"
#include "k8s/apiserver/handlers.hpp"
#include "k8s/apiserver/selection.hpp"
#include "k8s/apiserver/table.hpp"

namespace kozmo::apiserver {
namespace {

include_object include_mode(const parsed_target& t) {
  std::string v = t.param("includeObject");
  if (v == "Object")
    return include_object::object;
  if (v == "None")
    return include_object::none;
  return include_object::metadata;
}

http_response json_body(int status, std::string body) {
  http_response res;
  res.status = status;
  res.set_header("Content-Type", "application/json");
  res.body = std::move(body);
  return res;
}

std::string partial_metadata_list(const std::string& meta_version, const json::value& list_meta,
                                  const std::vector<object_ptr>& items) {
  json::array out;
  for (const auto& obj : items)
    out.push_back(json::object{{"kind", "PartialObjectMetadata"},
                               {"apiVersion", "meta.k8s.io/" + meta_version},
                               {"metadata", obj->find("metadata") ? *obj->find("metadata") : json::value(json::object{})}});
  return json::dump(json::value(json::object{{"kind", "PartialObjectMetadataList"},
                                             {"apiVersion", "meta.k8s.io/" + meta_version},
                                             {"metadata", list_meta},
                                             {"items", std::move(out)}}));
}

// A name-scoped request (GET .../pods/x?watch=1) selects that one object.
expected<object_predicate> selection_for(const request_context& ctx) {
  std::string fields = ctx.target.param("fieldSelector");
  if (!ctx.name.empty())
    fields = (fields.empty() ? "" : fields + ",") + "metadata.name=" + ctx.name;
  return make_selection(*ctx.rt, ctx.target.param("labelSelector"), fields);
}

} // namespace

http_response object_response(const request_context& ctx, int status, const json::value& obj) {
  return json_body(status, encode_object(*ctx.rt, ctx.version, obj));
}

void add_warnings(http_response& res, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings)
    res.headers.emplace_back("Warning", "299 - " + go_quote(w));
}

route_result handle_get(const request_context& ctx) {
  auto obj = ctx.st.get(*ctx.rt, ctx.ns, ctx.name);
  if (!obj)
    return status_response(not_found_error(*ctx.rt, ctx.name));
  accept_choice accept = parse_accept(ctx.req.header("Accept"));
  const json::value& o = **obj;
  if (accept.what == accept_choice::table) {
    json::value meta = json::object{{"resourceVersion", o.at_path({"metadata", "resourceVersion"})
                                                            ? *o.at_path({"metadata", "resourceVersion"})
                                                            : json::value("")}};
    return json_body(200, encode_table(*ctx.rt, ctx.version, accept.meta_version, {&o}, meta, true,
                                       include_mode(ctx.target)));
  }
  if (accept.what == accept_choice::partial_metadata) {
    std::string out;
    encode_typed_to(out, "PartialObjectMetadata", "meta.k8s.io/" + accept.meta_version,
                    json::object{{"metadata", o.find("metadata") ? *o.find("metadata") : json::value(json::object{})}});
    return json_body(200, std::move(out));
  }
  return object_response(ctx, 200, o);
}

route_result handle_list(const request_context& ctx) {
  auto selection = selection_for(ctx);
  if (!selection)
    return status_response(bad_request(selection.err().message));
  const auto& t = ctx.target;
  std::size_t limit = 0;
  if (auto l = parse_int(t.param("limit")); l && *l > 0)
    limit = static_cast<std::size_t>(*l);
  std::string rv_param = t.param("resourceVersion");
  std::string start_key;
  std::optional<std::uint64_t> token_rv;

  if (!t.param("continue").empty()) {
    auto token = decode_continue(t.param("continue"));
    if (!token)
      return status_response(bad_request(token.err().message));
    start_key = token->start_key;
    token_rv = token->rv;
  } else if (rv_param == "0") {
    limit = 0;  // served "from the cache": the whole list, limit ignored (as kube-apiserver)
  } else if (!rv_param.empty()) {
    auto rv = parse_int(rv_param);
    if (!rv || *rv < 0)
      return status_response(bad_request("invalid resource version: " + rv_param));
    std::uint64_t want = static_cast<std::uint64_t>(*rv);
    std::uint64_t current = ctx.st.current_rv();
    if (want > current) {
      api_error e{504, "Timeout",
                  "Timeout: Too large resource version: " + rv_param + ", current: " + std::to_string(current),
                  json::object{{"causes", json::array{json::object{{"reason", "ResourceVersionTooLarge"},
                                                                  {"message", "Too large resource version"}}}},
                               {"retryAfterSeconds", 1}}};
      auto res = status_response(e);
      res.set_header("Retry-After", "1");
      return res;
    }
    bool exact = t.param("resourceVersionMatch") == "Exact";
    // Only the current state is kept: an older snapshot can be served only when nothing
    // changed since (Exact), and paged lists from a compacted version are refused.
    if ((limit && want < ctx.st.compacted_rv()) || (exact && want < current))
      return status_response(api_error{410, "Expired", "The resourceVersion for the provided list is too old.", nullptr});
  }

  list_page page = ctx.st.list(*ctx.rt, ctx.has_ns ? ctx.ns : std::string(), *selection, limit, start_key);
  std::uint64_t rv = token_rv ? *token_rv : page.rv;
  json::object list_meta{{"resourceVersion", std::to_string(rv)}};
  if (!page.next_key.empty()) {
    list_meta.set("continue", encode_continue(rv, page.next_key));
    // kube-apiserver reports a remaining count only for unfiltered lists.
    if (t.param("labelSelector").empty() && t.param("fieldSelector").empty())
      list_meta.set("remainingItemCount", static_cast<long long>(page.remaining));
  }
  json::value meta(std::move(list_meta));
  accept_choice accept = parse_accept(ctx.req.header("Accept"));
  if (accept.what == accept_choice::table) {
    std::vector<const json::value*> objs;
    objs.reserve(page.items.size());
    for (const auto& o : page.items)
      objs.push_back(o.get());
    return json_body(200, encode_table(*ctx.rt, ctx.version, accept.meta_version, objs, meta, true,
                                       include_mode(t)));
  }
  if (accept.what == accept_choice::partial_metadata)
    return json_body(200, partial_metadata_list(accept.meta_version, meta, page.items));
  return json_body(200, encode_list(*ctx.rt, ctx.version, meta, page.items));
}

route_result handle_watch(const request_context& ctx) {
  auto selection = selection_for(ctx);
  if (!selection)
    return status_response(bad_request(selection.err().message));
  const auto& t = ctx.target;
  watch_params p;
  p.rt = ctx.rt;
  p.version = ctx.version;
  p.ns = ctx.has_ns ? ctx.ns : std::string();
  p.filter = *selection;
  p.bookmarks = t.flag("allowWatchBookmarks");
  p.accept = parse_accept(ctx.req.header("Accept"));
  if (auto ts = parse_int(t.param("timeoutSeconds")); ts && *ts > 0)
    p.timeout_seconds = *ts;
  std::string rv = t.param("resourceVersion");
  p.send_initial_events = t.flag("sendInitialEvents");
  if (!rv.empty() && rv != "0" && !p.send_initial_events) {
    auto n = parse_int(rv);
    if (!n || *n < 0)
      return status_response(bad_request("invalid resource version: " + rv));
    p.from_rv = static_cast<std::uint64_t>(*n);
  }
  return std::make_shared<watch_stream>(std::move(p));
}

} // namespace kozmo::apiserver
