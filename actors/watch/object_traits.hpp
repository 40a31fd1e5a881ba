// object_traits<T> for the model kinds the watch actor serves: identity, indexes and the
// decoders from k8s/model (simdjson's DOM tape for watch lines, the JSON tree for LIST items).
#pragma once

#include "actors/watch/watch_line.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/watch.hpp"

namespace kozmo::watch {

// Identity and indexes shared by every kind: namespace/name, owners, labels, namespace.
template <class T>
struct meta_traits {
  static std::string key(const T& o) {
    const auto& m = o.metadata;
    return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
  }
  static std::string resource_version(const T& o) { return o.metadata.resource_version; }
  static void meta_index_values(const T& o, index_kind kind, std::vector<std::string>& out) {
    const auto& m = o.metadata;
    switch (kind) {
    case index_kind::owner_uid:
      for (const auto& ref : m.owner_references)
        out.push_back(ref.uid);
      break;
    case index_kind::label:
      for (const auto& [k, v] : m.labels)
        out.push_back(k + "=" + v);
      break;
    case index_kind::name_space:
      out.push_back(m.namespace_);
      break;
    default:
      break;
    }
  }
  static expected<watch_line<T>> decode_line(std::string_view line);
  static expected<k8s::object_list<T>> decode_list(std::string_view body);
};

template <>
struct object_traits<k8s::pod> : meta_traits<k8s::pod> {
  static void index_values(const k8s::pod& p, index_kind kind, std::vector<std::string>& out) {
    if (kind == index_kind::node_name) {
      if (!p.spec.node_name.empty())
        out.push_back(p.spec.node_name);
      return;
    }
    if (kind == index_kind::scheduler_name) {
      out.push_back(p.spec.scheduler_name);
      return;
    }
    meta_index_values(p, kind, out);
  }
  // Only what a scheduler counts of other schedulers' pods (watch_config::counted_pods).
  static expected<watch_line<k8s::pod>> decode_counted_line(std::string_view line);
  static expected<k8s::object_list<k8s::pod>> decode_counted_list(std::string_view body);
  // The same from protobuf (the envelope's "k8s\0" first); pods it cannot hold are named in skipped.
  static expected<k8s::object_list<k8s::pod>> decode_counted_list_protobuf(std::string_view body,
                                                                          std::vector<std::string>& skipped);
};

template <>
struct object_traits<k8s::node> : meta_traits<k8s::node> {
  static void index_values(const k8s::node& n, index_kind kind, std::vector<std::string>& out) {
    meta_index_values(n, kind, out);
  }
};

template <>
struct object_traits<k8s::service> : meta_traits<k8s::service> {
  static void index_values(const k8s::service& s, index_kind kind, std::vector<std::string>& out) {
    meta_index_values(s, kind, out);
  }
};

template <>
struct object_traits<k8s::custom_object> : meta_traits<k8s::custom_object> {
  static void index_values(const k8s::custom_object& o, index_kind kind, std::vector<std::string>& out) {
    meta_index_values(o, kind, out);
  }
};

} // namespace kozmo::watch
