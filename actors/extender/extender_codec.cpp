#include "actors/extender/extender_codec.hpp"

#include "k8s/text.hpp"

#include "k8s/model/codec.hpp"

#include <algorithm>
#include <cctype>

namespace kozmo::extender {
namespace {

using text::iequals;

// A member as Go's encoding/json finds it: the exact name first, then any case. Null counts
// as absent (a Go nil pointer or map).
const json::value* member(const json::value& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  if (auto* v = obj.find(name)) return v->is_null() ? nullptr : v;
  for (const auto& [key, v] : obj.as_object())
    if (iequals(key, name)) return v.is_null() ? nullptr : &v;
  return nullptr;
}

expected<json::value> parse_object(std::string_view body, std::string_view what) {
  auto doc = json::parse(body);
  if (!doc) return error::bad_request(std::string(what) + ": malformed JSON: " + doc.err().message);
  if (!doc->is_object()) return error::bad_request(std::string(what) + ": the body must be a JSON object");
  return std::move(*doc);
}

expected<std::string> string_member(const json::value& obj, std::string_view name, std::string_view what) {
  auto* v = member(obj, name);
  if (!v) return std::string();
  if (!v->is_string()) return error::bad_request(std::string(what) + ": " + std::string(name) + " must be a string");
  return v->as_string();
}

expected<std::vector<std::string>> string_list(const json::value& v, std::string_view field) {
  if (!v.is_array()) return error::bad_request(std::string(field) + " must be an array of strings");
  std::vector<std::string> out;
  out.reserve(v.as_array().size());
  for (const auto& item : v.as_array()) {
    if (!item.is_string()) return error::bad_request(std::string(field) + " must be an array of strings");
    out.push_back(item.as_string());
  }
  return out;
}

expected<k8s::pod> pod_member(const json::value& obj, std::string_view what) {
  auto* v = member(obj, "Pod");
  if (!v) return error::bad_request(std::string(what) + ": the request has no Pod");
  if (!v->is_object()) return error::bad_request(std::string(what) + ": Pod must be an object");
  auto pod = k8s::from_json<k8s::pod>(*v);
  if (!pod) return error::bad_request(std::string(what) + ": Pod: " + pod.err().message);
  if (pod->metadata.uid.empty()) return error::bad_request(std::string(what) + ": Pod has no metadata.uid");
  return std::move(*pod);
}

// Names of the nodes of a v1.NodeList.
expected<std::vector<std::string>> node_list_names(const json::value& list) {
  std::vector<std::string> out;
  auto* items = member(list, "items");
  if (!items) return out;
  if (!items->is_array()) return error::bad_request("Nodes.items must be an array");
  for (const auto& n : items->as_array()) {
    auto* name = n.at_path({"metadata", "name"});
    if (!name || !name->is_string()) return error::bad_request("Nodes.items[].metadata.name must be a string");
    out.push_back(name->as_string());
  }
  return out;
}

// map[string]*MetaVictims or map[string]*Victims, reduced to UIDs.
expected<std::map<std::string, meta_victims>> victims_map(const json::value& v, std::string_view field,
                                                          bool full_pods) {
  std::map<std::string, meta_victims> out;
  if (!v.is_object()) return error::bad_request(std::string(field) + " must be an object");
  for (const auto& [node, entry] : v.as_object()) {
    meta_victims mv;
    if (entry.is_null()) {
      out.emplace(node, std::move(mv));
      continue;
    }
    if (!entry.is_object()) return error::bad_request(std::string(field) + "[" + node + "] must be an object");
    if (auto* pods = member(entry, "Pods")) {
      if (!pods->is_array()) return error::bad_request(std::string(field) + "[" + node + "].Pods must be an array");
      for (const auto& p : pods->as_array()) {
        const json::value* uid = full_pods ? p.at_path({"metadata", "uid"}) : member(p, "UID");
        if (!uid || !uid->is_string())
          return error::bad_request(std::string(field) + "[" + node + "].Pods[]: a victim has no UID");
        mv.pod_uids.push_back(uid->as_string());
      }
    }
    if (auto* n = member(entry, "NumPDBViolations")) {
      if (!n->is_int()) return error::bad_request(std::string(field) + "[" + node + "].NumPDBViolations must be an integer");
      mv.num_pdb_violations = n->as_int();
    }
    out.emplace(node, std::move(mv));
  }
  return out;
}

json::value victims_json(const std::map<std::string, meta_victims>& m) {
  json::object o;
  for (const auto& [node, mv] : m) {
    json::array pods;
    for (const auto& uid : mv.pod_uids) pods.push_back(json::object{{"UID", uid}});
    o.set(node, json::object{{"Pods", std::move(pods)}, {"NumPDBViolations", mv.num_pdb_violations}});
  }
  return o;
}

json::value string_array(const std::vector<std::string>& v) {
  json::array a;
  a.reserve(v.size());
  for (const auto& s : v) a.push_back(s);
  return a;
}

} // namespace

expected<filter_args> decode_filter_args(std::string_view body) {
  auto doc = parse_object(body, "filter");
  if (!doc) return doc.err();
  filter_args out;
  auto pod = pod_member(*doc, "filter");
  if (!pod) return pod.err();
  out.pod = std::move(*pod);
  if (auto* names = member(*doc, "NodeNames")) {
    auto list = string_list(*names, "NodeNames");
    if (!list) return list.err();
    out.node_names = std::move(*list);
  } else if (auto* nodes = member(*doc, "Nodes")) {
    auto list = node_list_names(*nodes);
    if (!list) return list.err();
    out.node_names = std::move(*list);
    out.nodes_as_objects = true;
  }
  return out;
}

expected<preempt_args> decode_preempt_args(std::string_view body) {
  auto doc = parse_object(body, "preempt");
  if (!doc) return doc.err();
  preempt_args out;
  auto pod = pod_member(*doc, "preempt");
  if (!pod) return pod.err();
  out.pod = std::move(*pod);
  if (auto* meta = member(*doc, "NodeNameToMetaVictims")) {
    auto m = victims_map(*meta, "NodeNameToMetaVictims", false);
    if (!m) return m.err();
    out.node_victims = std::move(*m);
  } else if (auto* full = member(*doc, "NodeNameToVictims")) {
    auto m = victims_map(*full, "NodeNameToVictims", true);
    if (!m) return m.err();
    out.node_victims = std::move(*m);
  }
  return out;
}

expected<bind_args> decode_bind_args(std::string_view body) {
  auto doc = parse_object(body, "bind");
  if (!doc) return doc.err();
  bind_args out;
  struct field {
    const char* name;
    std::string* into;
  };
  for (auto [name, into] : {field{"PodName", &out.pod_name}, field{"PodNamespace", &out.pod_namespace},
                            field{"PodUID", &out.pod_uid}, field{"Node", &out.node}}) {
    auto s = string_member(*doc, name, "bind");
    if (!s) return s.err();
    *into = std::move(*s);
  }
  if (out.pod_name.empty()) return error::bad_request("bind: PodName is empty");
  if (out.node.empty()) return error::bad_request("bind: Node is empty");
  return out;
}

std::string encode(const filter_result& r) {
  json::object failed;
  for (const auto& [node, why] : r.failed_nodes) failed.set(node, why);
  return json::dump(json::object{{"Nodes", nullptr},
                                 {"NodeNames", string_array(r.node_names)},
                                 {"FailedNodes", std::move(failed)},
                                 {"Error", r.error}});
}

std::string encode(const preempt_result& r) {
  return json::dump(json::object{{"NodeNameToMetaVictims", victims_json(r.node_victims)}});
}

std::string encode(const bind_result& r) { return json::dump(json::object{{"Error", r.error}}); }

std::string encode(const filter_args& a) {
  return json::dump(json::object{{"Pod", k8s::to_json(a.pod)}, {"Nodes", nullptr}, {"NodeNames", string_array(a.node_names)}});
}

std::string encode(const preempt_args& a) {
  return json::dump(json::object{{"Pod", k8s::to_json(a.pod)},
                                 {"NodeNameToVictims", nullptr},
                                 {"NodeNameToMetaVictims", victims_json(a.node_victims)}});
}

std::string encode(const bind_args& a) {
  return json::dump(json::object{
      {"PodName", a.pod_name}, {"PodNamespace", a.pod_namespace}, {"PodUID", a.pod_uid}, {"Node", a.node}});
}

expected<filter_result> decode_filter_result(std::string_view body) {
  auto doc = parse_object(body, "filter result");
  if (!doc) return doc.err();
  filter_result out;
  if (auto* names = member(*doc, "NodeNames")) {
    auto list = string_list(*names, "NodeNames");
    if (!list) return list.err();
    out.node_names = std::move(*list);
  }
  if (auto* failed = member(*doc, "FailedNodes")) {
    if (!failed->is_object()) return error::bad_request("FailedNodes must be an object");
    for (const auto& [node, why] : failed->as_object())
      out.failed_nodes[node] = why.is_string() ? why.as_string() : std::string();
  }
  auto err = string_member(*doc, "Error", "filter result");
  if (!err) return err.err();
  out.error = std::move(*err);
  return out;
}

expected<preempt_result> decode_preempt_result(std::string_view body) {
  auto doc = parse_object(body, "preempt result");
  if (!doc) return doc.err();
  preempt_result out;
  if (auto* meta = member(*doc, "NodeNameToMetaVictims")) {
    auto m = victims_map(*meta, "NodeNameToMetaVictims", false);
    if (!m) return m.err();
    out.node_victims = std::move(*m);
  }
  return out;
}

expected<bind_result> decode_bind_result(std::string_view body) {
  auto doc = parse_object(body, "bind result");
  if (!doc) return doc.err();
  auto err = string_member(*doc, "Error", "bind result");
  if (!err) return err.err();
  return bind_result{std::move(*err)};
}

std::string encode_error(int code, std::string_view message) {
  return json::dump(json::object{{"code", code}, {"message", message}});
}

} // namespace kozmo::extender
