// yaml-cpp reports problems by throwing; everything is caught here and turned into a
// kozmo::error, so no exception leaves parse_config.
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/label_topology.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <initializer_list>

namespace kozmo::scheduler {
namespace {

// Thrown inside this file only, caught by parse_config.
struct parse_failure {
  std::string message;
};

// A key that is absent comes back from a const operator[] as an invalid node, on which most
// calls throw; `!n` (not defined) is the only safe test, so every helper starts with it.
bool absent(const YAML::Node& n) { return !n || n.IsNull(); }

// The value under `key`, or a valid null node when the key is absent.
YAML::Node get(const YAML::Node& map, const char* key) {
  if (absent(map) || !map.IsMap()) return YAML::Node();
  auto v = map[key];
  return v ? v : YAML::Node();
}

std::string at_line(const YAML::Node& n) {
  if (!n || n.Mark().is_null()) return "";
  return " (line " + std::to_string(n.Mark().line + 1) + ")";
}

[[noreturn]] void fail(const YAML::Node& n, const std::string& what) {
  throw parse_failure{what + at_line(n)};
}

// A map with only the allowed keys; null counts as an empty map ("cellChildren: null").
void expect_map(const YAML::Node& n, const std::string& path,
                std::initializer_list<std::string_view> allowed) {
  if (absent(n)) return;
  if (!n.IsMap()) fail(n, path + " must be a mapping");
  for (const auto& kv : n) {
    const auto key = kv.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(kv.first, "unknown key '" + (path.empty() ? key : path + "." + key) + "'");
  }
}

std::string scalar(const YAML::Node& n, const std::string& path) {
  if (absent(n)) return "";
  if (!n.IsScalar()) fail(n, path + " must be a scalar");
  return n.Scalar();
}

int integer(const YAML::Node& n, const std::string& path) {
  const auto text = scalar(n, path);
  try {
    std::size_t used = 0;
    const long v = std::stol(text, &used);
    if (used == text.size() && v >= INT32_MIN && v <= INT32_MAX) return static_cast<int>(v);
  } catch (const std::exception&) {
  }
  fail(n, path + " must be an integer, got '" + text + "'");
}

bool boolean(const YAML::Node& n, const std::string& path) {
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v))
    fail(n, path + " must be true or false");
  return v;
}

// Null, missing or a sequence; anything else is an error.
void expect_sequence(const YAML::Node& n, const std::string& path) {
  if (!absent(n) && !n.IsSequence()) fail(n, path + " must be a list");
}

physical_cell_spec read_physical_cell(const YAML::Node& n, const std::string& path) {
  expect_map(n, path, {"cellType", "cellAddress", "pinnedCellId", "cellChildren"});
  physical_cell_spec cell;
  if (absent(n)) return cell;
  cell.cell_type = scalar(get(n, "cellType"), path + ".cellType");
  cell.cell_address = scalar(get(n, "cellAddress"), path + ".cellAddress");
  cell.pinned_cell_id = scalar(get(n, "pinnedCellId"), path + ".pinnedCellId");
  const auto children = get(n, "cellChildren");
  expect_sequence(children, path + ".cellChildren");
  if (children.IsSequence()) {
    for (std::size_t i = 0; i < children.size(); ++i)
      cell.cell_children.push_back(
          read_physical_cell(children[i], path + ".cellChildren[" + std::to_string(i) + "]"));
  }
  return cell;
}

