#include "actors/scheduler/pod_scheduling_spec.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>

namespace kozmo::scheduler {
namespace {

constexpr const char* where = "pod-scheduling-spec: ";

error bad(const std::string& msg) { return error::bad_request(std::string(where) + msg); }

// Defaults and the checks HiveD makes on every spec, whatever form it came in.
expected<pod_scheduling_spec> complete(pod_scheduling_spec s, const std::string& ns, const std::string& name) {
  if (s.virtual_cluster.empty())
    return bad("virtualCluster is required (the VC whose quota the pod uses)");
  if (s.priority < -1 || s.priority > 1000)
    return bad("priority " + std::to_string(s.priority) +
               " is out of range: use -1 (opportunistic) or 0..1000 (guaranteed)");
  if (s.leaf_cell_number <= 0)
    return bad("leafCellNumber must be a positive number of GPUs, got " + std::to_string(s.leaf_cell_number));
  if (s.affinity_group.empty() && s.members.empty()) {
    if (s.min_members > 1)
      return bad(std::string(keys::gang_min_members) + " needs a gang (" + keys::gang + ", " + keys::gang_members + ")");
    s.min_members = 0;
    s.affinity_group = ns + "/" + name;
    s.members.push_back({1, s.leaf_cell_number});
    return s;
  }
  if (s.affinity_group.empty())
    return bad("affinityGroup.name must not be empty");
  if (s.members.empty())
    return bad("affinityGroup " + s.affinity_group + " has no members");
  bool self_found = false;
  for (std::size_t i = 0; i < s.members.size(); ++i) {
    const auto& m = s.members[i];
    if (m.pod_number <= 0 || m.leaf_cell_number <= 0)
      return bad("affinityGroup " + s.affinity_group + " member " + std::to_string(i) +
                 ": podNumber and leafCellNumber must be positive, got " + std::to_string(m.pod_number) + " and " +
                 std::to_string(m.leaf_cell_number));
    self_found = self_found || m.leaf_cell_number == s.leaf_cell_number;
  }
  if (!self_found)
    return bad("affinityGroup " + s.affinity_group + " has no member with leafCellNumber " +
               std::to_string(s.leaf_cell_number) + ", the pod's own");
  if (s.min_members > 0) {
    int pods = 0;
    for (const auto& m : s.members) {
      if (m.leaf_cell_number != s.members.front().leaf_cell_number)
        return bad(std::string(keys::gang_min_members) + ": an elastic gang's pods must all ask the same GPUs, got " +
                   format_members(s.members));
      pods += m.pod_number;
    }
    if (s.min_members > pods)
      return bad(std::string(keys::gang_min_members) + ": " + std::to_string(s.min_members) +
                 " is more than the gang's " + std::to_string(pods) + " pods (" + keys::gang_members + ")");
    // One member of the most pods: a gang's pods alike grow and shrink one by one.
    s.members = {{pods, s.members.front().leaf_cell_number}};
    if (s.min_members == pods) s.min_members = 0;
  }
  return s;
}

expected<int> to_int(const std::string& field, const std::string& text) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size())
    return bad(field + ": \"" + text + "\" is not an integer");
  return v;
}

expected<bool> to_bool(const std::string& field, const std::string& text) {
  if (text == "true")
    return true;
  if (text == "false")
    return false;
  return bad(field + ": \"" + text + "\" is not true or false");
}

// "4x2,1x4" → members.
expected<std::vector<affinity_member>> parse_members(const std::string& text) {
  std::vector<affinity_member> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto x = item.find('x');
    if (x == std::string::npos)
      return bad("kozmo.io/gang-members: \"" + item + "\" is not PODSxGPUS (e.g. 4x2)");
    auto pods = to_int("kozmo.io/gang-members", item.substr(0, x));
    auto gpus = to_int("kozmo.io/gang-members", item.substr(x + 1));
    if (!pods)
      return pods.err();
    if (!gpus)
      return gpus.err();
    out.push_back({*pods, *gpus});
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

// A level or subgroup name: a word of letters, digits and . _ - / (a cell type such as
// DGX2-V100-NODE, a level name such as rack), at most 63 characters.
status check_word(const char* key, const std::string& value) {
  constexpr std::size_t longest = 63;
  if (value.empty() || value.size() > longest)
    return bad(std::string(key) + ": \"" + value + "\" must be 1.." + std::to_string(longest) + " characters");
  for (char c : value) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == '/';
    if (!ok)
      return bad(std::string(key) + ": \"" + value +
                 "\" is not a level or subgroup name (letters, digits, '.', '_', '-', '/')");
  }
  return ok;
}

