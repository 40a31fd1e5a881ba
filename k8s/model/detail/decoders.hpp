// Private to k8s/model: one decoder per model type, written once as templates over a
// "node" — a cursor on a JSON value — and instantiated twice: over simdjson's parsed tape
// (decode_fast.cpp, the watch hot path) and over json::value trees (decode_tree.cpp). This file
// holds the leaves, containers, metadata and pods; decoders_kinds.hpp the other kinds and lists.
//
// A node N provides:
//   node_kind kind();  bool is_null();
//   dstatus read(std::string&), read(std::int64_t&), read(std::int32_t&), read(bool&),
//           read(json::value&), read_quantity(quantity&);       null leaves the target as is
//   dstatus read_view(std::string_view&)  a string valid until the decode ends
//   dstatus fields(F)    F(std::string_view key, N& child) -> dstatus   (object members)
//   dstatus entries(F)   same, for maps: failures are reported as "[key]"
//   dstatus elements(F)  F(N& child) -> dstatus                     (array items)
//   std::size_t element_count()  items in an array (0 if unknown): a hint for reserving
//   std::size_t member_count()   members of an object (0 if unknown): the same for maps
// Unknown fields are ignored (the node skips them); null is "absent" everywhere, as in Go.
#pragma once

#include "k8s/model/api_status.hpp"
#include "k8s/model/custom_object.hpp"
#include "k8s/model/detail/decode_status.hpp"
#include "k8s/model/detail/fast_scalars.hpp"
#include "k8s/model/event.hpp"
#include "k8s/model/lease.hpp"
#include "k8s/model/namespace.hpp"
#include "k8s/model/node.hpp"
#include "k8s/model/pod.hpp"
#include "k8s/model/pod_template.hpp"
#include "k8s/model/service.hpp"
#include "k8s/model/watch.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