physical_cluster_spec read_physical_cluster(const YAML::Node& n) {
  const std::string path = "physicalCluster";
  expect_map(n, path, {"cellTypes", "physicalCells"});
  physical_cluster_spec pc;
  if (absent(n)) return pc;
  const auto types = get(n, "cellTypes");
  // Any name is a valid key here; only the shape of each entry is checked.
  if (!absent(types) && !types.IsMap()) fail(types, path + ".cellTypes must be a mapping");
  for (const auto& kv : types) {
    const auto name = kv.first.as<std::string>();
    const auto tpath = path + ".cellTypes." + name;
    expect_map(kv.second, tpath, {"childCellType", "childCellNumber", "isNodeLevel"});
    cell_type_spec spec;
    spec.child_cell_type = scalar(get(kv.second, "childCellType"), tpath + ".childCellType");
    if (!absent(get(kv.second, "childCellNumber")))
      spec.child_cell_number = integer(get(kv.second, "childCellNumber"), tpath + ".childCellNumber");
    if (!absent(get(kv.second, "isNodeLevel")))
      spec.is_node_level = boolean(get(kv.second, "isNodeLevel"), tpath + ".isNodeLevel");
    pc.cell_types.emplace(name, std::move(spec));
  }
  const auto cells = get(n, "physicalCells");
  expect_sequence(cells, path + ".physicalCells");
  if (cells.IsSequence()) {
    for (std::size_t i = 0; i < cells.size(); ++i)
      pc.physical_cells.push_back(
          read_physical_cell(cells[i], path + ".physicalCells[" + std::to_string(i) + "]"));
  }
  return pc;
}

// `{<cellType>: <count>}`: counts 0..100000 (a count sizes nothing, but a typo of 10^9 is no limit).
std::map<std::string, int> read_cell_counts(const YAML::Node& n, const std::string& path) {
  std::map<std::string, int> out;
  if (absent(n)) return out;
  if (!n.IsMap()) fail(n, path + " must be a mapping of cell type to count");
  for (const auto& kv : n) {
    const auto type = kv.first.as<std::string>();
    const int count = integer(kv.second, path + "." + type);
    if (count < 0 || count > 100000) fail(kv.second, path + "." + type + " must be between 0 and 100000");
    out[type] = count;
  }
  return out;
}

// "30s", "2m", "500ms", "1h" or a bare number of seconds; at most a day.
std::int64_t read_duration_ms(const YAML::Node& n, const std::string& path) {
  const auto text = scalar(n, path);
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string unit = text.substr(digits);
  const std::int64_t scale = unit == "ms" ? 1 : unit == "s" || unit.empty() ? 1000 : unit == "m" ? 60'000
                             : unit == "h" ? 3'600'000 : 0;
  if (digits == 0 || digits > 9 || scale == 0)
    fail(n, path + " must be a duration such as 30s, 2m or 500ms, got '" + text + "'");
  const std::int64_t ms = std::stoll(text.substr(0, digits)) * scale;
  if (ms > 86'400'000) fail(n, path + " must be at most 24h, got '" + text + "'");
  return ms;
}

borrowing_spec read_borrowing(const YAML::Node& n) {
  expect_map(n, "borrowing", {"enabled", "reclaimTimeout"});
  borrowing_spec b;
  if (absent(n)) return b;
  if (!absent(get(n, "enabled"))) b.enabled = boolean(get(n, "enabled"), "borrowing.enabled");
  if (!absent(get(n, "reclaimTimeout"))) b.reclaim_timeout_ms = read_duration_ms(get(n, "reclaimTimeout"), "borrowing.reclaimTimeout");
  return b;
}

virtual_cluster_spec read_virtual_cluster(const YAML::Node& n, const std::string& path) {
  expect_map(n, path, {"virtualCells", "pinnedCells", "lendingLimit", "borrowingLimit"});
  virtual_cluster_spec vc;
  if (absent(n)) return vc;
  const auto cells = get(n, "virtualCells");
  expect_sequence(cells, path + ".virtualCells");
  for (std::size_t i = 0; cells.IsSequence() && i < cells.size(); ++i) {
    const auto cpath = path + ".virtualCells[" + std::to_string(i) + "]";
    expect_map(cells[i], cpath, {"cellType", "cellNumber"});
    virtual_cell_spec cell;
    cell.cell_type = scalar(get(cells[i], "cellType"), cpath + ".cellType");
    if (!absent(get(cells[i], "cellNumber"))) cell.cell_number = integer(get(cells[i], "cellNumber"), cpath + ".cellNumber");
    vc.virtual_cells.push_back(std::move(cell));
  }
  const auto pinned = get(n, "pinnedCells");
  expect_sequence(pinned, path + ".pinnedCells");
  for (std::size_t i = 0; pinned.IsSequence() && i < pinned.size(); ++i) {
    const auto ppath = path + ".pinnedCells[" + std::to_string(i) + "]";
    expect_map(pinned[i], ppath, {"pinnedCellId"});
    vc.pinned_cells.push_back(scalar(get(pinned[i], "pinnedCellId"), ppath + ".pinnedCellId"));
  }
  vc.lending_limit = read_cell_counts(get(n, "lendingLimit"), path + ".lendingLimit");
  vc.borrowing_limit = read_cell_counts(get(n, "borrowingLimit"), path + ".borrowingLimit");
  return vc;
}