// One gang-topology key into `s`; `matched` false for any other key.
status read_topology_key(const std::string& key, const std::string& value, pod_scheduling_spec& s, bool& matched) {
  matched = true;
  std::string* word = key == keys::gang_level        ? &s.gang_level
                      : key == keys::preferred_level ? &s.preferred_level
                      : key == keys::subgroup        ? &s.subgroup
                      : key == keys::subgroup_level  ? &s.subgroup_level
                                                     : nullptr;
  if (word) {
    if (auto valid = check_word(key.c_str(), value); !valid)
      return valid;
    *word = value;
    return ok;
  }
  if (key == keys::subgroup_min_members) {
    auto v = to_int(key, value);
    if (!v)
      return v.err();
    constexpr int most = 10000;
    if (*v < 1 || *v > most)
      return bad(key + ": " + value + " is out of range: use 1.." + std::to_string(most));
    s.subgroup_min_members = *v;
    return ok;
  }
  matched = false;
  return ok;
}

// The topology keys' own checks, whatever form the rest came in.
expected<pod_scheduling_spec> check_topology(pod_scheduling_spec s) {
  if (s.subgroup.empty() && (s.subgroup_min_members > 0 || !s.subgroup_level.empty()))
    return bad(std::string(s.subgroup_min_members > 0 ? keys::subgroup_min_members : keys::subgroup_level) +
               " needs " + keys::subgroup + " (the subgroup it applies to)");
  return s;
}

} // namespace

expected<pod_scheduling_spec> parse_hived_spec(const std::string& yaml_text, const std::string& ns,
                                               const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return bad(std::string("not valid YAML: ") + e.what());
  }
  if (!root.IsMap())
    return bad("expected a YAML map with at least virtualCluster and leafCellNumber");
  pod_scheduling_spec s;
  try {
    for (const auto& kv : root) {
      auto key = kv.first.as<std::string>();
      const auto& v = kv.second;
      if (key == "virtualCluster")
        s.virtual_cluster = v.as<std::string>();
      else if (key == "priority")
        s.priority = v.as<int>();
      else if (key == "pinnedCellId")
        s.pinned_cell_id = v.as<std::string>();
      else if (key == "leafCellType" || key == "gpuType")
        s.leaf_cell_type = v.as<std::string>();
      else if (key == "leafCellNumber" || key == "gpuNumber")
        s.leaf_cell_number = v.as<int>();
      else if (key == "gangReleaseEnable")
        s.gang_release_enable = v.as<bool>();
      else if (key == "lazyPreemptionEnable")
        s.lazy_preemption_enable = v.as<bool>();
      else if (key == "ignoreK8sSuggestedNodes")
        s.ignore_k8s_suggested_nodes = v.as<bool>();
      else if (key == "affinityGroup") {
        if (!v.IsMap())
          return bad("affinityGroup must be a map with name and members");
        if (v["name"])
          s.affinity_group = v["name"].as<std::string>();
        if (v["members"]) {
          if (!v["members"].IsSequence())
            return bad("affinityGroup.members must be a list of {podNumber, leafCellNumber}");
          for (const auto& m : v["members"]) {
            affinity_member am;
            if (m["podNumber"])
              am.pod_number = m["podNumber"].as<int>();
            if (m["leafCellNumber"])
              am.leaf_cell_number = m["leafCellNumber"].as<int>();
            else if (m["gpuNumber"])
              am.leaf_cell_number = m["gpuNumber"].as<int>();
            s.members.push_back(am);
          }
        }
      } else {
        return bad("unknown field " + key +
                   " (known: virtualCluster, priority, pinnedCellId, leafCellType, leafCellNumber, "
                   "gangReleaseEnable, lazyPreemptionEnable, ignoreK8sSuggestedNodes, affinityGroup)");
      }
    }
  } catch (const YAML::Exception& e) {
    return bad(std::string("a field has the wrong type: ") + e.what());
  }
  return complete(std::move(s), ns, name);
}

