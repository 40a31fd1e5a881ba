// The REST verbs, built on client::send. No asio here: a verb is a request to build and a
// body to decode.
#include "k8s/client/client.hpp"

#include "k8s/client/paths.hpp"

namespace kozmo::client {
namespace {

expected<json::value> decode(expected<response> r) {
  if (!r) return std::move(r.err());
  if (r->body.empty()) return json::value(json::object{});
  auto v = json::parse(r->body);
  if (!v) return error{"decoding the server's answer: " + v.err().message};
  return v;
}

response_callback decoding(json_callback done) {
  return [done = std::move(done)](expected<response> r) { done(decode(std::move(r))); };
}

request json_request(std::string method, std::string path, const json::value& body) {
  request req;
  req.method = std::move(method);
  req.path = std::move(path);
  req.body = json::dump(body);
  return req;
}

std::string patch_query(patch_type type, const patch_options& opts) {
  query_builder q;
  std::string manager = opts.field_manager;
  if (manager.empty() && type == patch_type::apply) manager = "kozmo";
  q.add_if("fieldManager", manager);
  if (type == patch_type::apply && opts.force) q.add("force", "true");
  return q.str();
}

request patch_request(const resource_ref& ref, patch_type type, const json::value& body,
                      const patch_options& opts) {
  request req = json_request("PATCH", resource_path(ref) + patch_query(type, opts), body);
  req.content_type = std::string(patch_content_type(type));
  return req;
}

request delete_request(const resource_ref& ref, const delete_options& opts) {
  request req;
  req.method = "DELETE";
  req.path = resource_path(ref);
  bool any = opts.grace_period_seconds || !opts.propagation_policy.empty() ||
             !opts.precondition_uid.empty() || !opts.precondition_resource_version.empty();
  if (!any) return req;
  json::value body = json::object{{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  if (opts.grace_period_seconds) body["gracePeriodSeconds"] = json::value(*opts.grace_period_seconds);
  if (!opts.propagation_policy.empty()) body["propagationPolicy"] = opts.propagation_policy;
  if (!opts.precondition_uid.empty()) body["preconditions"]["uid"] = opts.precondition_uid;
  if (!opts.precondition_resource_version.empty())
    body["preconditions"]["resourceVersion"] = opts.precondition_resource_version;
  req.body = json::dump(body);
  return req;
}

request bind_request(const binding& b) {
  json::value meta = json::object{{"name", b.pod}, {"namespace", b.ns}};
  if (!b.pod_uid.empty()) meta["uid"] = b.pod_uid;
  if (!b.annotations.empty()) {
    json::object annotations;
    for (const auto& [k, v] : b.annotations) annotations.set(k, v);
    meta["annotations"] = std::move(annotations);
  }
  json::value body = json::object{
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", std::move(meta)},
      {"target", json::object{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", b.node}}}};
  resource_ref pod{"", "v1", "pods", b.ns, b.pod, "binding"};
  return json_request("POST", resource_path(pod), body);
}

resource_ref status_of(resource_ref ref) {
  ref.subresource = "status";
  return ref;
}

// Follows metadata.continue page by page, then hands over one list with every item.
struct pager : std::enable_shared_from_this<pager> {
  detail::client_impl* engine;
  resource_ref ref;
  list_options opts;
  json_callback done;
  std::optional<json::value> result;
  bool restarted = false;

  void next() {
    auto self = shared_from_this();
    detail::send(engine, request{"GET", collection_path(ref) + list_query(opts)},
                 decoding([self](expected<json::value> page) { self->on_page(std::move(page)); }));
  }

  void on_page(expected<json::value> page) {
    if (!page) {
      // An expired continue token: start over as one unpaged list (client-go's pager).
      if (page.err().code == 410 && !opts.continue_token.empty() && !restarted) {
        restarted = true;
        opts.continue_token.clear();
        opts.limit = 0;
        result.reset();
        next();
        return;
      }
      done(std::move(page.err()));
      return;
    }
    json::value& p = *page;
    std::string token;
    if (const json::value* meta = p.find("metadata")) token = meta->get_string("continue");
    if (!result) {
      result = std::move(p);
    } else {
      json::value& items = (*result)["items"];
      if (!items.is_array()) items = json::array{};
      if (json::value* more = p.find("items"); more && more->is_array())
        for (auto& item : more->as_array()) items.as_array().push_back(std::move(item));
      if (const json::value* rv = p.at_path({"metadata", "resourceVersion"}))
        (*result)["metadata"]["resourceVersion"] = *rv;
    }
    if (!token.empty()) {
      opts.continue_token = std::move(token);
      next();
      return;
    }
    if (json::value* meta = result->find("metadata"); meta && meta->is_object()) {
      meta->as_object().erase("continue");
      meta->as_object().erase("remainingItemCount");
    }
    if (!result->find("items") || !result->find("items")->is_array()) (*result)["items"] = json::array{};
    done(std::move(*result));
  }
};

} // namespace

void client::get(const resource_ref& ref, json_callback done) {
  send(request{"GET", resource_path(ref)}, decoding(std::move(done)));
}
expected<json::value> client::get(const resource_ref& ref) {
  return wait([&](json_callback cb) { get(ref, std::move(cb)); });
}

void client::list(const resource_ref& ref, const list_options& opts, json_callback done) {
  send(request{"GET", collection_path(ref) + list_query(opts)}, decoding(std::move(done)));
}
expected<json::value> client::list(const resource_ref& ref, const list_options& opts) {
  return wait([&](json_callback cb) { list(ref, opts, std::move(cb)); });
}

void client::list_all(const resource_ref& ref, const list_options& opts, json_callback done) {
  auto p = std::make_shared<pager>();
  p->engine = impl_.get();
  p->ref = ref;
  p->opts = opts;
  p->done = std::move(done);
  p->next();
}
expected<json::value> client::list_all(const resource_ref& ref, const list_options& opts) {
  return wait([&](json_callback cb) { list_all(ref, opts, std::move(cb)); });
}

void client::create(const resource_ref& ref, const json::value& body, json_callback done) {
  send(json_request("POST", collection_path(ref), body), decoding(std::move(done)));
}
expected<json::value> client::create(const resource_ref& ref, const json::value& body) {
  return wait([&](json_callback cb) { create(ref, body, std::move(cb)); });
}

void client::update(const resource_ref& ref, const json::value& body, json_callback done) {
  send(json_request("PUT", resource_path(ref), body), decoding(std::move(done)));
}
expected<json::value> client::update(const resource_ref& ref, const json::value& body) {
  return wait([&](json_callback cb) { update(ref, body, std::move(cb)); });
}

void client::patch(const resource_ref& ref, patch_type type, const json::value& body,
                   const patch_options& opts, json_callback done) {
  send(patch_request(ref, type, body, opts), decoding(std::move(done)));
}
expected<json::value> client::patch(const resource_ref& ref, patch_type type,
                                    const json::value& body, const patch_options& opts) {
  return wait([&](json_callback cb) { patch(ref, type, body, opts, std::move(cb)); });
}

void client::remove(const resource_ref& ref, const delete_options& opts, json_callback done) {
  send(delete_request(ref, opts), decoding(std::move(done)));
}
expected<json::value> client::remove(const resource_ref& ref, const delete_options& opts) {
  return wait([&](json_callback cb) { remove(ref, opts, std::move(cb)); });
}

void client::update_status(const resource_ref& ref, const json::value& body, json_callback done) {
  update(status_of(ref), body, std::move(done));
}
expected<json::value> client::update_status(const resource_ref& ref, const json::value& body) {
  return update(status_of(ref), body);
}

void client::patch_status(const resource_ref& ref, patch_type type, const json::value& body,
                          const patch_options& opts, json_callback done) {
  patch(status_of(ref), type, body, opts, std::move(done));
}
expected<json::value> client::patch_status(const resource_ref& ref, patch_type type,
                                           const json::value& body, const patch_options& opts) {
  return patch(status_of(ref), type, body, opts);
}

void client::bind(const binding& b, json_callback done) {
  send(bind_request(b), decoding(std::move(done)));
}
expected<json::value> client::bind(const binding& b) {
  return wait([&](json_callback cb) { bind(b, std::move(cb)); });
}

void client::create_event(const json::value& event, json_callback done) {
  std::string ns;
  if (const json::value* meta = event.find("metadata")) ns = meta->get_string("namespace");
  if (ns.empty()) ns = cfg().default_namespace;
  resource_ref events{"", "v1", "events", ns};
  auto req = json_request("POST", collection_path(events), event);
  req.lane = lane::events;
  send(std::move(req), decoding(std::move(done)));
}
expected<json::value> client::create_event(const json::value& event) {
  return wait([&](json_callback cb) { create_event(event, std::move(cb)); });
}

} // namespace kozmo::client
