// Private to k8s/model: one decoder per model type, written once as templates over a
// "node" — a cursor on a JSON value — and instantiated twice: over simdjson's parsed tape
// (decode_fast.cpp, the watch hot path) and over json::value trees (decode_tree.cpp).
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
// compile-time number of bytes inline.
struct field_key {
  std::string_view s;
  template <std::size_t N> bool operator==(const char (&lit)[N]) const {
    return s.size() == N - 1 && same_bytes<N - 1>(s.data(), lit);
  }
};

// ---- leaves and containers -------------------------------------------------------------

template <class N> dstatus decode(N& n, std::string& out) { return n.read(out); }
template <class N> dstatus decode(N& n, std::int64_t& out) { return n.read(out); }
template <class N> dstatus decode(N& n, std::int32_t& out) { return n.read(out); }
template <class N> dstatus decode(N& n, bool& out) { return n.read(out); }
template <class N> dstatus decode(N& n, json::value& out) { return n.read(out); }
template <class N> dstatus decode(N& n, quantity& out) { return n.read_quantity(out); }

template <class N> dstatus decode(N& n, time_point& out) {
  std::string_view text;
  KOZMO_DTRY(n.read_view(text));
  if (text.empty())
    return {};
  if (parse_time_fast(text, out))
    return {};
  auto t = parse_time(text);
  if (!t)
    return dstatus::fail(t.err().message);
  out = *t;
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
    if (size > 0 && !(entries[size - 1].key < key))
      sorted = false;
    std::construct_at(entries + size, entry{key, v});
    ++size;
    return {};
  });
  if (!sorted) {
    // Insertion sort, stable: of equal keys the last stays last.
    for (std::size_t i = 1; i < size; ++i) {
      for (std::size_t j = i; j > 0 && entries[j].key < entries[j - 1].key; --j)
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
  if (k == "apiVersion") return decode(v, o.api_version);
  if (k == "kind") return decode(v, o.kind);
  if (k == "name") return decode(v, o.name);
  if (k == "uid") return decode(v, o.uid);
  if (k == "controller") return decode(v, o.controller);
  if (k == "blockOwnerDeletion") return decode(v, o.block_owner_deletion);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, object_meta& m) {
  if (k == "name") return decode(v, m.name);
  if (k == "namespace") return decode(v, m.namespace_);
  if (k == "uid") return decode(v, m.uid);
  if (k == "resourceVersion") return decode(v, m.resource_version);
  if (k == "labels") return decode(v, m.labels);
  if (k == "annotations") return decode(v, m.annotations);
  if (k == "creationTimestamp") return decode(v, m.creation_timestamp);
  if (k == "generation") return decode(v, m.generation);
  if (k == "generateName") return decode(v, m.generate_name);
  if (k == "ownerReferences") return decode(v, m.owner_references);
  if (k == "finalizers") return decode(v, m.finalizers);
  if (k == "deletionTimestamp") return decode(v, m.deletion_timestamp);
  if (k == "deletionGracePeriodSeconds") return decode(v, m.deletion_grace_period_seconds);
  return {};
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
  if (k == "type") return decode(v, c.type);
  if (k == "status") return decode(v, c.status);
  if (k == "reason") return decode(v, c.reason);
  if (k == "message") return decode(v, c.message);
  if (k == "lastTransitionTime") return decode(v, c.last_transition_time);
  if (k == "lastProbeTime") return decode(v, c.last_probe_time);
  if (k == "lastHeartbeatTime") return decode(v, c.last_heartbeat_time);
  return {};
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
  if (k == "name") return decode(v, p.name);
  if (k == "containerPort") return decode(v, p.container_port);
  if (k == "protocol") return decode(v, p.protocol);
  if (k == "hostPort") return decode(v, p.host_port);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, resource_requirements& r) {
  if (k == "requests") return decode(v, r.requests);
  if (k == "limits") return decode(v, r.limits);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, container& c) {
  if (k == "name") return decode(v, c.name);
  if (k == "image") return decode(v, c.image);
  if (k == "resources") return decode(v, c.resources);
  if (k == "env") return decode(v, c.env);
  if (k == "ports") return decode(v, c.ports);
  if (k == "command") return decode(v, c.command);
  if (k == "args") return decode(v, c.args);
  if (k == "imagePullPolicy") return decode(v, c.image_pull_policy);
  if (k == "workingDir") return decode(v, c.working_dir);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, toleration& t) {
  if (k == "key") return decode(v, t.key);
  if (k == "operator") return decode(v, t.operator_);
  if (k == "value") return decode(v, t.value);
  if (k == "effect") return decode(v, t.effect);
  if (k == "tolerationSeconds") return decode(v, t.toleration_seconds);
  return {};
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
  if (k == "containers") return decode(v, s.containers);
  if (k == "initContainers") return decode(v, s.init_containers);
  if (k == "nodeName") return decode(v, s.node_name);
  if (k == "schedulerName") return decode(v, s.scheduler_name);
  if (k == "restartPolicy") return decode(v, s.restart_policy);
  if (k == "tolerations") return decode(v, s.tolerations);
  if (k == "priority") return decode(v, s.priority);
  if (k == "priorityClassName") return decode(v, s.priority_class_name);
  if (k == "nodeSelector") return decode(v, s.node_selector);
  if (k == "affinity") return decode(v, s.affinity);
  if (k == "terminationGracePeriodSeconds") return decode(v, s.termination_grace_period_seconds);
  if (k == "activeDeadlineSeconds") return decode(v, s.active_deadline_seconds);
  if (k == "serviceAccountName") return decode(v, s.service_account_name);
  if (k == "hostname") return decode(v, s.hostname);
  if (k == "subdomain") return decode(v, s.subdomain);
  if (k == "dnsPolicy") return decode(v, s.dns_policy);
  if (k == "hostNetwork") return decode(v, s.host_network);
  return {};
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
  if (k == "exitCode") return decode(v, t.exit_code);
  if (k == "signal") return decode(v, t.signal);
  if (k == "reason") return decode(v, t.reason);
  if (k == "message") return decode(v, t.message);
  if (k == "startedAt") return decode(v, t.started_at);
  if (k == "finishedAt") return decode(v, t.finished_at);
  if (k == "containerID") return decode(v, t.container_id);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, container_state& s) {
  if (k == "waiting") return decode(v, s.waiting);
  if (k == "running") return decode(v, s.running);
  if (k == "terminated") return decode(v, s.terminated);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, container_status& s) {
  if (k == "name") return decode(v, s.name);
  if (k == "state") return decode(v, s.state);
  if (k == "lastState") return decode(v, s.last_state);
  if (k == "ready") return decode(v, s.ready);
  if (k == "restartCount") return decode(v, s.restart_count);
  if (k == "image") return decode(v, s.image);
  if (k == "imageID") return decode(v, s.image_id);
  if (k == "containerID") return decode(v, s.container_id);
  if (k == "started") return decode(v, s.started);
  return {};
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
  if (k == "phase") return decode(v, s.phase);
  if (k == "conditions") return decode(v, s.conditions);
  if (k == "containerStatuses") return decode(v, s.container_statuses);
  if (k == "initContainerStatuses") return decode(v, s.init_container_statuses);
  if (k == "hostIP") return decode(v, s.host_ip);
  if (k == "podIP") return decode(v, s.pod_ip);
  if (k == "podIPs") return decode_pod_ips(v, s.pod_ips);
  if (k == "startTime") return decode(v, s.start_time);
  if (k == "message") return decode(v, s.message);
  if (k == "reason") return decode(v, s.reason);
  if (k == "nominatedNodeName") return decode(v, s.nominated_node_name);
  if (k == "qosClass") return decode(v, s.qos_class);
  return {};
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

// ---- node ------------------------------------------------------------------------------

template <class N> dstatus decode_field(field_key k, N& v, taint& t) {
  if (k == "key") return decode(v, t.key);
  if (k == "value") return decode(v, t.value);
  if (k == "effect") return decode(v, t.effect);
  if (k == "timeAdded") return decode(v, t.time_added);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, node_spec& s) {
  if (k == "podCIDR") return decode(v, s.pod_cidr);
  if (k == "podCIDRs") return decode(v, s.pod_cidrs);
  if (k == "providerID") return decode(v, s.provider_id);
  if (k == "unschedulable") return decode(v, s.unschedulable);
  if (k == "taints") return decode(v, s.taints);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, node_address& a) {
  if (k == "type") return decode(v, a.type);
  if (k == "address") return decode(v, a.address);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, node_system_info& i) {
  if (k == "machineID") return decode(v, i.machine_id);
  if (k == "kernelVersion") return decode(v, i.kernel_version);
  if (k == "osImage") return decode(v, i.os_image);
  if (k == "containerRuntimeVersion") return decode(v, i.container_runtime_version);
  if (k == "kubeletVersion") return decode(v, i.kubelet_version);
  if (k == "operatingSystem") return decode(v, i.operating_system);
  if (k == "architecture") return decode(v, i.architecture);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, node_status& s) {
  if (k == "capacity") return decode(v, s.capacity);
  if (k == "allocatable") return decode(v, s.allocatable);
  if (k == "conditions") return decode(v, s.conditions);
  if (k == "addresses") return decode(v, s.addresses);
  if (k == "nodeInfo") return decode(v, s.node_info);
  if (k == "phase") return decode(v, s.phase);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, node& n) {
  if (k == "metadata") return decode(v, n.metadata);
  if (k == "spec") return decode(v, n.spec);
  if (k == "status") return decode(v, n.status);
  return {};
}

// ---- service, event, lease, namespace, status ------------------------------------------

template <class N> dstatus decode(N& n, int_or_string& out) {
  switch (n.kind()) {
  case node_kind::null: return {};
  case node_kind::string:
    out.is_string = true;
    return n.read(out.string_value);
  case node_kind::number:
    out.is_string = false;
    return n.read(out.int_value);
  default: return dstatus::type_error("an integer or a string", describe(n.kind()));
  }
}

template <class N> dstatus decode_field(field_key k, N& v, service_port& p) {
  if (k == "name") return decode(v, p.name);
  if (k == "protocol") return decode(v, p.protocol);
  if (k == "port") return decode(v, p.port);
  if (k == "targetPort") return decode(v, p.target_port);
  if (k == "nodePort") return decode(v, p.node_port);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, service_spec& s) {
  if (k == "ports") return decode(v, s.ports);
  if (k == "selector") return decode(v, s.selector);
  if (k == "clusterIP") return decode(v, s.cluster_ip);
  if (k == "clusterIPs") return decode(v, s.cluster_ips);
  if (k == "type") return decode(v, s.type);
  if (k == "publishNotReadyAddresses") return decode(v, s.publish_not_ready_addresses);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, service& s) {
  if (k == "metadata") return decode(v, s.metadata);
  if (k == "spec") return decode(v, s.spec);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, event_source& s) {
  if (k == "component") return decode(v, s.component);
  if (k == "host") return decode(v, s.host);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, event& e) {
  if (k == "metadata") return decode(v, e.metadata);
  if (k == "involvedObject") return decode(v, e.involved_object);
  if (k == "reason") return decode(v, e.reason);
  if (k == "message") return decode(v, e.message);
  if (k == "source") return decode(v, e.source);
  if (k == "firstTimestamp") return decode(v, e.first_timestamp);
  if (k == "lastTimestamp") return decode(v, e.last_timestamp);
  if (k == "count") return decode(v, e.count);
  if (k == "type") return decode(v, e.type);
  if (k == "eventTime") return decode(v, e.event_time);
  if (k == "action") return decode(v, e.action);
  if (k == "reportingComponent") return decode(v, e.reporting_component);
  if (k == "reportingInstance") return decode(v, e.reporting_instance);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, lease_spec& s) {
  if (k == "holderIdentity") return decode(v, s.holder_identity);
  if (k == "leaseDurationSeconds") return decode(v, s.lease_duration_seconds);
  if (k == "acquireTime") return decode(v, s.acquire_time);
  if (k == "renewTime") return decode(v, s.renew_time);
  if (k == "leaseTransitions") return decode(v, s.lease_transitions);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, lease& l) {
  if (k == "metadata") return decode(v, l.metadata);
  if (k == "spec") return decode(v, l.spec);
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, namespace_object& ns) {
  if (k == "metadata") return decode(v, ns.metadata);
  if (k == "spec")
    return v.fields([&](std::string_view f, N& x) { return f == "finalizers" ? decode(x, ns.finalizers) : dstatus{}; });
  if (k == "status")
    return v.fields([&](std::string_view f, N& x) { return f == "phase" ? decode(x, ns.phase) : dstatus{}; });
  return {};
}

template <class N> dstatus decode_field(field_key k, N& v, api_status& s) {
  if (k == "status") return decode(v, s.status);
  if (k == "message") return decode(v, s.message);
  if (k == "reason") return decode(v, s.reason);
  if (k == "code") return decode(v, s.code);
  if (k == "details") return decode(v, s.details);
  return {};
}

// ---- lists -----------------------------------------------------------------------------

template <class N, class T> dstatus decode_field(field_key k, N& v, object_list<T>& l) {
  if (k == "items") return decode(v, l.items);
  if (k != "metadata")
    return {};
  return v.fields([&](std::string_view f, N& x) -> dstatus {
    if (f == "resourceVersion") return decode(x, l.resource_version);
    if (f == "continue") return decode(x, l.continue_token);
    if (f == "remainingItemCount") return decode(x, l.remaining_item_count);
    return {};
  });
}

} // namespace kozmo::k8s::detail
