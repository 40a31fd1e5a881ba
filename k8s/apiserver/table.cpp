#include "k8s/apiserver/table.hpp"

#include "k8s/apiserver/encoding.hpp"
#include "k8s/apiserver/jsonpath.hpp"
#include "k8s/apiserver/store.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace kozmo::apiserver {
namespace {

table_column col(std::string name, std::string type, int priority = 0, std::string description = {}) {
  table_column c{std::move(name), std::move(type), "", std::move(description), priority};
  return c;
}

table_column name_col(std::string name = "Name") {
  return table_column{std::move(name), "string", "name",
                      "Name must be unique within a namespace. Is required when creating resources, although some "
                      "resources may allow a client to request the generation of an appropriate name "
                      "automatically. Name is primarily intended for creation idempotence and configuration "
                      "definition. Cannot be updated. More info: "
                      "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
                      0};
}

table_column age_col() {
  return col("Age", "string", 0,
             "CreationTimestamp is a timestamp representing the server time when this object was created.");
}

std::string str_at(const json::value& v, std::initializer_list<std::string_view> path, std::string fallback = {}) {
  const json::value* p = v.at_path(path);
  return p && p->is_string() ? p->as_string() : fallback;
}

std::string since(const json::value& v, std::initializer_list<std::string_view> path, std::int64_t now) {
  std::string ts = str_at(v, path);
  auto t = parse_rfc3339(ts);
  if (ts.empty() || !t)
    return "<unknown>";
  return human_duration(now - *t);
}

std::string or_none(const std::string& s) { return s.empty() ? "<none>" : s; }

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i ? std::string(sep) : std::string()) + parts[i];
  return out;
}

const json::array& array_at(const json::value& v, std::initializer_list<std::string_view> path) {
  static const json::array empty;
  const json::value* p = v.at_path(path);
  return p && p->is_array() ? p->as_array() : empty;
}

// ---- pods: printPod in kubernetes/pkg/printers/internalversion ---------------------------

bool condition_true(const json::value& obj, std::string_view type) {
  for (const auto& c : array_at(obj, {"status", "conditions"}))
    if (c.get_string("type") == type)
      return c.get_string("status") == "True";
  return false;
}