namespace kozmo::k8s::detail {

enum class node_kind { invalid, null, boolean, number, string, array, object };

inline std::string_view describe(node_kind k) {
  switch (k) {
  case node_kind::null: return "null";
  case node_kind::boolean: return "a boolean";
  case node_kind::number: return "a number";
  case node_kind::string: return "a string";
  case node_kind::array: return "an array";
  case node_kind::object: return "an object";
  case node_kind::invalid: break;
  }
  return "invalid JSON";
}

// Equality of L bytes, L known at compile time, as a few word compares: never a memcmp call.
// Loads overlap instead of reading past the end (a key may be the last bytes of a buffer).
template <std::size_t L> inline bool same_bytes(const char* a, const char* b) {
  auto load = [](const char* p, auto word) {
    std::memcpy(&word, p, sizeof word);
    return word;
  };
  if constexpr (L == 0) {
    return true;
  } else if constexpr (L == 1) {
    return a[0] == b[0];
  } else if constexpr (L < 4) {
    return load(a, std::uint16_t{}) == load(b, std::uint16_t{}) &&
           load(a + L - 2, std::uint16_t{}) == load(b + L - 2, std::uint16_t{});
  } else if constexpr (L < 8) {
    return ((load(a, std::uint32_t{}) ^ load(b, std::uint32_t{})) |
            (load(a + L - 4, std::uint32_t{}) ^ load(b + L - 4, std::uint32_t{}))) == 0;
  } else if constexpr (L <= 16) {
    return ((load(a, std::uint64_t{}) ^ load(b, std::uint64_t{})) |
            (load(a + L - 8, std::uint64_t{}) ^ load(b + L - 8, std::uint64_t{}))) == 0;
  } else {
    return load(a, std::uint64_t{}) == load(b, std::uint64_t{}) && same_bytes<L - 8>(a + 8, b + 8);
  }
}

// A member name. Comparing it with a literal checks the length first and then compares a
// compile-time number of bytes inline. The kinds a watch decodes most (pods, nodes, events)
// switch on the name's length first: one jump, then only the names of that length, instead of
// a length test per known name for every member (most of a pod's unknown members went through
// all of them).
struct field_key {
  std::string_view s;
  template <std::size_t N> bool operator==(const char (&lit)[N]) const {
    return s.size() == N - 1 && same_bytes<N - 1>(s.data(), lit);
  }
};

// ---- leaves and containers -------------------------------------------------------------

template <class N> [[gnu::always_inline]] inline dstatus decode(N& n, std::string& out) { return n.read(out); }
template <class N> dstatus decode(N& n, std::int64_t& out) { return n.read(out); }
template <class N> dstatus decode(N& n, std::int32_t& out) { return n.read(out); }
template <class N> dstatus decode(N& n, bool& out) { return n.read(out); }
template <class N> dstatus decode(N& n, json::value& out) { return n.read(out); }
template <class N> dstatus decode(N& n, quantity& out) { return n.read_quantity(out); }

// A time as sent, to the clock's resolution.
template <class N> dstatus decode_exact_time(N& n, time_point& out) {
  std::string_view text;
  KOZMO_DTRY(n.read_view(text));
  if (text.empty())
    return {};
  if (parse_time_memo(text, out))
    return {};
  auto t = parse_time(text);
  if (!t)
    return dstatus::fail(t.err().message);
  out = *t;
  return {};
}

// metav1.Time: whole seconds, as encode writes it; a fraction a writer sent is dropped, so a
// decoded object writes back as it was read.
template <class N> dstatus decode(N& n, time_point& out) {
  KOZMO_DTRY(decode_exact_time(n, out));
  out = std::chrono::floor<std::chrono::seconds>(out);
  return {};
}

template <class N, class T> dstatus decode(N& n, std::optional<T>& out) {
  if (n.is_null()) {
    out.reset();
    return {};
  }
  out.emplace();
  return decode(n, *out);
}

// metav1.MicroTime (an Event's eventTime, a Lease's times): microseconds on the wire, as
// encode writes it; finer digits a writer sent are dropped, so a decoded value writes back as read.
template <class N> dstatus decode_micro(N& n, std::optional<time_point>& out) {
  if (n.is_null()) {
    out.reset();
    return {};
  }
  out.emplace();
  KOZMO_DTRY(decode_exact_time(n, *out));
  *out = std::chrono::floor<std::chrono::microseconds>(*out);
  return {};
}

template <class N, class T> dstatus decode(N& n, std::vector<T>& out) {
  out.clear();
  out.reserve(n.element_count()); // one allocation of the right size
  return n.elements([&](N& item) -> dstatus {
    out.emplace_back();
    return decode(item, out.back());
  });
}

template <class N, class T> dstatus decode(N& n, std::map<std::string, T>& out) {
  out.clear();
  return n.entries([&](std::string_view key, N& v) -> dstatus {
    // Go writes map keys sorted, so the end is the right hint; the value is decoded in place.
    std::size_t before = out.size();
    auto it = out.emplace_hint(out.end(), std::piecewise_construct, std::forward_as_tuple(key), std::tuple<>{});
    if (out.size() == before)
      it->second = T{}; // a repeated key: the last one wins, as in Go
    return decode(v, it->second);
  });
}

template <class N, class T> dstatus decode(N& n, boxed<T>& out) {
  if (n.is_null()) {
    out.reset();
    return {};
  }
  return decode(n, out.emplace());
}

// a < b in byte order, as std::string_view compares, inline: eight bytes at a time as
// big-endian words (label keys share long prefixes such as "training.kubeflow.org/"), so that
// the order check of every map entry is no call into memcmp.
inline bool key_less(std::string_view a, std::string_view b) {
  std::size_t n = a.size() < b.size() ? a.size() : b.size();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) {
      if constexpr (std::endian::native == std::endian::little)
        return __builtin_bswap64(x) < __builtin_bswap64(y);
      else
        return x < y;
    }
  }
  for (; i < n; ++i) {
    if (a[i] != b[i])
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  }
  return a.size() < b.size();
}

// A map's keys are put in order before any entry is built, so that each entry is constructed
// once, in place, at the end (no entry is moved to make room for another). Go sorts map keys
// when it writes them, but hand-written JSON need not; a repeated key keeps its last value.
template <class N, class T> dstatus decode(N& n, flat_map<std::string, T>& out) {
  out.clear();
  std::size_t count = n.member_count();
  constexpr std::size_t on_stack = 16;
  if (count == 0 || count > on_stack) // unknown or large: entry by entry
    return n.entries([&](std::string_view key, N& v) -> dstatus { return decode(v, out.append_or_reset(key)); });
  struct entry {
    std::string_view key;
    N node;
  };
  alignas(entry) unsigned char raw[on_stack * sizeof(entry)];
  entry* entries = reinterpret_cast<entry*>(raw);
  std::size_t size = 0;
  bool sorted = true;
  (void)n.entries([&](std::string_view key, N& v) -> dstatus {
    if (size > 0 && !key_less(entries[size - 1].key, key))
      sorted = false;
    std::construct_at(entries + size, entry{key, v});
    ++size;
    return {};
  });
  if (!sorted) {
    // Insertion sort, stable: of equal keys the last stays last.
    for (std::size_t i = 1; i < size; ++i) {
      for (std::size_t j = i; j > 0 && key_less(entries[j].key, entries[j - 1].key); --j)
        std::swap(entries[j], entries[j - 1]);
    }
  }
  out.reserve(size);
  for (std::size_t i = 0; i < size; ++i) {
    if (i + 1 < size && entries[i].key == entries[i + 1].key)
      continue; // a repeated key: the last one wins, as in Go
    if (auto s = decode(entries[i].node, out.append_in_order(entries[i].key)); !s.ok()) [[unlikely]]
      return std::move(s).in_key(entries[i].key);
  }
  return {};
}

