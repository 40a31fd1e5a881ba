// Models → Kubernetes JSON, for creating new objects. Fields follow Go's omitempty: an empty
// string, zero, false, empty list or map is left out, except where the API type writes it
// regardless (containers, containerPort, ready, restartCount, exitCode, port).
#include "k8s/model/codec.hpp"

namespace kozmo::k8s {
namespace {

using json::object;

void put(object& o, std::string_view k, const std::string& v) {
  if (!v.empty())
    o.set(k, v);
}
void put(object& o, std::string_view k, std::int64_t v) {
  if (v != 0)
    o.set(k, static_cast<long long>(v));
}
void put(object& o, std::string_view k, bool v) {
  if (v)
    o.set(k, true);
}
void put(object& o, std::string_view k, const std::optional<bool>& v) {
  if (v)
    o.set(k, *v);
}
template <class I>
void put(object& o, std::string_view k, const std::optional<I>& v) {
  if (v)
    o.set(k, static_cast<long long>(*v));
}
void put(object& o, std::string_view k, const std::optional<time_point>& t) {
  if (t)
    o.set(k, format_time(*t));
}
void put_micro(object& o, std::string_view k, const std::optional<time_point>& t) {
  if (t)
    o.set(k, format_micro_time(*t));
}
void put(object& o, std::string_view k, const string_map& m) {
  if (m.empty())
    return;
  object out;
  for (auto& [key, v] : m)
    out.set(key, v);
  o.set(k, std::move(out));
}
void put(object& o, std::string_view k, const std::vector<std::string>& v) {
  if (v.empty())
    return;
  json::array a;
  for (auto& s : v)
    a.emplace_back(s);
  o.set(k, std::move(a));
}
void put(object& o, std::string_view k, const json::value& v) {
  if (!v.is_null())
    o.set(k, v);
}
void put(object& o, std::string_view k, json::value&& v) {
  bool empty = (v.is_object() && v.as_object().empty()) || v.is_null();
  if (!empty)
    o.set(k, std::move(v));
}
template <class T, class Enc>
void put_list(object& o, std::string_view k, const std::vector<T>& items, Enc enc) {
  if (items.empty())
    return;
  json::array a;
  a.reserve(items.size());
  for (auto& item : items)
    a.push_back(enc(item));
  o.set(k, std::move(a));
}

json::value top_level(std::string_view api_version, std::string_view kind, const object_meta& m) {
  object o;
  o.set("apiVersion", api_version);
  o.set("kind", kind);
  o.set("metadata", to_json(m));
  return o;
}

json::value encode_env(const env_var& e) {
  object o;
  o.set("name", e.name);
  put(o, "value", e.value);
  if (e.value_from) {
    object from;
    auto& s = *e.value_from;
    if (s.field_ref) {
      object f;
      put(f, "apiVersion", s.field_ref->api_version);
      f.set("fieldPath", s.field_ref->field_path);
      from.set("fieldRef", std::move(f));
    }
    if (s.resource_field_ref) {
      object f;
      put(f, "containerName", s.resource_field_ref->container_name);
      f.set("resource", s.resource_field_ref->resource);
      from.set("resourceFieldRef", std::move(f));
    }
    auto key_ref = [](const key_selector& k) {
      object f;
      put(f, "name", k.name);
      f.set("key", k.key);
      put(f, "optional", k.optional);
      return f;
    };
    if (s.config_map_key_ref)
      from.set("configMapKeyRef", key_ref(*s.config_map_key_ref));
    if (s.secret_key_ref)
      from.set("secretKeyRef", key_ref(*s.secret_key_ref));
    o.set("valueFrom", std::move(from));
  }
  return o;
}

json::value encode_port(const container_port& p) {
  object o;
  put(o, "name", p.name);
  put(o, "hostPort", std::int64_t(p.host_port));
  o.set("containerPort", static_cast<long long>(p.container_port));
  put(o, "protocol", p.protocol);
  return o;
}

json::value encode_toleration(const toleration& t) {
  object o;
  put(o, "key", t.key);
  put(o, "operator", t.operator_);
  put(o, "value", t.value);
  put(o, "effect", t.effect);
  put(o, "tolerationSeconds", t.toleration_seconds);
  return o;
}

json::value encode_requirements(const std::vector<node_selector_requirement>& rs) {
  json::array a;
  for (auto& r : rs) {
    object o;
    o.set("key", r.key);
    o.set("operator", r.operator_);
    put(o, "values", r.values);
    a.push_back(std::move(o));
  }
  return a;
}

json::value encode_term(const node_selector_term& t) {
  object o;
  if (!t.match_expressions.empty())
    o.set("matchExpressions", encode_requirements(t.match_expressions));
  if (!t.match_fields.empty())
    o.set("matchFields", encode_requirements(t.match_fields));
  return o;
}

json::value encode_affinity(const affinity& a) {
  object o;
  if (a.node_affinity) {
    object na;
    if (a.node_affinity->required) {
      json::array terms;
      for (auto& t : *a.node_affinity->required)
        terms.push_back(encode_term(t));
      na.set("requiredDuringSchedulingIgnoredDuringExecution", object{{"nodeSelectorTerms", std::move(terms)}});
    }
    put_list(na, "preferredDuringSchedulingIgnoredDuringExecution", a.node_affinity->preferred,
             [](const preferred_scheduling_term& t) {
               return json::value(object{{"weight", t.weight}, {"preference", encode_term(t.preference)}});
             });
    o.set("nodeAffinity", std::move(na));
  }
  put(o, "podAffinity", a.pod_affinity);
  put(o, "podAntiAffinity", a.pod_anti_affinity);
  return o;
}

json::value encode_state(const container_state& s) {
  object o;
  if (s.waiting) {
    object w;
    put(w, "reason", s.waiting->reason);
    put(w, "message", s.waiting->message);
    o.set("waiting", std::move(w));
  }
  if (s.running) {
    object r;
    put(r, "startedAt", s.running->started_at);
    o.set("running", std::move(r));
  }
  if (s.terminated) {
    auto& t = *s.terminated;
    object x;
    x.set("exitCode", static_cast<long long>(t.exit_code));
    put(x, "signal", std::int64_t(t.signal));
    put(x, "reason", t.reason);
    put(x, "message", t.message);
    put(x, "startedAt", t.started_at);
    put(x, "finishedAt", t.finished_at);
    put(x, "containerID", t.container_id);
    o.set("terminated", std::move(x));
  }
  return o;
}

json::value encode_container_status(const container_status& s) {
  object o;
  o.set("name", s.name);
  o.set("state", encode_state(s.state));
  o.set("lastState", encode_state(s.last_state));
  o.set("ready", s.ready);
  o.set("restartCount", static_cast<long long>(s.restart_count));
  o.set("image", s.image);
  o.set("imageID", s.image_id);
  put(o, "containerID", s.container_id);
  put(o, "started", s.started);
  return o;
}

json::value encode_taint(const taint& t) {
  object o;
  o.set("key", t.key);
  put(o, "value", t.value);
  o.set("effect", t.effect);
  put(o, "timeAdded", t.time_added);
  return o;
}

json::value encode_service_port(const service_port& p) {
  object o;
  put(o, "name", p.name);
  put(o, "protocol", p.protocol);
  o.set("port", static_cast<long long>(p.port));
  if (p.target_port) {
    if (p.target_port->is_string)
      o.set("targetPort", p.target_port->string_value);
    else
      o.set("targetPort", static_cast<long long>(p.target_port->int_value));
  }
  put(o, "nodePort", std::int64_t(p.node_port));
  return o;
}

} // namespace

json::value to_json(const owner_reference& r) {
  object o;
  o.set("apiVersion", r.api_version);
  o.set("kind", r.kind);
  o.set("name", r.name);
  o.set("uid", r.uid);
  put(o, "controller", r.controller);
  put(o, "blockOwnerDeletion", r.block_owner_deletion);
  return o;
}

json::value to_json(const condition& c) {
  object o;
  o.set("type", c.type);
  o.set("status", c.status);
  put(o, "lastProbeTime", c.last_probe_time);
  put(o, "lastHeartbeatTime", c.last_heartbeat_time);
  put(o, "lastTransitionTime", c.last_transition_time);
  put(o, "reason", c.reason);
  put(o, "message", c.message);
  return o;
}

json::value to_json(const object_meta& m) {
  object o;
  put(o, "name", m.name);
  put(o, "generateName", m.generate_name);
  put(o, "namespace", m.namespace_);
  put(o, "uid", m.uid);
  put(o, "resourceVersion", m.resource_version);
  put(o, "generation", m.generation);
  put(o, "creationTimestamp", m.creation_timestamp);
  put(o, "deletionTimestamp", m.deletion_timestamp);
  put(o, "deletionGracePeriodSeconds", m.deletion_grace_period_seconds);
  put(o, "labels", m.labels);
  put(o, "annotations", m.annotations);
  put_list(o, "ownerReferences", m.owner_references, [](auto& r) { return to_json(r); });
  put(o, "finalizers", m.finalizers);
  return o;
}

json::value to_json(const resource_list& r) {
  object o;
  for (auto& [name, q] : r)
    o.set(name, q.to_string());
  return o;
}

json::value to_json(const container& c) {
  object o;
  o.set("name", c.name);
  put(o, "image", c.image);
  put(o, "command", c.command);
  put(o, "args", c.args);
  put(o, "workingDir", c.working_dir);
  put_list(o, "ports", c.ports, encode_port);
  put_list(o, "env", c.env, encode_env);
  object res;
  if (!c.resources.limits.empty())
    res.set("limits", to_json(c.resources.limits));
  if (!c.resources.requests.empty())
    res.set("requests", to_json(c.resources.requests));
  o.set("resources", std::move(res));
  put(o, "imagePullPolicy", c.image_pull_policy);
  return o;
}

json::value to_json(const pod_spec& s) {
  object o;
  put_list(o, "initContainers", s.init_containers, [](auto& c) { return to_json(c); });
  json::array containers;
  for (auto& c : s.containers)
    containers.push_back(to_json(c));
  o.set("containers", std::move(containers));
  put(o, "restartPolicy", s.restart_policy);
  put(o, "terminationGracePeriodSeconds", s.termination_grace_period_seconds);
  put(o, "activeDeadlineSeconds", s.active_deadline_seconds);
  put(o, "dnsPolicy", s.dns_policy);
  put(o, "nodeSelector", s.node_selector);
  put(o, "serviceAccountName", s.service_account_name);
  put(o, "nodeName", s.node_name);
  put(o, "hostNetwork", s.host_network);
  put(o, "hostname", s.hostname);
  put(o, "subdomain", s.subdomain);
  if (s.affinity)
    o.set("affinity", encode_affinity(*s.affinity));
  put(o, "schedulerName", s.scheduler_name);
  put_list(o, "tolerations", s.tolerations, encode_toleration);
  put(o, "priorityClassName", s.priority_class_name);
  put(o, "priority", s.priority);
  return o;
}

json::value to_json(const pod_status& s) {
  object o;
  put(o, "phase", s.phase);
  put_list(o, "conditions", s.conditions, [](auto& c) { return to_json(c); });
  put(o, "message", s.message);
  put(o, "reason", s.reason);
  put(o, "nominatedNodeName", s.nominated_node_name);
  put(o, "hostIP", s.host_ip);
  put(o, "podIP", s.pod_ip);
  put_list(o, "podIPs", s.pod_ips, [](const std::string& ip) { return json::value(object{{"ip", ip}}); });
  put(o, "startTime", s.start_time);
  put_list(o, "initContainerStatuses", s.init_container_statuses, encode_container_status);
  put_list(o, "containerStatuses", s.container_statuses, encode_container_status);
  put(o, "qosClass", s.qos_class);
  return o;
}

json::value to_json(const pod_template_spec& t) {
  object o;
  o.set("metadata", to_json(t.metadata));
  o.set("spec", to_json(t.spec));
  return o;
}

json::value to_json(const pod& p) {
  json::value v = top_level(pod::api_version, pod::kind, p.metadata);
  v.as_object().set("spec", to_json(p.spec));
  v.as_object().set("status", to_json(p.status));
  return v;
}

json::value to_json(const node& n) {
  json::value v = top_level(node::api_version, node::kind, n.metadata);
  object spec;
  put(spec, "podCIDR", n.spec.pod_cidr);
  put(spec, "podCIDRs", n.spec.pod_cidrs);
  put(spec, "providerID", n.spec.provider_id);
  put(spec, "unschedulable", n.spec.unschedulable);
  put_list(spec, "taints", n.spec.taints, encode_taint);
  object status;
  if (!n.status.capacity.empty())
    status.set("capacity", to_json(n.status.capacity));
  if (!n.status.allocatable.empty())
    status.set("allocatable", to_json(n.status.allocatable));
  put(status, "phase", n.status.phase);
  put_list(status, "conditions", n.status.conditions, [](auto& c) { return to_json(c); });
  put_list(status, "addresses", n.status.addresses,
           [](const node_address& a) { return json::value(object{{"type", a.type}, {"address", a.address}}); });
  auto& i = n.status.node_info;
  object info;
  put(info, "machineID", i.machine_id);
  put(info, "systemUUID", i.system_uuid);
  put(info, "bootID", i.boot_id);
  put(info, "kubeProxyVersion", i.kube_proxy_version);
  put(info, "kernelVersion", i.kernel_version);
  put(info, "osImage", i.os_image);
  put(info, "containerRuntimeVersion", i.container_runtime_version);
  put(info, "kubeletVersion", i.kubelet_version);
  put(info, "operatingSystem", i.operating_system);
  put(info, "architecture", i.architecture);
  put(status, "nodeInfo", json::value(std::move(info)));
  v.as_object().set("spec", std::move(spec));
  v.as_object().set("status", std::move(status));
  return v;
}

json::value to_json(const service& s) {
  json::value v = top_level(service::api_version, service::kind, s.metadata);
  object spec;
  put_list(spec, "ports", s.spec.ports, encode_service_port);
  put(spec, "selector", s.spec.selector);
  put(spec, "clusterIP", s.spec.cluster_ip);
  put(spec, "clusterIPs", s.spec.cluster_ips);
  put(spec, "type", s.spec.type);
  put(spec, "publishNotReadyAddresses", s.spec.publish_not_ready_addresses);
  v.as_object().set("spec", std::move(spec));
  return v;
}

json::value to_json(const event& e) {
  json::value v = top_level(event::api_version, event::kind, e.metadata);
  auto& o = v.as_object();
  auto& r = e.involved_object;
  object inv;
  put(inv, "kind", r.kind);
  put(inv, "namespace", r.namespace_);
  put(inv, "name", r.name);
  put(inv, "uid", r.uid);
  put(inv, "apiVersion", r.api_version);
  put(inv, "resourceVersion", r.resource_version);
  put(inv, "fieldPath", r.field_path);
  o.set("involvedObject", std::move(inv));
  put(o, "reason", e.reason);
  put(o, "message", e.message);
  object source;
  put(source, "component", e.source.component);
  put(source, "host", e.source.host);
  o.set("source", std::move(source));
  put(o, "firstTimestamp", e.first_timestamp);
  put(o, "lastTimestamp", e.last_timestamp);
  put(o, "count", std::int64_t(e.count));
  put(o, "type", e.type);
  put_micro(o, "eventTime", e.event_time);
  put(o, "action", e.action);
  put(o, "reportingComponent", e.reporting_component);
  put(o, "reportingInstance", e.reporting_instance);
  return v;
}

json::value to_json(const lease& l) {
  json::value v = top_level(lease::api_version, lease::kind, l.metadata);
  object spec;
  put(spec, "holderIdentity", l.spec.holder_identity);
  put(spec, "leaseDurationSeconds", l.spec.lease_duration_seconds);
  put_micro(spec, "acquireTime", l.spec.acquire_time);
  put_micro(spec, "renewTime", l.spec.renew_time);
  put(spec, "leaseTransitions", l.spec.lease_transitions);
  v.as_object().set("spec", std::move(spec));
  return v;
}

json::value to_json(const namespace_object& ns) {
  json::value v = top_level(namespace_object::api_version, namespace_object::kind, ns.metadata);
  object spec;
  put(spec, "finalizers", ns.finalizers);
  object status;
  put(status, "phase", ns.phase);
  v.as_object().set("spec", std::move(spec));
  v.as_object().set("status", std::move(status));
  return v;
}

json::value to_json(const pod_template& t) {
  json::value v = top_level(pod_template::api_version, pod_template::kind, t.metadata);
  v.as_object().set("template", to_json(t.template_));
  return v;
}

json::value to_json(const custom_object& c) {
  json::value v = c.document.is_object() ? c.document : json::value(object{});
  auto& o = v.as_object();
  if (!c.api_version.empty())
    o.set("apiVersion", c.api_version);
  if (!c.kind.empty())
    o.set("kind", c.kind);
  // The model's metadata over the document's: fields the model does not name are kept.
  json::value meta = to_json(c.metadata);
  json::value& target = o["metadata"];
  if (!target.is_object())
    target = object{};
  for (auto& [k, field] : meta.as_object())
    target.as_object().set(k, field);
  return v;
}

json::value to_json(const api_status& s) {
  object o;
  o.set("kind", "Status");
  o.set("apiVersion", "v1");
  o.set("metadata", object{});
  put(o, "status", s.status);
  put(o, "message", s.message);
  put(o, "reason", s.reason);
  put(o, "details", s.details);
  put(o, "code", std::int64_t(s.code));
  return o;
}

} // namespace kozmo::k8s