json::array pod_cells(const json::value& pod, std::int64_t now) {
  const json::array& containers = array_at(pod, {"spec", "containers"});
  const json::array& init_containers = array_at(pod, {"spec", "initContainers"});
  std::int64_t restarts = 0;
  std::int64_t ready = 0;
  std::int64_t last_restart = 0;
  std::string phase = str_at(pod, {"status", "phase"});
  std::string reason = phase;
  if (!str_at(pod, {"status", "reason"}).empty())
    reason = str_at(pod, {"status", "reason"});
  for (const auto& c : array_at(pod, {"status", "conditions"}))
    if (c.get_string("type") == "PodScheduled" && c.get_string("reason") == "SchedulingGated")
      reason = "SchedulingGated";

  auto note_restart = [&](const json::value& cs) {
    restarts += cs.get_int("restartCount", 0);
    std::string finished = str_at(cs, {"lastState", "terminated", "finishedAt"});
    if (auto t = parse_rfc3339(finished); t && *t > last_restart)
      last_restart = *t;
  };

  bool initializing = false;
  const json::array& init_statuses = array_at(pod, {"status", "initContainerStatuses"});
  for (std::size_t i = 0; i < init_statuses.size(); ++i) {
    const json::value& cs = init_statuses[i];
    note_restart(cs);
    const json::value* terminated = cs.at_path({"state", "terminated"});
    const json::value* waiting = cs.at_path({"state", "waiting"});
    if (terminated && terminated->get_int("exitCode", 0) == 0)
      continue;
    if (terminated) {
      std::string r = terminated->get_string("reason");
      if (r.empty())
        r = terminated->get_int("signal", 0) != 0 ? "Signal:" + std::to_string(terminated->get_int("signal", 0))
                                                   : "ExitCode:" + std::to_string(terminated->get_int("exitCode", 0));
      reason = "Init:" + r;
    } else if (waiting && !waiting->get_string("reason").empty() && waiting->get_string("reason") != "PodInitializing") {
      reason = "Init:" + waiting->get_string("reason");
    } else {
      reason = "Init:" + std::to_string(i) + "/" + std::to_string(init_containers.size());
    }
    initializing = true;
    break;
  }
  if (!initializing || condition_true(pod, "Initialized")) {
    restarts = 0;
    bool has_running = false;
    const json::array& statuses = array_at(pod, {"status", "containerStatuses"});
    for (auto it = statuses.rbegin(); it != statuses.rend(); ++it) {
      const json::value& cs = *it;
      note_restart(cs);
      const json::value* waiting = cs.at_path({"state", "waiting"});
      const json::value* terminated = cs.at_path({"state", "terminated"});
      if (waiting && !waiting->get_string("reason").empty()) {
        reason = waiting->get_string("reason");
      } else if (terminated && !terminated->get_string("reason").empty()) {
        reason = terminated->get_string("reason");
      } else if (terminated) {
        reason = terminated->get_int("signal", 0) != 0 ? "Signal:" + std::to_string(terminated->get_int("signal", 0))
                                                        : "ExitCode:" + std::to_string(terminated->get_int("exitCode", 0));
      } else if (cs.get_bool("ready") && cs.at_path({"state", "running"})) {
        has_running = true;
        ++ready;
      }
    }
    if (reason == "Completed" && has_running)
      reason = condition_true(pod, "Ready") ? "Running" : "NotReady";
  }
  if (pod.at_path({"metadata", "deletionTimestamp"})) {
    if (str_at(pod, {"status", "reason"}) == "NodeLost")
      reason = "Unknown";
    else if (phase != "Succeeded" && phase != "Failed")
      reason = "Terminating";
  }

  json::value restarts_cell = restarts;
  if (restarts > 0 && last_restart > 0)
    restarts_cell = std::to_string(restarts) + " (" + human_duration(now - last_restart) + " ago)";

  std::string gates = "<none>";
  const json::array& readiness_gates = array_at(pod, {"spec", "readinessGates"});
  if (!readiness_gates.empty()) {
    std::size_t true_gates = 0;
    for (const auto& g : readiness_gates)
      if (condition_true(pod, g.get_string("conditionType")))
        ++true_gates;
    gates = std::to_string(true_gates) + "/" + std::to_string(readiness_gates.size());
  }
  return json::array{str_at(pod, {"metadata", "name"}),
                     std::to_string(ready) + "/" + std::to_string(containers.size()),
                     reason,
                     restarts_cell,
                     since(pod, {"metadata", "creationTimestamp"}, now),
                     or_none(str_at(pod, {"status", "podIP"})),
                     or_none(str_at(pod, {"spec", "nodeName"})),
                     or_none(str_at(pod, {"status", "nominatedNodeName"})),
                     gates};
}

// ---- nodes ---------------------------------------------------------------------------------

json::array node_cells(const json::value& node, std::int64_t now) {
  std::vector<std::string> status;
  for (const auto& c : array_at(node, {"status", "conditions"}))
    if (c.get_string("type") == "Ready")
      status.push_back(c.get_string("status") == "True" ? "Ready" : "NotReady");
  if (status.empty())
    status.push_back("Unknown");
  if (const auto* u = node.at_path({"spec", "unschedulable"}); u && u->is_bool() && u->as_bool())
    status.push_back("SchedulingDisabled");

  std::set<std::string> roles;
  if (const auto* labels = node.at_path({"metadata", "labels"}); labels && labels->is_object())
    for (const auto& [k, v] : labels->as_object()) {
      constexpr std::string_view prefix = "node-role.kubernetes.io/";
      if (k.rfind(prefix, 0) == 0 && k.size() > prefix.size())
        roles.insert(k.substr(prefix.size()));
      else if (k == "kubernetes.io/role" && v.is_string() && !v.as_string().empty())
        roles.insert(v.as_string());
    }

  auto address = [&](std::string_view type) {
    for (const auto& a : array_at(node, {"status", "addresses"}))
      if (a.get_string("type") == type)
        return a.get_string("address");
    return std::string("<none>");
  };
  return json::array{str_at(node, {"metadata", "name"}),
                     join(status, ","),
                     roles.empty() ? std::string("<none>") : join(std::vector<std::string>(roles.begin(), roles.end()), ","),
                     since(node, {"metadata", "creationTimestamp"}, now),
                     str_at(node, {"status", "nodeInfo", "kubeletVersion"}),
                     address("InternalIP"),
                     address("ExternalIP"),
                     or_none(str_at(node, {"status", "nodeInfo", "osImage"})),
                     or_none(str_at(node, {"status", "nodeInfo", "kernelVersion"})),
                     or_none(str_at(node, {"status", "nodeInfo", "containerRuntimeVersion"}))};
}