expected<pod_scheduling_spec> parse_pod_scheduling_spec(const std::map<std::string, std::string>& annotations,
                                                        const std::string& ns, const std::string& name,
                                                        const spec_defaults* defaults) {
  if (auto it = annotations.find(hived_spec_annotation); it != annotations.end()) {
    auto hived = parse_hived_spec(it->second, ns, name);
    if (!hived)
      return hived;
    for (const auto& [key, value] : annotations) {
      bool matched = false;
      if (auto read = read_topology_key(key, value, *hived, matched); !read)
        return read.err();
    }
    return check_topology(std::move(*hived));
  }
  pod_scheduling_spec s;
  bool any = false;
  bool has_vc = false, has_number = false;
  for (const auto& [key, value] : annotations) {
    if (key.rfind("kozmo.io/", 0) != 0)
      continue;
    bool topology_key = false;
    if (auto read = read_topology_key(key, value, s, topology_key); !read)
      return read.err();
    if (topology_key) {
      any = true;
      continue;
    }
    has_vc = has_vc || key == keys::virtual_cluster;
    has_number = has_number || key == keys::leaf_cell_number;
    if (key == keys::virtual_cluster) {
      s.virtual_cluster = value;
    } else if (key == keys::priority) {
      auto v = to_int(key, value);
      if (!v)
        return v.err();
      s.priority = *v;
    } else if (key == keys::leaf_cell_type) {
      s.leaf_cell_type = value;
    } else if (key == keys::leaf_cell_number) {
      auto v = to_int(key, value);
      if (!v)
        return v.err();
      s.leaf_cell_number = *v;
    } else if (key == keys::pinned_cell) {
      s.pinned_cell_id = value;
    } else if (key == keys::lazy_preemption) {
      auto v = to_bool(key, value);
      if (!v)
        return v.err();
      s.lazy_preemption_enable = *v;
    } else if (key == keys::gang) {
      s.affinity_group = value;
    } else if (key == keys::gang_members) {
      auto v = parse_members(value);
      if (!v)
        return v.err();
      s.members = std::move(*v);
    } else if (key == keys::gang_min_members) {
      auto v = to_int(key, value);
      if (!v)
        return v.err();
      if (*v < 1 || *v > 10000)
        return bad(std::string(key) + ": " + value + " is out of range: the fewest pods, 1..10000");
      s.min_members = *v;
    } else {
      continue; // other kozmo.io keys (e.g. the simulated kubelet's) are not scheduling keys
    }
    any = true;
  }
  if (!any && !defaults)
    return error{"the pod asks nothing of the GPU scheduler", 0, "NotRequested"};
  if (defaults && !has_vc)
    s.virtual_cluster = defaults->virtual_cluster;
  if (defaults && !has_number) {
    s.leaf_cell_number = defaults->leaf_cell_number;
    if (s.leaf_cell_number <= 0 && s.members.size() == 1)
      s.leaf_cell_number = s.members.front().leaf_cell_number;
    if (s.leaf_cell_number <= 0)
      return bad(std::string("the pod asks for no GPU: set a GPU limit on its containers or ") + keys::leaf_cell_number);
  }
  auto done = complete(std::move(s), ns, name);
  if (!done)
    return done;
  return check_topology(std::move(*done));
}

std::string format_members(const std::vector<affinity_member>& members) {
  std::string out;
  for (const auto& m : members)
    out += (out.empty() ? "" : ",") + std::to_string(m.pod_number) + "x" + std::to_string(m.leaf_cell_number);
  return out;
}

std::vector<std::pair<std::string, std::string>> scheduling_annotations(const pod_scheduling_spec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!spec.virtual_cluster.empty())
    out.emplace_back(keys::virtual_cluster, spec.virtual_cluster);
  out.emplace_back(keys::priority, std::to_string(spec.priority));
  if (spec.leaf_cell_number > 0)
    out.emplace_back(keys::leaf_cell_number, std::to_string(spec.leaf_cell_number));
  if (!spec.leaf_cell_type.empty())
    out.emplace_back(keys::leaf_cell_type, spec.leaf_cell_type);
  if (!spec.pinned_cell_id.empty())
    out.emplace_back(keys::pinned_cell, spec.pinned_cell_id);
  if (spec.lazy_preemption_enable)
    out.emplace_back(keys::lazy_preemption, "true");
  if (!spec.affinity_group.empty()) {
    out.emplace_back(keys::gang, spec.affinity_group);
    out.emplace_back(keys::gang_members, format_members(spec.members));
    if (spec.min_members > 0) out.emplace_back(keys::gang_min_members, std::to_string(spec.min_members));
  }
  if (!spec.gang_level.empty())
    out.emplace_back(keys::gang_level, spec.gang_level);
  if (!spec.preferred_level.empty())
    out.emplace_back(keys::preferred_level, spec.preferred_level);
  if (!spec.subgroup.empty())
    out.emplace_back(keys::subgroup, spec.subgroup);
  if (spec.subgroup_min_members > 0)
    out.emplace_back(keys::subgroup_min_members, std::to_string(spec.subgroup_min_members));
  if (!spec.subgroup_level.empty())
    out.emplace_back(keys::subgroup_level, spec.subgroup_level);
  return out;
}

} // namespace kozmo::scheduler