// `topologyFromLabels: {levels: [{name, label}, ...]}`; the levels' rules are checked by
// label_topology's check_levels once the shape is right.
std::vector<topology_level> read_topology_from_labels(const YAML::Node& n) {
  const std::string path = "topologyFromLabels";
  if (absent(n)) fail(n, path + " must be a mapping with `levels`");
  expect_map(n, path, {"levels"});
  const auto levels = get(n, "levels");
  if (absent(levels) || !levels.IsSequence()) fail(n, path + ".levels must be a list");
  std::vector<topology_level> out;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const auto lpath = path + ".levels[" + std::to_string(i) + "]";
    if (absent(levels[i]) || !levels[i].IsMap()) fail(levels[i], lpath + " must be a mapping");
    expect_map(levels[i], lpath, {"name", "label"});
    out.push_back({scalar(get(levels[i], "name"), lpath + ".name"), scalar(get(levels[i], "label"), lpath + ".label")});
  }
  return out;
}

config read_config(const YAML::Node& root) {
  expect_map(root, "", {"kubeApiServerAddress", "kubeConfigFilePath", "webServerAddress",
                        "forcePodBindThreshold", "waitingPodSchedulingBlockMilliSec",
                        "physicalCluster", "virtualClusters", "borrowing", "topologyFromLabels"});
  config cfg;
  if (absent(root)) return cfg;
  cfg.kube_api_server_address = scalar(get(root, "kubeApiServerAddress"), "kubeApiServerAddress");
  cfg.kube_config_file_path = scalar(get(root, "kubeConfigFilePath"), "kubeConfigFilePath");
  if (!absent(get(root, "webServerAddress"))) cfg.web_server_address = scalar(get(root, "webServerAddress"), "webServerAddress");
  if (!absent(get(root, "forcePodBindThreshold")))
    cfg.force_pod_bind_threshold = integer(get(root, "forcePodBindThreshold"), "forcePodBindThreshold");
  if (!absent(get(root, "waitingPodSchedulingBlockMilliSec")))
    cfg.waiting_pod_scheduling_block_millisec =
        integer(get(root, "waitingPodSchedulingBlockMilliSec"), "waitingPodSchedulingBlockMilliSec");
  if (!absent(get(root, "physicalCluster"))) cfg.physical_cluster = read_physical_cluster(get(root, "physicalCluster"));
  cfg.borrowing = read_borrowing(get(root, "borrowing"));
  if (root.IsMap() && root["topologyFromLabels"]) {
    cfg.topology_from_labels = read_topology_from_labels(get(root, "topologyFromLabels"));
    cfg.has_topology_from_labels = true;
    if (!absent(get(root, "physicalCluster")))
      fail(get(root, "topologyFromLabels"), "topologyFromLabels and physicalCluster: give one (the cells come from the "
                                            "node labels or from physicalCluster)");
    if (auto st = check_levels(cfg.topology_from_labels); !st) fail(get(root, "topologyFromLabels"), st.err().message);
  }
  const auto vcs = get(root, "virtualClusters");
  if (!absent(vcs) && !vcs.IsMap()) fail(vcs, "virtualClusters must be a mapping");
  for (const auto& kv : vcs) {
    const auto name = kv.first.as<std::string>();
    cfg.virtual_clusters.emplace(name, read_virtual_cluster(kv.second, "virtualClusters." + name));
  }
  return cfg;
}

} // namespace

expected<config> parse_config(std::string_view yaml_text) {
  try {
    return read_config(YAML::Load(std::string(yaml_text)));
  } catch (const parse_failure& f) {
    return error::invalid("scheduler config: " + f.message);
  } catch (const YAML::Exception& e) {
    return error::invalid(std::string("scheduler config: malformed YAML: ") + e.what());
  }
}

} // namespace kozmo::scheduler
