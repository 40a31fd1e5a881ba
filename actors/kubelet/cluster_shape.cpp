#include "actors/kubelet/cluster_shape.hpp"

#include "k8s/model/kozmo_keys.hpp"

#include <cstdint>
#include <cstdio>
#include <string_view>

#include <yaml-cpp/yaml.h>

namespace kozmo::kubelet {
namespace {

void assign_addresses(cluster_shape& c) {
  for (std::size_t i = 0; i < c.nodes.size(); ++i) {
    auto& n = c.nodes[i];
    // 10.0.x.y for node IPs and 10.244.i.0/24 for pods: enough for 65k nodes.
    n.internal_ip = "10.0." + std::to_string((i + 1) / 256) + "." + std::to_string((i + 1) % 256);
    n.pod_cidr = "10." + std::to_string(244 + i / 256) + "." + std::to_string(i % 256) + ".0/24";
  }
}

// The nodes assign_addresses can give a valid pod range (10.244.0.0/24 .. 10.255.255.0/24); also
// what keeps `count: 100000000` from exhausting memory.
constexpr std::size_t max_nodes = 12 * 256;

} // namespace

cluster_shape shape_of(std::vector<node_shape> nodes) {
  cluster_shape c;
  c.nodes = std::move(nodes);
  assign_addresses(c);
  return c;
}

cluster_shape uniform_cluster(int count, int gpus, const std::string& prefix) {
  cluster_shape c;
  for (int i = 0; i < count; ++i) {
    node_shape n;
    n.name = prefix + "-" + std::to_string(i);
    n.gpus = gpus;
    c.nodes.push_back(std::move(n));
  }
  assign_addresses(c);
  return c;
}

expected<cluster_shape> parse_cluster_yaml(const std::string& yaml_text) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return error::bad_request(std::string("cluster file is not valid YAML: ") + e.what());
  }
  if (!root.IsMap() || !root["nodes"] || !root["nodes"].IsSequence())
    return error::bad_request("cluster file: expected a top-level `nodes:` list");
  cluster_shape c;
  int index = 0;
  for (const auto& entry : root["nodes"]) {
    std::string where = "cluster file: nodes[" + std::to_string(index++) + "]";
    if (!entry.IsMap())
      return error::bad_request(where + ": expected a map with at least `name`");
    try {
      node_shape base;
      if (!entry["name"])
        return error::bad_request(where + ": `name` is required");
      base.name = entry["name"].as<std::string>();
      int count = entry["count"] ? entry["count"].as<int>() : 1;
      if (count < 1)
        return error::bad_request(where + ": `count` must be at least 1, got " + std::to_string(count));
      if (static_cast<std::size_t>(count) > max_nodes - c.nodes.size())
        return error::bad_request(where + ": the cluster would have more than " + std::to_string(max_nodes) +
                                  " nodes (`count` " + std::to_string(count) + ")");
      if (entry["gpus"])
        base.gpus = entry["gpus"].as<int>();
      if (base.gpus < 0)
        return error::bad_request(where + ": `gpus` must not be negative");
      if (entry["gpuType"])
        base.gpu_type = entry["gpuType"].as<std::string>();
      if (entry["cpu"])
        base.cpu = entry["cpu"].as<std::string>();
      if (entry["memory"])
        base.memory = entry["memory"].as<std::string>();
      if (entry["ephemeralStorage"])
        base.ephemeral_storage = entry["ephemeralStorage"].as<std::string>();
      if (entry["labels"]) {
        if (!entry["labels"].IsMap())
          return error::bad_request(where + ": `labels` must be a map");
        for (const auto& kv : entry["labels"])
          base.labels[kv.first.as<std::string>()] = kv.second.as<std::string>();
      }
      for (const auto& kv : entry) {
        auto key = kv.first.as<std::string>();
        if (key != "name" && key != "count" && key != "gpus" && key != "gpuType" && key != "cpu" &&
            key != "memory" && key != "ephemeralStorage" && key != "labels")
          return error::bad_request(where + ": unknown field `" + key +
                                    "` (known: name, count, gpus, gpuType, cpu, memory, ephemeralStorage, labels)");
      }
      for (int i = 0; i < count; ++i) {
        node_shape n = base;
        if (count > 1)
          n.name = base.name + "-" + std::to_string(i);
        c.nodes.push_back(std::move(n));
      }
    } catch (const YAML::Exception& e) {
      return error::bad_request(where + ": " + e.what());
    }
  }
  assign_addresses(c);
  return c;
}

