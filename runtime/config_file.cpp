#include "runtime/config_file.hpp"

#include "actors/controller/leader_election.hpp"
#include "actors/training/job_model.hpp"
#include "k8s/json/value.hpp"
#include "k8s/json/yaml.hpp"
#include "k8s/model/time.hpp"

#include <fstream>
#include <sstream>

namespace kozmo::runtime {

expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return error::bad_request("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

namespace {

template <class List>
std::string join_keys(const List& keys) {
  std::string out;
  for (const auto& k : keys)
    out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}
std::string known_keys(std::initializer_list<const char*> keys) { return join_keys(keys); }

status must_be_map(const json::value& v, const std::string& section) {
  if (v.is_object())
    return ok;
  return error::bad_request(section + ": must be a map");
}

expected<std::string> string_value(const json::value& v, const std::string& field) {
  if (!v.is_string() || v.as_string().empty())
    return error::bad_request(field + ": must be a non-empty string");
  return v.as_string();
}

expected<std::int64_t> duration_value(const json::value& v, const std::string& field) {
  if (!v.is_string())
    return error::bad_request(field + ": must be a duration such as 15s");
  auto d = k8s::parse_go_duration(v.as_string());
  if (!d || d->count() <= 0)
    return error::bad_request(field + ": \"" + v.as_string() + "\" is not a positive duration (examples: 15s, 1m)");
  return static_cast<std::int64_t>(d->count());
}

std::string resolve(const std::string& base_dir, const std::string& path) {
  return (!base_dir.empty() && path[0] != '/') ? base_dir + "/" + path : path;
}

// A PEM file named by `field`, read now.
expected<std::string> pem_file(const json::value& v, const std::string& field, const std::string& base_dir) {
  auto path = string_value(v, field);
  if (!path)
    return path.err();
  auto text = read_file(resolve(base_dir, *path));
  if (!text)
    return error::bad_request(field + ": " + text.err().message);
  if (text->find("-----BEGIN ") == std::string::npos)
    return error::bad_request(field + ": " + *path + " holds no PEM block");
  return text;
}

status parse_extender(const json::value& v, extender_section& out, const std::string& base_dir) {
  if (auto st = must_be_map(v, "scheduler.extender"); !st)
    return st;
  for (const auto& [key, val] : v.as_object()) {
    const std::string field = "scheduler.extender." + key;
    if (key == "bindAddress") {
      auto a = string_value(val, field);
      if (!a)
        return a.err();
      out.bind_address = *a;
    } else if (key == "certFile" || key == "keyFile" || key == "clientCAFile") {
      auto pem = pem_file(val, field, base_dir);
      if (!pem)
        return pem.err();
      (key == "certFile" ? out.cert_pem : key == "keyFile" ? out.key_pem : out.client_ca_pem) = std::move(*pem);
    } else if (key == "insecure") {
      if (!val.is_bool())
        return error::bad_request(field + ": must be true or false");
      out.insecure = val.as_bool();
    } else {
      return error::bad_request(field + ": unknown key (known: " +
                                known_keys({"bindAddress", "certFile", "keyFile", "clientCAFile", "insecure"}) + ")");
    }
  }
  if (out.bind_address.empty())
    return error::bad_request("scheduler.extender.bindAddress: required (where kube-scheduler reaches the extender "
                              "verbs, such as 127.0.0.1:30096)");
  if (out.cert_pem.empty() != out.key_pem.empty())
    return error::bad_request(std::string("scheduler.extender.") + (out.cert_pem.empty() ? "certFile" : "keyFile") +
                              ": certFile and keyFile go together");
  if (out.insecure && (!out.cert_pem.empty() || !out.client_ca_pem.empty()))
    return error::bad_request("scheduler.extender.insecure: true serves plain HTTP; certFile, keyFile and "
                              "clientCAFile do not apply");
  if (!out.insecure && out.client_ca_pem.empty())
    return error::bad_request("scheduler.extender.clientCAFile: required: the CA that signed the client certificate "
                              "kube-scheduler presents (its extender tlsConfig certFile); or insecure: true for "
                              "plain HTTP that anyone may call");
  return ok;
}

status parse_scheduler(const json::value& v, scheduler_section& out, const std::string& base_dir) {
  if (auto st = must_be_map(v, "scheduler"); !st)
    return st;
  bool inline_given = false;
  for (const auto& [key, val] : v.as_object()) {
    if (key == "config") {
      if (!val.is_object())
        return error::bad_request("scheduler.config: must be HiveD's configuration as a map (physicalCluster, "
                                  "virtualClusters, ...)");
      // JSON is YAML: the scheduler's parser reads it. The newline marks it as text, not a path
      // (engine_options::parts.scheduler_config takes either).
      out.config_text = json::dump(val) + "\n";
      inline_given = true;
    } else if (key == "configFile") {
      auto path = string_value(val, "scheduler.configFile");
      if (!path)
        return path.err();
      auto text = read_file(resolve(base_dir, *path));
      if (!text)
        return error::bad_request("scheduler.configFile: " + text.err().message);
      out.config_text = std::move(*text);
    } else if (key == "schedulerName") {
      auto name = string_value(val, "scheduler.schedulerName");
      if (!name)
        return name.err();
      out.scheduler_name = *name;
    } else if (key == "countOtherPods") {
      if (!val.is_bool())
        return error::bad_request("scheduler.countOtherPods: must be true or false");
      out.count_other_pods = val.as_bool();
    } else if (key == "extender") {
      if (auto st = parse_extender(val, out.extender, base_dir); !st)
        return st;
    } else {
      return error::bad_request("scheduler." + key + ": unknown key (known: " +
                                known_keys({"config", "configFile", "schedulerName", "countOtherPods", "extender"}) + ")");
    }
  }
  if (inline_given && v.find("configFile"))
    return error::bad_request("scheduler: give config or configFile, not both");
  return ok;
}

status parse_client(const json::value& v, client_section& out) {
  if (auto st = must_be_map(v, "client"); !st)
    return st;
  for (const auto& [key, val] : v.as_object()) {
    if (key == "qps") {
      if (!val.is_number() || val.as_double() <= 0)
        return error::bad_request("client.qps: must be a number above 0");
      out.qps = val.as_double();
    } else if (key == "burst") {
      if (!val.is_int() || val.as_int() <= 0)
        return error::bad_request("client.burst: must be a whole number above 0");
      out.burst = static_cast<int>(val.as_int());
    } else if (key == "connections") {
      if (!val.is_int() || val.as_int() <= 0 || val.as_int() > 10000)
        return error::bad_request("client.connections: must be a whole number from 1 to 10000");
      out.connections = static_cast<int>(val.as_int());
    } else {
      return error::bad_request("client." + key + ": unknown key (known: qps, burst, connections)");
    }
  }
  return ok;
}

// A job's replicas bound: at least 1, and at most what one controller can create and watch.
expected<int> max_replicas_value(const json::value& v, const std::string& field) {
  if (!v.is_int() || v.as_int() < 1 || v.as_int() > 100000)
    return error::bad_request(field + ": must be a whole number from 1 to 100000");
  return static_cast<int>(v.as_int());
}

status parse_training(const json::value& v, training_section& out) {
  if (auto st = must_be_map(v, "training"); !st)
    return st;
  for (const auto& [key, val] : v.as_object()) {
    if (key != "maxReplicas")
      return error::bad_request("training." + key + ": unknown key (known: maxReplicas)");
    if (!val.is_object()) {
      auto n = max_replicas_value(val, "training.maxReplicas");
      if (!n)
        return n.err();
      out.default_max_replicas = *n;
      continue;
    }
    for (const auto& [kind, n] : val.as_object()) {
      std::string field = "training.maxReplicas." + kind;
      auto value = max_replicas_value(n, field);
      if (!value)
        return value.err();
      if (kind == "default") {
        out.default_max_replicas = *value;
        continue;
      }
      if (training::traits_for(kind) == nullptr) {
        std::vector<std::string> kinds{"default"};
        for (const auto& k : training::all_kinds())
          kinds.emplace_back(k.name);
        return error::bad_request(field + ": unknown kind (known: " + join_keys(kinds) + ")");
      }
      out.max_replicas[kind] = *value;
    }
  }
  return ok;
}

status parse_leader_election(const json::value& v, leader_election_section& out) {
  if (auto st = must_be_map(v, "leaderElection"); !st)
    return st;
  for (const auto& [key, val] : v.as_object()) {
    const std::string field = "leaderElection." + key;
    if (key == "leaseDuration" || key == "renewDeadline" || key == "retryPeriod") {
      auto ms = duration_value(val, field);
      if (!ms)
        return ms.err();
      (key == "leaseDuration" ? out.timing.lease_duration
                              : key == "renewDeadline" ? out.timing.renew_deadline : out.timing.retry_period) =
          std::chrono::milliseconds(*ms);
    } else if (key == "resourceName" || key == "resourceNamespace") {
      auto s = string_value(val, field);
      if (!s)
        return s.err();
      (key == "resourceName" ? out.resource_name : out.resource_namespace) = *s;
    } else {
      return error::bad_request(field + ": unknown key (known: " +
                                known_keys({"leaseDuration", "renewDeadline", "retryPeriod", "resourceName",
                                            "resourceNamespace"}) +
                                ")");
    }
  }
  if (auto why = controller::check_timing(out.timing))
    return error::bad_request(*why);
  return ok;
}

} // namespace

expected<kozmo_config> parse_config(const std::string& text, const std::string& where, const std::string& base_dir) {
  kozmo_config out;
  auto doc = json::parse_yaml(text);
  if (!doc)
    return error::bad_request(where + ": " + doc.err().message);
  if (doc->is_null())
    return out;
  if (!doc->is_object())
    return error::bad_request(where + ": must be a map of sections (tasks, scheduler, client, leaderElection, training)");
  for (const auto& [section, value] : doc->as_object()) {
    status st = ok;
    if (section == "tasks") {
      auto t = tasks::parse_platform_config(value);
      if (!t) {
        st = t.err();
      } else {
        out.tasks = std::move(*t);
        out.tasks_section = json::dump(value);
      }
    } else if (section == "scheduler") {
      st = parse_scheduler(value, out.scheduler, base_dir);
    } else if (section == "client") {
      st = parse_client(value, out.client);
    } else if (section == "leaderElection") {
      st = parse_leader_election(value, out.leader_election);
    } else if (section == "training") {
      st = parse_training(value, out.training);
    } else {
      st = error::bad_request(section + ": unknown section (known: tasks, scheduler, client, leaderElection, training)");
    }
    if (!st)
      return error::bad_request(where + ": " + st.err().message);
  }
  return out;
}

expected<kozmo_config> load_config_file(const std::string& path) {
  if (path.empty())
    return kozmo_config{};
  auto text = read_file(path);
  if (!text)
    return error::bad_request("--config: " + text.err().message);
  auto slash = path.rfind('/');
  return parse_config(*text, path, slash == std::string::npos ? std::string(".") : path.substr(0, slash));
}

} // namespace kozmo::runtime