// ---- services ------------------------------------------------------------------------------

json::array service_cells(const json::value& svc, std::int64_t now) {
  std::string type = str_at(svc, {"spec", "type"}, "ClusterIP");
  std::vector<std::string> external;
  for (const auto& ip : array_at(svc, {"spec", "externalIPs"}))
    if (ip.is_string())
      external.push_back(ip.as_string());
  std::string external_ip;
  if (type == "LoadBalancer") {
    std::vector<std::string> lb;
    for (const auto& ing : array_at(svc, {"status", "loadBalancer", "ingress"}))
      lb.push_back(!ing.get_string("ip").empty() ? ing.get_string("ip") : ing.get_string("hostname"));
    lb.insert(lb.end(), external.begin(), external.end());
    external_ip = lb.empty() ? "<pending>" : join(lb, ",");
  } else if (type == "ExternalName") {
    external_ip = str_at(svc, {"spec", "externalName"});
  } else {
    external_ip = external.empty() ? "<none>" : join(external, ",");
  }
  std::vector<std::string> ports;
  for (const auto& p : array_at(svc, {"spec", "ports"})) {
    std::string proto = p.get_string("protocol", "TCP");
    std::int64_t node_port = p.get_int("nodePort", 0);
    ports.push_back(std::to_string(p.get_int("port", 0)) + (node_port ? ":" + std::to_string(node_port) : "") + "/" + proto);
  }
  std::vector<std::string> selector;
  if (const auto* sel = svc.at_path({"spec", "selector"}); sel && sel->is_object()) {
    std::map<std::string, std::string> sorted;
    for (const auto& [k, v] : sel->as_object())
      sorted[k] = v.is_string() ? v.as_string() : "";
    for (const auto& [k, v] : sorted)
      selector.push_back(k + "=" + v);
  }
  return json::array{str_at(svc, {"metadata", "name"}),
                     type,
                     or_none(str_at(svc, {"spec", "clusterIP"})),
                     external_ip,
                     ports.empty() ? std::string("<none>") : join(ports, ","),
                     since(svc, {"metadata", "creationTimestamp"}, now),
                     selector.empty() ? std::string("<none>") : join(selector, ",")};
}

// ---- events --------------------------------------------------------------------------------

json::array event_cells(const json::value& ev, std::int64_t now) {
  std::string first = str_at(ev, {"firstTimestamp"}).empty() ? since(ev, {"eventTime"}, now) : since(ev, {"firstTimestamp"}, now);
  std::string last = str_at(ev, {"lastTimestamp"}).empty() ? first : since(ev, {"lastTimestamp"}, now);
  std::int64_t count = ev.get_int("count", 0);
  if (const auto* series = ev.find("series"); series && series->is_object()) {
    last = since(*series, {"lastObservedTime"}, now);
    count = series->get_int("count", 0);
  } else if (count == 0) {
    count = 1;
  }
  std::string kind = str_at(ev, {"involvedObject", "kind"});
  std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string name = str_at(ev, {"involvedObject", "name"});
  std::string target = name.empty() ? kind : kind + "/" + name;
  std::string source = str_at(ev, {"source", "component"});
  if (source.empty())
    source = ev.get_string("reportingComponent");
  std::string host = str_at(ev, {"source", "host"});
  if (host.empty())
    host = ev.get_string("reportingInstance");
  if (!host.empty())
    source += ", " + host;
  std::string message = ev.get_string("message");
  while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
    message.pop_back();
  return json::array{last,   ev.get_string("type"), ev.get_string("reason"), target,
                     str_at(ev, {"involvedObject", "fieldPath"}), source, message, first, count,
                     str_at(ev, {"metadata", "name"})};
}

