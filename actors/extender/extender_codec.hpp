// kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1, as kube-scheduler
// v1.20 speaks it) decoded into plain structs and encoded back. Pure: no CAF, no Beast.
//
// The Go types carry no json tags, so the wire names are the Go field names ("Pod",
// "NodeNames", "FailedNodes", "Error", "NodeNameToMetaVictims", "PodUID", ...). Go decodes
// keys case-insensitively; so do we, so that a hand-written request with "nodenames" works.
//
// Notes:
//  1. With `nodeCacheCapable: true` kube-scheduler sends `NodeNames` (and expects `NodeNames`
//     back); otherwise it sends a `Nodes` NodeList. Both are read into filter_args::node_names.
//  2. Decoding errors are user errors (reason "BadRequest", HTTP 400) whose message names the
//     field; a request without a pod is one of them.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/pod.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::extender {

// ExtenderArgs (POST <urlPrefix>/filter).
struct filter_args {
  k8s::pod pod;
  std::vector<std::string> node_names; // NodeNames, or the names in Nodes.items
  bool nodes_as_objects = false;       // the request carried a NodeList (nodeCacheCapable: false)
};

// ExtenderFilterResult.
struct filter_result {
  std::vector<std::string> node_names;
  std::map<std::string, std::string> failed_nodes; // node -> why not
  std::string error;                               // non-empty: kube-scheduler fails the pod with it
  friend bool operator==(const filter_result&, const filter_result&) = default;
};

// MetaVictims: the pods (by UID) to evict on one node.
struct meta_victims {
  std::vector<std::string> pod_uids;
  std::int64_t num_pdb_violations = 0;
  friend bool operator==(const meta_victims&, const meta_victims&) = default;
};

// ExtenderPreemptionArgs (POST <urlPrefix>/preempt). NodeNameToVictims (full pods, sent when the
// extender is not node-cache capable) is reduced to UIDs as well.
struct preempt_args {
  k8s::pod pod;
  std::map<std::string, meta_victims> node_victims;
};

// ExtenderPreemptionResult.
struct preempt_result {
  std::map<std::string, meta_victims> node_victims;
  friend bool operator==(const preempt_result&, const preempt_result&) = default;
};

// ExtenderBindingArgs (POST <urlPrefix>/bind).
struct bind_args {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
  friend bool operator==(const bind_args&, const bind_args&) = default;
};

// ExtenderBindingResult.
struct bind_result {
  std::string error;
  friend bool operator==(const bind_result&, const bind_result&) = default;
};

expected<filter_args> decode_filter_args(std::string_view body);
expected<preempt_args> decode_preempt_args(std::string_view body);
expected<bind_args> decode_bind_args(std::string_view body);

std::string encode(const filter_result& r);
std::string encode(const preempt_result& r);
std::string encode(const bind_result& r);

// The request side, for tests and tools that play kube-scheduler.
std::string encode(const filter_args& a);
std::string encode(const preempt_args& a);
std::string encode(const bind_args& a);
expected<filter_result> decode_filter_result(std::string_view body);
expected<preempt_result> decode_preempt_result(std::string_view body);
expected<bind_result> decode_bind_result(std::string_view body);

// HiveD's error body: {"code": 400, "message": "..."}.
std::string encode_error(int code, std::string_view message);

} // namespace kozmo::extender
