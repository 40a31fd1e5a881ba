#include "actors/tasks/platform_config.hpp"

#include "k8s/model/time.hpp"

#include <algorithm>
#include <functional>
#include <vector>

namespace kozmo::tasks {
namespace {

using reader = std::function<status(const json::value&, platform_config&)>;

error bad(const std::string& key, const std::string& why) { return error::invalid("tasks." + key + ": " + why); }


reader quantity_key(const std::string& key, k8s::quantity platform_config::*field) {
  return [key, field](const json::value& v, platform_config& c) -> status {
    auto q = k8s::quantity::parse(json::scalar_text(v));
    if (json::scalar_text(v).empty() || !q)
      return bad(key, "\"" + json::scalar_text(v) + "\" is not a quantity (examples: 1, 500m, 4Gi)");
    if (q->sign() <= 0)
      return bad(key, "must be more than 0");
    c.*field = *q;
    return ok;
  };
}

reader string_key(const std::string& key, std::string platform_config::*field) {
  return [key, field](const json::value& v, platform_config& c) -> status {
    if (!v.is_string())
      return bad(key, "must be a string");
    c.*field = v.as_string();
    return ok;
  };
}

reader duration_key(const std::string& key, std::chrono::milliseconds platform_config::*field) {
  return [key, field](const json::value& v, platform_config& c) -> status {
    auto d = k8s::parse_go_duration(json::scalar_text(v));
    if (!v.is_string() || !d)
      return bad(key, "\"" + json::scalar_text(v) + "\" is not a duration (examples: 30s, 3m, 1h)");
    if (d->count() < 0)
      return bad(key, "must be 0 or more");
    c.*field = *d;
    return ok;
  };
}

reader int_key(const std::string& key, int platform_config::*field, int min) {
  return [key, field, min](const json::value& v, platform_config& c) -> status {
    if (!v.is_int() || v.as_int() < min || v.as_int() > 1000 || (min < 0 && v.as_int() == 0))
      return bad(key, min < 0 ? "must be a whole number from -1000 to 1000, not 0"
                              : "must be a whole number from " + std::to_string(min) + " to 1000");
    c.*field = static_cast<int>(v.as_int());
    return ok;
  };
}

reader map_key(const std::string& key, std::map<std::string, std::string> platform_config::*field) {
  return [key, field](const json::value& v, platform_config& c) -> status {
    if (v.is_null()) {
      (c.*field).clear();
      return ok;
    }
    if (!v.is_object())
      return bad(key, "must be a map of strings");
    std::map<std::string, std::string> out;
    for (const auto& [k, item] : v.as_object()) {
      if (!item.is_string())
        return bad(key + "." + k, "must be a string (quote numbers and booleans)");
      out[k] = item.as_string();
    }
    c.*field = std::move(out);
    return ok;
  };
}

status check_requirement(const std::string& key, const json::value& r) {
  if (!r.is_object())
    return bad(key, "must be a node selector requirement {key, operator, values}");
  if (r.get_string("key").empty())
    return bad(key + ".key", "Required value");
  static const std::vector<std::string> ops = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  std::string op = r.get_string("operator");
  if (std::find(ops.begin(), ops.end(), op) == ops.end())
    return bad(key + ".operator", "Unsupported value: \"" + op + "\": supported values: In, NotIn, Exists, "
                                  "DoesNotExist, Gt, Lt");
  if (const auto* vals = r.find("values"); vals && !vals->is_array())
    return bad(key + ".values", "must be a list of strings");
  return ok;
}

reader requirement_key(const std::string& key, json::value platform_config::*field) {
  return [key, field](const json::value& v, platform_config& c) -> status {
    if (!v.is_null())
      if (auto st = check_requirement(key, v); !st)
        return st;
    c.*field = v;
    return ok;
  };
}

reader tolerations_key(const std::string& key, json::value platform_config::*field) {
  return [key, field](const json::value& v, platform_config& c) -> status {
    if (v.is_null()) {
      c.*field = json::array{};
      return ok;
    }
    if (!v.is_array())
      return bad(key, "must be a list of tolerations {key, operator, value, effect}");
    for (std::size_t i = 0; i < v.as_array().size(); ++i) {
      const auto& t = v.as_array()[i];
      std::string at = key + "[" + std::to_string(i) + "]";
      if (!t.is_object())
        return bad(at, "must be a toleration {key, operator, value, effect}");
      std::string op = t.get_string("operator", "Equal");
      if (op != "Equal" && op != "Exists")
        return bad(at + ".operator", "Unsupported value: \"" + op + "\": supported values: Equal, Exists");
    }
    c.*field = v;
    return ok;
  };
}

status read_limits(const json::value& v, platform_config& c) {
  if (v.is_null())
    return ok;
  if (!v.is_object())
    return bad("resource-limits", "must be a map such as {cpu: \"8\", memory: 64Gi, gpu: 8, ephemeral-storage: 100Gi}");
  for (const auto& [name, item] : v.as_object()) {
    if (name != "cpu" && name != "memory" && name != "gpu" && name != "ephemeral-storage")
      return bad("resource-limits." + name, "unknown resource (known: cpu, memory, gpu, ephemeral-storage)");
    auto q = k8s::quantity::parse(json::scalar_text(item));
    if (json::scalar_text(item).empty() || !q || q->sign() < 0)
      return bad("resource-limits." + name, "\"" + json::scalar_text(item) + "\" is not a quantity of 0 or more");
    c.resource_limits[name] = *q;
  }
  return ok;
}

// tasks.copilot: a map of its own keys (copilot_config).
status read_copilot(const json::value& v, platform_config& c) {
  if (v.is_null())
    return ok;
  if (!v.is_object())
    return bad("copilot", "must be a map of settings (image, command, cpu, memory, max-dataset-size, timeout, s3-...)");
  copilot_config& cp = c.copilot;
  auto text = [](const json::value& item, const std::string& key, std::string& out) -> status {
    if (!item.is_string())
      return bad("copilot." + key, "must be a string");
    out = item.as_string();
    return ok;
  };
  auto amount = [](const json::value& item, const std::string& key) -> expected<k8s::quantity> {
    auto q = k8s::quantity::parse(json::scalar_text(item));
    if (json::scalar_text(item).empty() || !q || q->sign() <= 0)
      return bad("copilot." + key, "\"" + json::scalar_text(item) + "\" is not a quantity of more than 0 (examples: 500m, 10Gi)");
    return *q;
  };
  for (const auto& [key, item] : v.as_object()) {
    status st = ok;
    if (key == "image" || key == "command" || key == "s3-endpoint" || key == "s3-region" ||
        key == "s3-credentials-secret" || key == "s3-access-key-id-key" || key == "s3-secret-access-key-key") {
      std::string* field = key == "image"                   ? &cp.image
                           : key == "command"               ? &cp.command
                           : key == "s3-endpoint"           ? &cp.s3_endpoint
                           : key == "s3-region"             ? &cp.s3_region
                           : key == "s3-credentials-secret" ? &cp.s3_credentials_secret
                           : key == "s3-access-key-id-key"  ? &cp.s3_access_key_id_key
                                                            : &cp.s3_secret_access_key_key;
      st = text(item, key, *field);
      if (st && (key == "image" || key == "command" || key == "s3-region") && field->empty())
        st = bad("copilot." + key, "must not be empty");
    } else if (key == "cpu" || key == "memory" || key == "max-dataset-size") {
      auto q = amount(item, key);
      if (!q)
        return q.err();
      if (key == "cpu")
        cp.cpu = *q;
      else if (key == "memory")
        cp.memory = *q;
      else
        cp.max_dataset_size = *q;
    } else if (key == "timeout") {
      auto d = k8s::parse_go_duration(json::scalar_text(item));
      if (!item.is_string() || !d || d->count() <= 0)
        return bad("copilot.timeout", "\"" + json::scalar_text(item) + "\" is not a duration of more than 0 (examples: 30m, 1h)");
      cp.timeout = *d;
    } else if (key == "s3-path-style") {
      if (!item.is_bool())
        return bad("copilot.s3-path-style", "must be true or false");
      cp.s3_path_style = item.as_bool();
    } else {
      return bad("copilot." + key, "unknown setting (known: image, command, cpu, memory, max-dataset-size, timeout, "
                                   "s3-endpoint, s3-region, s3-path-style, s3-credentials-secret, s3-access-key-id-key, "
                                   "s3-secret-access-key-key)");
    }
    if (!st)
      return st;
  }
  return ok;
}

const std::vector<std::pair<std::string, reader>>& readers() {
  using pc = platform_config;
  static const std::vector<std::pair<std::string, reader>> table = {
      {"default-cpus", quantity_key("default-cpus", &pc::default_cpus)},
      {"default-memory", quantity_key("default-memory", &pc::default_memory)},
      {"gpu-resource-name", string_key("gpu-resource-name", &pc::gpu_resource_name)},
      {"gpu-device-node-label", string_key("gpu-device-node-label", &pc::gpu_device_node_label)},
      {"gpu-partition-size-node-label", string_key("gpu-partition-size-node-label", &pc::gpu_partition_size_node_label)},
      {"interruptible-tolerations", tolerations_key("interruptible-tolerations", &pc::interruptible_tolerations)},
      {"interruptible-node-selector-requirement",
       requirement_key("interruptible-node-selector-requirement", &pc::interruptible_node_selector_requirement)},
      {"non-interruptible-node-selector-requirement",
       requirement_key("non-interruptible-node-selector-requirement", &pc::non_interruptible_node_selector_requirement)},
      {"default-tolerations", tolerations_key("default-tolerations", &pc::default_tolerations)},
      {"default-node-selector", map_key("default-node-selector", &pc::default_node_selector)},
      {"default-annotations", map_key("default-annotations", &pc::default_annotations)},
      {"default-labels", map_key("default-labels", &pc::default_labels)},
      {"scheduler-name", string_key("scheduler-name", &pc::scheduler_name)},
      {"default-pod-template-name", string_key("default-pod-template-name", &pc::default_pod_template_name)},
      {"create-container-error-grace-period",
       duration_key("create-container-error-grace-period", &pc::create_container_error_grace_period)},
      {"create-container-config-error-grace-period",
       duration_key("create-container-config-error-grace-period", &pc::create_container_config_error_grace_period)},
      {"image-pull-backoff-grace-period",
       duration_key("image-pull-backoff-grace-period", &pc::image_pull_backoff_grace_period)},
      {"pod-pending-timeout", duration_key("pod-pending-timeout", &pc::pod_pending_timeout)},
      {"resource-limits", read_limits},
      {"interruptible-failure-threshold",
       int_key("interruptible-failure-threshold", &pc::interruptible_failure_threshold, -1000)},
      {"max-system-failures", int_key("max-system-failures", &pc::max_system_failures, 0)},
      {"cache-reservation-heartbeat", duration_key("cache-reservation-heartbeat", &pc::cache_reservation_heartbeat)},
      {"copilot", read_copilot},
  };
  return table;
}

} // namespace

expected<platform_config> parse_platform_config(const json::value& section) {
  platform_config c;
  if (section.is_null())
    return c;
  if (!section.is_object())
    return error::invalid("tasks: must be a map of settings");
  for (const auto& [key, value] : section.as_object()) {
    const reader* found = nullptr;
    for (const auto& [name, r] : readers())
      if (name == key)
        found = &r;
    if (!found) {
      std::string known;
      for (const auto& [name, _] : readers())
        known += (known.empty() ? "" : ", ") + name;
      return error::invalid("tasks." + key + ": unknown setting (known: " + known + ")");
    }
    if (auto st = (*found)(value, c); !st)
      return st.err();
  }
  if (c.cache_reservation_heartbeat.count() <= 0)
    return error::invalid("tasks.cache-reservation-heartbeat: must be more than 0 (the holder extends its "
                          "reservation this often)");
  return c;
}

} // namespace kozmo::tasks