std::size_t map_size(const json::value& v, std::string_view key) {
  const json::value* m = v.find(key);
  return m && m->is_object() ? m->as_object().size() : 0;
}

// ---- custom resources ----------------------------------------------------------------------

json::value printer_cell(const json::value& obj, const json::value& column, std::int64_t now) {
  auto found = jsonpath_find(obj, column.get_string("jsonPath"));
  if (found.empty())
    return nullptr;
  const json::value& v = *found.front();
  std::string type = column.get_string("type", "string");
  if (type == "date") {
    if (v.is_string())
      if (auto t = parse_rfc3339(v.as_string()))
        return human_duration(now - *t);
    return nullptr;
  }
  if (type == "integer")
    return v.is_number() ? json::value(static_cast<long long>(v.as_double())) : json::value(nullptr);
  if (type == "number")
    return v.is_number() ? v : json::value(nullptr);
  if (type == "boolean")
    return v.is_bool() ? v : json::value(nullptr);
  if (v.is_string())
    return v;
  if (v.is_null())
    return nullptr;
  return json::dump(v);
}

const json::value* printer_columns(const resource_type& rt, std::string_view version) {
  const crd_version* cv = rt.crd_version_of(version);
  if (!cv || !cv->printer_columns.is_array() || cv->printer_columns.as_array().empty())
    return nullptr;
  return &cv->printer_columns;
}

} // namespace

std::string human_duration(std::int64_t seconds) {
  auto s = [](std::int64_t n) { return std::to_string(n); };
  if (seconds < -1)
    return "<invalid>";
  if (seconds < 0)
    return "0s";
  if (seconds < 120)
    return s(seconds) + "s";
  std::int64_t minutes = seconds / 60;
  if (minutes < 10)
    return seconds % 60 == 0 ? s(minutes) + "m" : s(minutes) + "m" + s(seconds % 60) + "s";
  if (minutes < 180)
    return s(minutes) + "m";
  std::int64_t hours = seconds / 3600;
  if (hours < 8)
    return minutes % 60 == 0 ? s(hours) + "h" : s(hours) + "h" + s(minutes % 60) + "m";
  if (hours < 48)
    return s(hours) + "h";
  if (hours < 24 * 8)
    return hours % 24 == 0 ? s(hours / 24) + "d" : s(hours / 24) + "d" + s(hours % 24) + "h";
  if (hours < 24 * 365 * 2)
    return s(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    std::int64_t dy = (hours / 24) % 365;
    return dy == 0 ? s(hours / 24 / 365) + "y" : s(hours / 24 / 365) + "y" + s(dy) + "d";
  }
  return s(hours / 24 / 365) + "y";
}

// "RWO,RWX" as kubectl prints access modes.
std::string access_modes(const json::value& obj, std::initializer_list<std::string_view> path) {
  std::vector<std::string> out;
  for (const auto& m : array_at(obj, path)) {
    std::string mode = m.is_string() ? m.as_string() : std::string();
    out.push_back(mode == "ReadWriteOnce"      ? "RWO"
                  : mode == "ReadOnlyMany"     ? "ROX"
                  : mode == "ReadWriteMany"    ? "RWX"
                  : mode == "ReadWriteOncePod" ? "RWOP"
                                               : mode);
  }
  return join(out, ",");
}

// A quota's "name: used/hard" pairs, for the resources named limits.* (`limits`) or the others.
std::string quota_usage(const json::value& quota, bool limits) {
  std::vector<std::string> out;
  const json::value* hard = quota.at_path({"status", "hard"});
  if (!hard || !hard->is_object())
    hard = quota.at_path({"spec", "hard"});
  if (!hard || !hard->is_object())
    return "";
  const json::value* used = quota.at_path({"status", "used"});
  for (const auto& [name, value] : hard->as_object()) {
    if ((name.rfind("limits.", 0) == 0) != limits)
      continue;
    const json::value* u = used ? used->find(name) : nullptr;
    out.push_back(name + ": " + (u && u->is_string() ? u->as_string() : "0") + "/" +
                  json::scalar_text(value));
  }
  return join(out, ", ");
}