// An object decoded member by member with decode_field(key, node, out).
template <class N, class S>
auto decode(N& n, S& out) -> decltype(decode_field(field_key{}, n, out)) {
  return n.fields([&](std::string_view k, N& v) { return decode_field(field_key{k}, v, out); });
}

// ---- metadata --------------------------------------------------------------------------

template <class N> dstatus decode_field(field_key k, N& v, owner_reference& o) {
  switch (k.s.size()) {
  case 3: return k == "uid" ? decode(v, o.uid) : dstatus{};
  case 4:
    if (k == "kind") return decode(v, o.kind);
    if (k == "name") return decode(v, o.name);
    return {};
  case 10:
    if (k == "apiVersion") return decode(v, o.api_version);
    if (k == "controller") return decode(v, o.controller);
    return {};
  case 18: return k == "blockOwnerDeletion" ? decode(v, o.block_owner_deletion) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, object_meta& m) {
  switch (k.s.size()) {
  case 3: return k == "uid" ? decode(v, m.uid) : dstatus{};
  case 4: return k == "name" ? decode(v, m.name) : dstatus{};
  case 6: return k == "labels" ? decode(v, m.labels) : dstatus{};
  case 9: return k == "namespace" ? decode(v, m.namespace_) : dstatus{};
  case 10:
    if (k == "generation") return decode(v, m.generation);
    if (k == "finalizers") return decode(v, m.finalizers);
    return {};
  case 11: return k == "annotations" ? decode(v, m.annotations) : dstatus{};
  case 12: return k == "generateName" ? decode(v, m.generate_name) : dstatus{};
  case 15:
    if (k == "resourceVersion") return decode(v, m.resource_version);
    if (k == "ownerReferences") return decode(v, m.owner_references);
    return {};
  case 17:
    if (k == "creationTimestamp") return decode(v, m.creation_timestamp);
    if (k == "deletionTimestamp") return decode(v, m.deletion_timestamp);
    return {};
  case 26: return k == "deletionGracePeriodSeconds" ? decode(v, m.deletion_grace_period_seconds) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, object_reference& r) {
  if (k == "kind") return decode(v, r.kind);
  if (k == "namespace") return decode(v, r.namespace_);
  if (k == "name") return decode(v, r.name);
  if (k == "uid") return decode(v, r.uid);
  if (k == "apiVersion") return decode(v, r.api_version);
  if (k == "resourceVersion") return decode(v, r.resource_version);
  if (k == "fieldPath") return decode(v, r.field_path);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, condition& c) {
  switch (k.s.size()) {
  case 4: return k == "type" ? decode(v, c.type) : dstatus{};
  case 6:
    if (k == "status") return decode(v, c.status);
    if (k == "reason") return decode(v, c.reason);
    return {};
  case 7: return k == "message" ? decode(v, c.message) : dstatus{};
  case 13: return k == "lastProbeTime" ? decode(v, c.last_probe_time) : dstatus{};
  case 17: return k == "lastHeartbeatTime" ? decode(v, c.last_heartbeat_time) : dstatus{};
  case 18: return k == "lastTransitionTime" ? decode(v, c.last_transition_time) : dstatus{};
  default: return {};
  }
}

// ---- pod spec --------------------------------------------------------------------------

template <class N> dstatus decode_field(field_key k, N& v, object_field_selector& f) {
  if (k == "apiVersion") return decode(v, f.api_version);
  if (k == "fieldPath") return decode(v, f.field_path);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, key_selector& s) {
  if (k == "name") return decode(v, s.name);
  if (k == "key") return decode(v, s.key);
  if (k == "optional") return decode(v, s.optional);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, resource_field_selector& s) {
  if (k == "containerName") return decode(v, s.container_name);
  if (k == "resource") return decode(v, s.resource);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, env_var_source& s) {
  if (k == "fieldRef") return decode(v, s.field_ref);
  if (k == "resourceFieldRef") return decode(v, s.resource_field_ref);
  if (k == "configMapKeyRef") return decode(v, s.config_map_key_ref);
  if (k == "secretKeyRef") return decode(v, s.secret_key_ref);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, env_var& e) {
  if (k == "name") return decode(v, e.name);
  if (k == "value") return decode(v, e.value);
  if (k == "valueFrom") return decode(v, e.value_from);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, container_port& p) {
  switch (k.s.size()) {
  case 4: return k == "name" ? decode(v, p.name) : dstatus{};
  case 8:
    if (k == "protocol") return decode(v, p.protocol);
    if (k == "hostPort") return decode(v, p.host_port);
    return {};
  case 13: return k == "containerPort" ? decode(v, p.container_port) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, resource_requirements& r) {
  if (k == "requests") return decode(v, r.requests);
  if (k == "limits") return decode(v, r.limits);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, container& c) {
  switch (k.s.size()) {
  case 3: return k == "env" ? decode(v, c.env) : dstatus{};
  case 4:
    if (k == "name") return decode(v, c.name);
    if (k == "args") return decode(v, c.args);
    return {};
  case 5:
    if (k == "image") return decode(v, c.image);
    if (k == "ports") return decode(v, c.ports);
    return {};
  case 7: return k == "command" ? decode(v, c.command) : dstatus{};
  case 9: return k == "resources" ? decode(v, c.resources) : dstatus{};
  case 10: return k == "workingDir" ? decode(v, c.working_dir) : dstatus{};
  case 15: return k == "imagePullPolicy" ? decode(v, c.image_pull_policy) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, toleration& t) {
  switch (k.s.size()) {
  case 3: return k == "key" ? decode(v, t.key) : dstatus{};
  case 5: return k == "value" ? decode(v, t.value) : dstatus{};
  case 6: return k == "effect" ? decode(v, t.effect) : dstatus{};
  case 8: return k == "operator" ? decode(v, t.operator_) : dstatus{};
  case 17: return k == "tolerationSeconds" ? decode(v, t.toleration_seconds) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, node_selector_requirement& r) {
  if (k == "key") return decode(v, r.key);
  if (k == "operator") return decode(v, r.operator_);
  if (k == "values") return decode(v, r.values);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, node_selector_term& t) {
  if (k == "matchExpressions") return decode(v, t.match_expressions);
  if (k == "matchFields") return decode(v, t.match_fields);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, preferred_scheduling_term& t) {
  if (k == "weight") return decode(v, t.weight);
  if (k == "preference") return decode(v, t.preference);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, node_affinity& a) {
  if (k == "requiredDuringSchedulingIgnoredDuringExecution") {
    if (v.kind() == node_kind::null)
      return {};
    a.required.emplace();
    return v.fields([&](std::string_view f, N& x) {
      return f == "nodeSelectorTerms" ? decode(x, *a.required) : dstatus{};
    });
  }
  if (k == "preferredDuringSchedulingIgnoredDuringExecution") return decode(v, a.preferred);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, affinity& a) {
  if (k == "nodeAffinity") return decode(v, a.node_affinity);
  if (k == "podAffinity") return decode(v, a.pod_affinity);
  if (k == "podAntiAffinity") return decode(v, a.pod_anti_affinity);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, pod_spec& s) {
  switch (k.s.size()) {
  case 8:
    if (k == "nodeName") return decode(v, s.node_name);
    if (k == "priority") return decode(v, s.priority);
    if (k == "affinity") return decode(v, s.affinity);
    if (k == "hostname") return decode(v, s.hostname);
    return {};
  case 9:
    if (k == "subdomain") return decode(v, s.subdomain);
    if (k == "dnsPolicy") return decode(v, s.dns_policy);
    return {};
  case 10: return k == "containers" ? decode(v, s.containers) : dstatus{};
  case 11:
    if (k == "tolerations") return decode(v, s.tolerations);
    if (k == "hostNetwork") return decode(v, s.host_network);
    return {};
  case 12: return k == "nodeSelector" ? decode(v, s.node_selector) : dstatus{};
  case 13:
    if (k == "schedulerName") return decode(v, s.scheduler_name);
    if (k == "restartPolicy") return decode(v, s.restart_policy);
    return {};
  case 14: return k == "initContainers" ? decode(v, s.init_containers) : dstatus{};
  case 17: return k == "priorityClassName" ? decode(v, s.priority_class_name) : dstatus{};
  case 18: return k == "serviceAccountName" ? decode(v, s.service_account_name) : dstatus{};
  case 21: return k == "activeDeadlineSeconds" ? decode(v, s.active_deadline_seconds) : dstatus{};
  case 29: return k == "terminationGracePeriodSeconds" ? decode(v, s.termination_grace_period_seconds) : dstatus{};
  default: return {};
  }
}

// ---- pod status ------------------------------------------------------------------------

template <class N> dstatus decode_field(field_key k, N& v, container_state_waiting& w) {
  if (k == "reason") return decode(v, w.reason);
  if (k == "message") return decode(v, w.message);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, container_state_running& r) {
  if (k == "startedAt") return decode(v, r.started_at);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, container_state_terminated& t) {
  switch (k.s.size()) {
  case 6:
    if (k == "signal") return decode(v, t.signal);
    if (k == "reason") return decode(v, t.reason);
    return {};
  case 7: return k == "message" ? decode(v, t.message) : dstatus{};
  case 8: return k == "exitCode" ? decode(v, t.exit_code) : dstatus{};
  case 9: return k == "startedAt" ? decode(v, t.started_at) : dstatus{};
  case 10: return k == "finishedAt" ? decode(v, t.finished_at) : dstatus{};
  case 11: return k == "containerID" ? decode(v, t.container_id) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, container_state& s) {
  if (k == "waiting") return decode(v, s.waiting);
  if (k == "running") return decode(v, s.running);
  if (k == "terminated") return decode(v, s.terminated);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, container_status& s) {
  switch (k.s.size()) {
  case 4: return k == "name" ? decode(v, s.name) : dstatus{};
  case 5:
    if (k == "state") return decode(v, s.state);
    if (k == "ready") return decode(v, s.ready);
    if (k == "image") return decode(v, s.image);
    return {};
  case 7:
    if (k == "imageID") return decode(v, s.image_id);
    if (k == "started") return decode(v, s.started);
    return {};
  case 9: return k == "lastState" ? decode(v, s.last_state) : dstatus{};
  case 11: return k == "containerID" ? decode(v, s.container_id) : dstatus{};
  case 12: return k == "restartCount" ? decode(v, s.restart_count) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_pod_ips(N& n, std::vector<std::string>& out) {
  out.clear();
  out.reserve(n.element_count());
  return n.elements([&](N& item) -> dstatus {
    std::string ip;
    KOZMO_DTRY(item.fields([&](std::string_view k, N& v) -> dstatus { return k == "ip" ? decode(v, ip) : dstatus{}; }));
    out.push_back(std::move(ip));
    return {};
  });
}

template <class N> dstatus decode_field(field_key k, N& v, pod_status& s) {
  switch (k.s.size()) {
  case 5:
    if (k == "phase") return decode(v, s.phase);
    if (k == "podIP") return decode(v, s.pod_ip);
    return {};
  case 6:
    if (k == "hostIP") return decode(v, s.host_ip);
    if (k == "podIPs") return decode_pod_ips(v, s.pod_ips);
    if (k == "reason") return decode(v, s.reason);
    return {};
  case 7: return k == "message" ? decode(v, s.message) : dstatus{};
  case 8: return k == "qosClass" ? decode(v, s.qos_class) : dstatus{};
  case 9: return k == "startTime" ? decode(v, s.start_time) : dstatus{};
  case 10: return k == "conditions" ? decode(v, s.conditions) : dstatus{};
  case 17:
    if (k == "containerStatuses") return decode(v, s.container_statuses);
    if (k == "nominatedNodeName") return decode(v, s.nominated_node_name);
    return {};
  case 21: return k == "initContainerStatuses" ? decode(v, s.init_container_statuses) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, pod& p) {
  if (k == "metadata") return decode(v, p.metadata);
  if (k == "spec") return decode(v, p.spec);
  if (k == "status") return decode(v, p.status);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, pod_template_spec& t) {
  if (k == "metadata") return decode(v, t.metadata);
  if (k == "spec") return decode(v, t.spec);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, pod_template& t) {
  if (k == "metadata") return decode(v, t.metadata);
  if (k == "template") return decode(v, t.template_);
  return {};
}

} // namespace kozmo::k8s::detail
