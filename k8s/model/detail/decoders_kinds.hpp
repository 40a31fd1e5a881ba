// Private to k8s/model: the decoders of the kinds other than pods (nodes, services, events,
// leases, namespaces, API statuses) and of lists, written like those of decoders.hpp.
#pragma once

#include "k8s/model/detail/decoders.hpp"

namespace kozmo::k8s::detail {

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
  switch (k.s.size()) {
  case 6: return k == "bootID" ? decode(v, i.boot_id) : dstatus{};
  case 7: return k == "osImage" ? decode(v, i.os_image) : dstatus{};
  case 9: return k == "machineID" ? decode(v, i.machine_id) : dstatus{};
  case 10: return k == "systemUUID" ? decode(v, i.system_uuid) : dstatus{};
  case 12: return k == "architecture" ? decode(v, i.architecture) : dstatus{};
  case 13: return k == "kernelVersion" ? decode(v, i.kernel_version) : dstatus{};
  case 14: return k == "kubeletVersion" ? decode(v, i.kubelet_version) : dstatus{};
  case 15: return k == "operatingSystem" ? decode(v, i.operating_system) : dstatus{};
  case 16: return k == "kubeProxyVersion" ? decode(v, i.kube_proxy_version) : dstatus{};
  case 23: return k == "containerRuntimeVersion" ? decode(v, i.container_runtime_version) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, node_status& s) {
  switch (k.s.size()) {
  case 5: return k == "phase" ? decode(v, s.phase) : dstatus{};
  case 8:
    if (k == "capacity") return decode(v, s.capacity);
    if (k == "nodeInfo") return decode(v, s.node_info);
    return {};
  case 9: return k == "addresses" ? decode(v, s.addresses) : dstatus{};
  case 10: return k == "conditions" ? decode(v, s.conditions) : dstatus{};
  case 11: return k == "allocatable" ? decode(v, s.allocatable) : dstatus{};
  default: return {};
  }
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
  switch (k.s.size()) {
  case 4: return k == "type" ? decode(v, e.type) : dstatus{};
  case 5: return k == "count" ? decode(v, e.count) : dstatus{};
  case 6:
    if (k == "reason") return decode(v, e.reason);
    if (k == "source") return decode(v, e.source);
    if (k == "action") return decode(v, e.action);
    return {};
  case 7: return k == "message" ? decode(v, e.message) : dstatus{};
  case 8: return k == "metadata" ? decode(v, e.metadata) : dstatus{};
  case 9: return k == "eventTime" ? decode_micro(v, e.event_time) : dstatus{};
  case 13: return k == "lastTimestamp" ? decode(v, e.last_timestamp) : dstatus{};
  case 14:
    if (k == "involvedObject") return decode(v, e.involved_object);
    if (k == "firstTimestamp") return decode(v, e.first_timestamp);
    return {};
  case 17: return k == "reportingInstance" ? decode(v, e.reporting_instance) : dstatus{};
  case 18: return k == "reportingComponent" ? decode(v, e.reporting_component) : dstatus{};
  default: return {};
  }
}

template <class N> dstatus decode_field(field_key k, N& v, lease_spec& s) {
  if (k == "holderIdentity") return decode(v, s.holder_identity);
  if (k == "leaseDurationSeconds") return decode(v, s.lease_duration_seconds);
  if (k == "acquireTime") return decode_micro(v, s.acquire_time);
  if (k == "renewTime") return decode_micro(v, s.renew_time);
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
