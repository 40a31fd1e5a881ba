#include "k8s/apiserver/watch_stream.hpp"

#include "k8s/apiserver/encoding.hpp"
#include "k8s/apiserver/table.hpp"

namespace kozmo::apiserver {
namespace {

const char* type_name(event_type t) {
  switch (t) {
  case event_type::added: return "ADDED";
  case event_type::modified: return "MODIFIED";
  case event_type::deleted: return "DELETED";
  case event_type::bookmark: return "BOOKMARK";
  }
  return "ERROR";
}

} // namespace

expected<store::watch_id> watch_stream::subscribe(store& s, std::function<void(const change_event&)> sink) {
  watch_filter filter{p_.rt->key(), p_.rt->namespaced ? p_.ns : std::string(), p_.filter};
  last_rv_ = p_.from_rv ? *p_.from_rv : s.current_rv();
  return s.watch(std::move(filter), p_.from_rv, std::move(sink), p_.send_initial_events && !p_.from_rv);
}

std::string watch_stream::encode(const change_event& ev) {
  if (ev.type == event_type::bookmark) {
    last_rv_ = std::max(last_rv_, ev.rv);
    return bookmark_line(ev.rv, true);
  }
  last_rv_ = std::max(last_rv_, ev.rv);
  std::string out = "{\"type\":\"";
  out += type_name(ev.type);
  out += "\",\"object\":";
  const resource_type& rt = *p_.rt;
  switch (p_.accept.what) {
  case accept_choice::table: {
    json::value meta = json::object{{"resourceVersion", std::to_string(ev.rv)}};
    out += encode_table(rt, p_.version, p_.accept.meta_version, {ev.object.get()}, meta, !columns_sent_,
                        include_object::metadata);
    columns_sent_ = true;
    break;
  }
  case accept_choice::partial_metadata: {
    json::value meta = ev.object->find("metadata") ? *ev.object->find("metadata") : json::value(json::object{});
    encode_typed_to(out, "PartialObjectMetadata", "meta.k8s.io/" + p_.accept.meta_version,
                    json::object{{"metadata", std::move(meta)}});
    break;
  }
  case accept_choice::json:
    encode_typed_to(out, rt.kind, rt.api_version(p_.version), *ev.object);
    break;
  }
  out += "}\n";
  return out;
}

std::string watch_stream::bookmark(std::uint64_t rv) {
  if (rv <= last_rv_)
    return {};
  last_rv_ = rv;
  return bookmark_line(rv, false);
}

std::string watch_stream::bookmark_line(std::uint64_t rv, bool initial_events_end) {
  json::object meta{{"resourceVersion", std::to_string(rv)}, {"creationTimestamp", nullptr}};
  if (initial_events_end)
    meta.set("annotations", json::object{{"k8s.io/initial-events-end", "true"}});
  json::object obj{{"metadata", std::move(meta)}};
  // Typed kinds serialise their empty required members, as kube-apiserver's bookmarks show.
  if (p_.rt->builtin && p_.rt->kind == "Pod") {
    obj.set("spec", json::object{{"containers", nullptr}});
    obj.set("status", json::object{});
  }
  std::string out = "{\"type\":\"BOOKMARK\",\"object\":";
  encode_typed_to(out, p_.rt->kind, p_.rt->api_version(p_.version), json::value(std::move(obj)));
  out += "}\n";
  return out;
}

std::string watch_stream::error_line(const api_error& e) {
  json::object status{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object{}}, {"status", "Failure"},
                      {"message", e.message}, {"reason", e.reason}};
  if (!e.details.is_null())
    status.set("details", e.details);
  status.set("code", e.code);
  std::string out = "{\"type\":\"ERROR\",\"object\":";
  json::dump_to(out, json::value(std::move(status)));
  out += "}\n";
  return out;
}

} // namespace kozmo::apiserver