std::vector<table_column> table_columns(const resource_type& rt, std::string_view version) {
  if (!rt.builtin) {
    std::vector<table_column> cols{name_col()};
    const json::value* pc = printer_columns(rt, version);
    if (!pc) {
      cols.push_back(col("Age", "date", 0, "CreationTimestamp is a timestamp representing the server time when this object was created."));
      return cols;
    }
    for (const auto& c : pc->as_array()) {
      table_column tc{c.get_string("name"), c.get_string("type", "string"), c.get_string("format"),
                      c.get_string("description"), static_cast<int>(c.get_int("priority", 0))};
      cols.push_back(std::move(tc));
    }
    return cols;
  }
  const std::string& k = rt.kind;
  if (k == "Pod")
    return {name_col(), col("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
            col("Status", "string", 0, "The aggregate status of the containers in this pod."),
            col("Restarts", "string", 0, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
            age_col(), col("IP", "string", 1, "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."),
            col("Node", "string", 1, "NodeName is a request to schedule this pod onto a specific node."),
            col("Nominated Node", "string", 1, "nominatedNodeName is set only when this pod preempts other pods on the node."),
            col("Readiness Gates", "string", 1, "If specified, all readiness gates will be evaluated for pod readiness.")};
  if (k == "Node")
    return {name_col(), col("Status", "string", 0, "The status of the node"),
            col("Roles", "string", 0, "The roles of the node"), age_col(),
            col("Version", "string", 0, "Kubelet Version reported by the node."),
            col("Internal-IP", "string", 1, "List of addresses reachable to the node. Queried from cloud provider, if available."),
            col("External-IP", "string", 1, "List of addresses reachable to the node. Queried from cloud provider, if available."),
            col("OS-Image", "string", 1, "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
            col("Kernel-Version", "string", 1, "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
            col("Container-Runtime", "string", 1, "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).")};
  if (k == "Namespace")
    return {name_col(), col("Status", "string", 0, "The status of the namespace"), age_col()};
  if (k == "Service")
    return {name_col(), col("Type", "string", 0, "type determines how the Service is exposed."),
            col("Cluster-IP", "string", 0, "clusterIP is the IP address of the service."),
            col("External-IP", "string", 0, "List of IP addresses for which nodes in the cluster will also accept traffic for this service."),
            col("Port(s)", "string", 0, "The list of ports that are exposed by this service."), age_col(),
            col("Selector", "string", 1, "Route service traffic to pods with label keys and values matching this selector.")};
  if (k == "Event")
    return {col("Last Seen", "string", 0, "The time at which the most recent occurrence of this event was recorded."),
            col("Type", "string", 0, "Type of this event (Normal, Warning)."),
            col("Reason", "string", 0, "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
            col("Object", "string", 0, "The object that this event is about."),
            col("Subobject", "string", 1, "The subobject of the involved object."),
            col("Source", "string", 1, "The component reporting this event."),
            col("Message", "string", 0, "A human-readable description of the status of this operation."),
            col("First Seen", "string", 1, "The time at which the event was first recorded."),
            col("Count", "string", 1, "The number of times this event has occurred."),
            [] { auto c = name_col(); c.priority = 1; return c; }()};
  if (k == "ConfigMap")
    return {name_col(), col("Data", "string", 0, "Data contains the configuration data."), age_col()};
  if (k == "Secret")
    return {name_col(), col("Type", "string", 0, "Used to facilitate programmatic handling of secret data."),
            col("Data", "string", 0, "Data contains the secret data."), age_col()};
  if (k == "Endpoints")
    return {name_col(), col("Endpoints", "string", 0, "Endpoints is the list of references to objects providing the endpoints."), age_col()};
  if (k == "ServiceAccount")
    return {name_col(), col("Secrets", "string", 0, "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."), age_col()};
  if (k == "Lease")
    return {name_col(), col("Holder", "string", 0, "The holder of the lease."), age_col()};
  if (k == "PersistentVolume")
    return {name_col(), col("Capacity", "string", 0, "capacity is the description of the persistent volume's resources and capacity."),
            col("Access Modes", "string", 0, "accessModes contains all ways the volume can be mounted."),
            col("Reclaim Policy", "string", 0, "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim."),
            col("Status", "string", 0, "phase indicates if a volume is available, bound to a claim, or released by a claim."),
            col("Claim", "string", 0, "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim."),
            col("StorageClass", "string", 0, "storageClassName is the name of StorageClass to which this persistent volume belongs."),
            col("Reason", "string", 0, "reason is a brief CamelCase string that describes any failure."), age_col(),
            col("VolumeMode", "string", 1, "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.")};
  if (k == "PersistentVolumeClaim")
    return {name_col(), col("Status", "string", 0, "phase represents the current phase of PersistentVolumeClaim."),
            col("Volume", "string", 0, "volumeName is the binding reference to the PersistentVolume backing this claim."),
            col("Capacity", "string", 0, "capacity represents the actual resources of the underlying volume."),
            col("Access Modes", "string", 0, "accessModes contains the actual access modes the volume backing the PVC has."),
            col("StorageClass", "string", 0, "storageClassName is the name of the StorageClass required by the claim."), age_col(),
            col("VolumeMode", "string", 1, "volumeMode defines what type of volume is required by the claim.")};
  if (k == "StorageClass")
    return {name_col(), col("Provisioner", "string", 0, "provisioner indicates the type of the provisioner."),
            col("ReclaimPolicy", "string", 0, "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class."),
            col("VolumeBindingMode", "string", 0, "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound."),
            col("AllowVolumeExpansion", "string", 0, "allowVolumeExpansion shows whether the storage class allow volume expand."), age_col()};
  if (k == "ResourceQuota")
    return {name_col(), age_col(), col("Request", "string", 0, "Request represents a minimum amount of cpu/memory that a container may consume."),
            col("Limit", "string", 0, "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.")};
  if (k == "PodTemplate")
    return {name_col("Template"), col("Containers", "string", 0, "Names of each container in the template."),
            col("Images", "string", 0, "Images referenced by each container in the template."),
            col("Pod Labels", "string", 0, "The labels for the pod template.")};
  return {name_col(), col("Created At", "date", 0, "CreationTimestamp is a timestamp representing the server time when this object was created.")};
}

json::array table_cells(const resource_type& rt, std::string_view version, const json::value& obj, std::int64_t now) {
  std::string name = str_at(obj, {"metadata", "name"});
  if (!rt.builtin) {
    json::array cells{name};
    const json::value* pc = printer_columns(rt, version);
    if (!pc) {
      cells.emplace_back(since(obj, {"metadata", "creationTimestamp"}, now));
      return cells;
    }
    for (const auto& c : pc->as_array())
      cells.push_back(printer_cell(obj, c, now));
    return cells;
  }
  const std::string& k = rt.kind;
  std::string age = since(obj, {"metadata", "creationTimestamp"}, now);
  if (k == "Pod")
    return pod_cells(obj, now);
  if (k == "Node")
    return node_cells(obj, now);
  if (k == "Namespace")
    return json::array{name, str_at(obj, {"status", "phase"}), age};
  if (k == "Service")
    return service_cells(obj, now);
  if (k == "Event")
    return event_cells(obj, now);
  if (k == "ConfigMap")
    return json::array{name, static_cast<long long>(map_size(obj, "data") + map_size(obj, "binaryData")), age};
  if (k == "Secret")
    return json::array{name, obj.get_string("type"), static_cast<long long>(map_size(obj, "data")), age};
  if (k == "Endpoints") {
    std::vector<std::string> eps;
    for (const auto& subset : array_at(obj, {"subsets"}))
      for (const auto& addr : array_at(subset, {"addresses"}))
        for (const auto& port : array_at(subset, {"ports"}))
          eps.push_back(addr.get_string("ip") + ":" + std::to_string(port.get_int("port", 0)));
    return json::array{name, eps.empty() ? std::string("<none>") : join(eps, ","), age};
  }
  if (k == "ServiceAccount")
    return json::array{name, static_cast<long long>(array_at(obj, {"secrets"}).size()), age};
  if (k == "Lease")
    return json::array{name, or_none(str_at(obj, {"spec", "holderIdentity"})), age};
  if (k == "PersistentVolume") {
    const json::value* claim = obj.at_path({"spec", "claimRef"});
    std::string claimed = claim && claim->is_object() ? claim->get_string("namespace") + "/" + claim->get_string("name") : "";
    return json::array{name, str_at(obj, {"spec", "capacity", "storage"}), access_modes(obj, {"spec", "accessModes"}),
                       str_at(obj, {"spec", "persistentVolumeReclaimPolicy"}), str_at(obj, {"status", "phase"}), claimed,
                       str_at(obj, {"spec", "storageClassName"}), str_at(obj, {"status", "reason"}), age,
                       str_at(obj, {"spec", "volumeMode"})};
  }
  if (k == "PersistentVolumeClaim")
    return json::array{name, str_at(obj, {"status", "phase"}), str_at(obj, {"spec", "volumeName"}),
                       str_at(obj, {"status", "capacity", "storage"}), access_modes(obj, {"status", "accessModes"}),
                       str_at(obj, {"spec", "storageClassName"}), age, str_at(obj, {"spec", "volumeMode"})};
  if (k == "StorageClass") { // kubectl marks the default class after its name
    const json::value* a = obj.at_path({"metadata", "annotations"});
    bool is_default = a && a->is_object() && (a->get_string("storageclass.kubernetes.io/is-default-class") == "true" ||
                                              a->get_string("storageclass.beta.kubernetes.io/is-default-class") == "true");
    const json::value* expand = obj.find("allowVolumeExpansion");
    return json::array{is_default ? name + " (default)" : name, obj.get_string("provisioner"),
                       obj.get_string("reclaimPolicy", "Delete"), obj.get_string("volumeBindingMode", "Immediate"),
                       expand && expand->is_bool() && expand->as_bool() ? "true" : "false", age};
  }
  if (k == "ResourceQuota")
    return json::array{name, age, quota_usage(obj, false), quota_usage(obj, true)};
  if (k == "PodTemplate") {
    std::vector<std::string> names, images;
    for (const auto& c : array_at(obj, {"template", "spec", "containers"})) {
      names.push_back(c.get_string("name"));
      images.push_back(c.get_string("image"));
    }
    std::vector<std::string> labels;
    if (const auto* l = obj.at_path({"template", "metadata", "labels"}); l && l->is_object())
      for (const auto& [lk, lv] : l->as_object())
        labels.push_back(lk + "=" + (lv.is_string() ? lv.as_string() : ""));
    std::sort(labels.begin(), labels.end());
    return json::array{name, join(names, ","), join(images, ","), labels.empty() ? std::string("<none>") : join(labels, ",")};
  }
  return json::array{name, str_at(obj, {"metadata", "creationTimestamp"})};
}

std::string encode_table(const resource_type& rt, std::string_view version, std::string_view meta_version,
                         const std::vector<const json::value*>& objects, const json::value& list_meta,
                         bool with_columns, include_object include) {
  std::int64_t now = unix_now();
  json::object table{{"kind", "Table"}, {"apiVersion", "meta.k8s.io/" + std::string(meta_version)},
                     {"metadata", list_meta}};
  if (with_columns) {
    json::array columns;
    for (const auto& c : table_columns(rt, version))
      columns.push_back(json::object{{"name", c.name}, {"type", c.type}, {"format", c.format},
                                     {"description", c.description}, {"priority", c.priority}});
    table.set("columnDefinitions", std::move(columns));
  } else {
    table.set("columnDefinitions", nullptr);
  }
  json::array rows;
  for (const auto* obj : objects) {
    json::object row{{"cells", table_cells(rt, version, *obj, now)}};
    if (include == include_object::metadata) {
      json::value meta = obj->find("metadata") ? *obj->find("metadata") : json::value(json::object{});
      row.set("object", json::object{{"kind", "PartialObjectMetadata"},
                                     {"apiVersion", "meta.k8s.io/" + std::string(meta_version)},
                                     {"metadata", std::move(meta)}});
    } else if (include == include_object::object) {
      auto typed = json::parse(encode_object(rt, version, *obj));
      row.set("object", typed ? *typed : *obj);
    }
    rows.push_back(std::move(row));
  }
  table.set("rows", std::move(rows));
  return json::dump(json::value(std::move(table)));
}

} // namespace kozmo::apiserver