json::value node_conditions(const std::string& heartbeat, const std::string& since) {
  auto cond = [&](const char* type, const char* status, const char* reason, const char* message) {
    json::value c;
    c["type"] = type;
    c["status"] = status;
    c["lastHeartbeatTime"] = heartbeat;
    c["lastTransitionTime"] = since;
    c["reason"] = reason;
    c["message"] = message;
    return c;
  };
  return json::array{
      cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
      cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
      cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
      cond("Ready", "True", "KubeletReady", "kozmo simulated kubelet is posting ready status"),
  };
}

namespace {

// 64-bit FNV-1a: stable across builds and machines, unlike std::hash.
std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// 32 hex digits derived from `seed`: two FNV-1a passes under different offsets.
std::string hex128(std::string_view seed) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv1a64(seed)),
                static_cast<unsigned long long>(fnv1a64(seed, 0x84222325cbf29ce4ull)));
  return buf;
}

// The 32 hex digits as an RFC 4122 version-4 UUID (the form /proc/sys/kernel/random/boot_id
// and a DMI product UUID have).
std::string uuid_form(std::string hex) {
  hex[12] = '4';
  hex[16] = "89ab"[std::stoi(hex.substr(16, 1), nullptr, 16) & 3];
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" +
         hex.substr(20);
}

} // namespace

json::value node_info(const node_shape& shape, const std::string& registered_at) {
  auto runtime = shape.labels.find(keys::runtime);
  bool process = runtime != shape.labels.end() && runtime->second == "process";
  json::value info;
  info["architecture"] = "amd64";
  // A new boot id each time the kubelet registers (its "reboot"), the machine's ids for good.
  info["bootID"] = uuid_form(hex128("boot/" + shape.name + "/" + registered_at));
  info["containerRuntimeVersion"] = process ? "kozmo-process://0.1" : "kozmo-sim://0.1";
  info["kernelVersion"] = "simulated";
  info["kubeProxyVersion"] = kubelet_version;
  info["kubeletVersion"] = kubelet_version;
  info["machineID"] = hex128("machine/" + shape.name);
  info["operatingSystem"] = "linux";
  info["osImage"] = process ? "Kozmo node (local processes)" : "Kozmo simulated node";
  info["systemUUID"] = uuid_form(hex128("system/" + shape.name));
  return info;
}

json::value node_object(const node_shape& shape, const std::string& now) {
  json::value node;
  node["apiVersion"] = "v1";
  node["kind"] = "Node";
  auto& meta = node["metadata"];
  meta["name"] = shape.name;
  auto& labels = meta["labels"];
  labels["kubernetes.io/hostname"] = shape.name;
  labels["kubernetes.io/os"] = "linux";
  labels["kubernetes.io/arch"] = "amd64";
  labels[keys::simulated] = "true";
  if (shape.gpus > 0)
    labels[keys::gpu_type] = shape.gpu_type;
  for (const auto& [k, v] : shape.labels)
    labels[k] = v;
  node["spec"]["podCIDR"] = shape.pod_cidr;
  node["spec"]["podCIDRs"] = json::array{shape.pod_cidr};
  json::value resources;
  resources["cpu"] = shape.cpu;
  resources["memory"] = shape.memory;
  resources["ephemeral-storage"] = shape.ephemeral_storage;
  resources["pods"] = shape.pods;
  resources["nvidia.com/gpu"] = std::to_string(shape.gpus);
  auto& st = node["status"];
  st["capacity"] = resources;
  st["allocatable"] = resources;
  st["conditions"] = node_conditions(now, now);
  json::value ip;
  ip["type"] = "InternalIP";
  ip["address"] = shape.internal_ip;
  json::value host;
  host["type"] = "Hostname";
  host["address"] = shape.name;
  st["addresses"] = json::array{ip, host};
  st["nodeInfo"] = node_info(shape, now);
  return node;
}

} // namespace kozmo::kubelet
