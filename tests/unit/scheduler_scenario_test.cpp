// Scenario tests as data (HiveD's setting.yaml + caseN.yaml): every *.yaml in the folder named
// by KOZMO_SCHEDULER_SCENARIOS is replayed step by step against place_gang / release_gang, so a
// new regression is a new file, not new code. The format is in scheduler_scenarios/README.md.
// Strict on purpose: an unknown key or step kind fails, naming the file and step, so a typo
// can never turn an assertion into a no-op.
#include "actors/scheduler/allocation_state.hpp"
#include "actors/scheduler/gang_placement.hpp"
#include "actors/scheduler/virtual_clusters.hpp"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace fs = std::filesystem;
using namespace kozmo::scheduler;
using kozmo::error;
using kozmo::status;
using Catch::Matchers::Contains;

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Keys of a mapping outside `allowed` are errors: they are almost always typos.
status only_keys(const YAML::Node& map, std::string_view what,
                 std::initializer_list<std::string_view> allowed) {
  if (!map.IsMap()) return error{std::string(what) + " must be a mapping"};
  for (const auto& entry : map) {
    const auto key = entry.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return error{"unknown key '" + key + "' in " + std::string(what)};
  }
  return kozmo::ok;
}

std::string describe(const std::string& node, const std::vector<int>& gpus) {
  std::string out = node + " [";
  for (std::size_t i = 0; i < gpus.size(); ++i) out += (i ? "," : "") + std::to_string(gpus[i]);
  return out + "]";
}

std::string describe(const std::vector<pod_placement>& pods) {
  std::string out;
  for (const auto& pod : pods) out += (out.empty() ? "" : ", ") + describe(pod.node, pod.leaf_indices);
  return out;
}

// Pods in request order: members[0]'s pods, then members[1]'s, ...
std::vector<pod_placement> flatten(const gang_placement& placed) {
  std::vector<pod_placement> pods;
  for (const auto& member : placed.pods) pods.insert(pods.end(), member.begin(), member.end());
  return pods;
}

status check_bound(const std::vector<pod_placement>& pods, const YAML::Node& bound) {
  if (!bound.IsSequence()) return error{"expect.bound must be a list of pods"};
  if (bound.size() != pods.size())
    return error{"expected " + std::to_string(bound.size()) + " pods, got " +
                 std::to_string(pods.size()) + ": " + describe(pods)};
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const YAML::Node want = bound[i];
    const std::string what = "expect.bound[" + std::to_string(i) + "]";
    if (auto keys = only_keys(want, what, {"node", "leafCells", "relaxed", "leafType"}); !keys)
      return keys;
    if (!want["node"] || !want["leafCells"]) return error{what + " needs node and leafCells"};
    const auto node = want["node"].as<std::string>();
    const auto gpus = want["leafCells"].as<std::vector<int>>();
    if (pods[i].node != node || pods[i].leaf_indices != gpus)
      return error{"pod " + std::to_string(i) + ": expected " + describe(node, gpus) + ", got " +
                   describe(pods[i].node, pods[i].leaf_indices) + " (all pods: " +
                   describe(pods) + ")"};
    if (want["relaxed"] && want["relaxed"].as<bool>() != pods[i].relaxed)
      return error{"pod " + std::to_string(i) + ": expected relaxed=" +
                   want["relaxed"].as<std::string>() + ", got " +
                   (pods[i].relaxed ? "true" : "false")};
    if (want["leafType"] && want["leafType"].as<std::string>() != pods[i].leaf_type)
      return error{"pod " + std::to_string(i) + ": expected leaf type " +
                   want["leafType"].as<std::string>() + ", got " + pods[i].leaf_type};
  }
  return kozmo::ok;
}

status run_schedule(allocation_state& state, const YAML::Node& step) {
  const YAML::Node spec = step["schedule"];
  if (auto keys = only_keys(spec, "schedule", {"group", "leafType", "members"}); !keys) return keys;
  if (!spec["group"] || !spec["members"] || !spec["members"].IsSequence())
    return error{"schedule needs group and a members list"};
  gang_request request;
  request.group = spec["group"].as<std::string>();
  if (spec["leafType"]) request.leaf_type = spec["leafType"].as<std::string>();
  for (const auto& member : spec["members"]) {
    if (auto keys = only_keys(member, "schedule.members[]", {"podNumber", "leafCellNumber"});
        !keys)
      return keys;
    request.members.push_back(
        {member["podNumber"].as<int>(), member["leafCellNumber"].as<int>()});
  }
  const YAML::Node expect = step["expect"];
  if (expect) {
    if (auto keys = only_keys(expect, "expect", {"bound", "wait"}); !keys) return keys;
    if (expect.size() != 1) return error{"expect holds exactly one of bound or wait"};
  }
  const std::string group = "group '" + request.group + "': ";
  auto placed = place_gang(state, request);
  if (!placed) {
    const auto& why = placed.err();
    if (!expect || !expect["wait"])
      return error{group + "expected a placement, got " + why.reason + ": " + why.message};
    if (why.reason != "Unschedulable")
      return error{group + "expected it to wait, got " + why.reason + ": " + why.message};
    const auto wanted = expect["wait"].as<std::string>();
    if (why.message.find(wanted) == std::string::npos)
      return error{group + "wait reason \"" + why.message + "\" does not contain \"" + wanted +
                   "\""};
    return kozmo::ok;
  }
  const auto pods = flatten(*placed);
  if (expect && expect["wait"]) return error{group + "expected it to wait, but it was placed: " + describe(pods)};
  if (!expect) return kozmo::ok;
  if (auto bound = check_bound(pods, expect["bound"]); !bound)
    return error{group + bound.err().message};
  return kozmo::ok;
}

status run_release(allocation_state& state, const YAML::Node& step) {
  const YAML::Node spec = step["release"];
  if (auto keys = only_keys(spec, "release", {"group"}); !keys) return keys;
  if (!spec["group"]) return error{"release needs group"};
  const auto group = spec["group"].as<std::string>();
  // Releasing nothing is a script mistake (a misspelt group), not a no-op.
  if (release_gang(state, group) == 0) return error{"group '" + group + "' holds no cells"};
  return kozmo::ok;
}

status run_expect_free(const allocation_state& state, const YAML::Node& step) {
  const YAML::Node spec = step["expectFree"];
  if (auto keys = only_keys(spec, "expectFree", {"node", "leafCells"}); !keys) return keys;
  if (!spec["node"] || !spec["leafCells"]) return error{"expectFree needs node and leafCells"};
  const auto node = spec["node"].as<std::string>();
  const auto node_cells = state.tree().node_level_cells_of(node);
  if (node_cells.empty()) return error{"unknown node '" + node + "'"};
  int free = 0;
  for (cell_id id : node_cells) free += state.free_leaves(id);
  const int wanted = spec["leafCells"].as<int>();
  if (free != wanted)
    return error{"node " + node + ": expected " + std::to_string(wanted) + " free GPUs, got " +
                 std::to_string(free)};
  return kozmo::ok;
}

status run_step(allocation_state& state, const YAML::Node& step) {
  if (auto keys = only_keys(step, "step", {"schedule", "expect", "release", "expectFree"}); !keys)
    return keys;
  const int kinds = (step["schedule"] ? 1 : 0) + (step["release"] ? 1 : 0) +
                    (step["expectFree"] ? 1 : 0);
  if (kinds != 1) return error{"a step holds exactly one of schedule, release, expectFree"};
  if (step["schedule"]) return run_schedule(state, step);
  if (step["expect"]) return error{"expect belongs to a schedule step"};
  if (step["release"]) return run_release(state, step);
  return run_expect_free(state, step);
}

// The cluster text: inline `cluster:` (a mapping, or a block string) or `clusterFile:`.
kozmo::expected<std::string> cluster_text(const YAML::Node& root, const fs::path& base_dir) {
  if (root["cluster"].IsDefined() == root["clusterFile"].IsDefined())
    return error{"a scenario holds exactly one of cluster or clusterFile"};
  if (root["cluster"]) {
    if (root["cluster"].IsScalar()) return root["cluster"].as<std::string>();
    return YAML::Dump(root["cluster"]);
  }
  const fs::path path = base_dir / root["clusterFile"].as<std::string>();
  if (!fs::is_regular_file(path)) return error{"clusterFile " + path.string() + " not found"};
  return read_text(path);
}

// Replays one scenario; the error names the file, the step index and its line.
status run_scenario(const std::string& name, const std::string& text, const fs::path& base_dir) {
  const auto fail = [&](const std::string& where, const std::string& why) {
    return error{name + " " + where + ": " + why};
  };
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return fail("", e.what());
  }
  const YAML::Node doc = root;
  if (auto keys = only_keys(doc, "the scenario", {"description", "cluster", "clusterFile", "steps"});
      !keys)
    return fail("(top level)", keys.err().message);
  std::unique_ptr<cluster_model> model;
  try {
    auto cluster = cluster_text(doc, base_dir);
    if (!cluster) return fail("(cluster)", cluster.err().message);
    auto loaded = load_cluster_model(*cluster);
    if (!loaded) return fail("(cluster)", loaded.err().message);
    model = std::make_unique<cluster_model>(std::move(*loaded));
  } catch (const YAML::Exception& e) {
    return fail("(cluster)", e.what());
  }
  const YAML::Node steps = doc["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0)
    return fail("(top level)", "steps must be a non-empty list");
  allocation_state state(model->tree);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const YAML::Node step = steps[i];
    const std::string where =
        "steps[" + std::to_string(i) + "] (line " + std::to_string(step.Mark().line + 1) + ")";
    try {
      if (auto done = run_step(state, step); !done) return fail(where, done.err().message);
    } catch (const YAML::Exception& e) {
      return fail(where, e.what());
    }
  }
  return kozmo::ok;
}

std::vector<fs::path> scenario_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

constexpr const char* tiny_cluster = R"(
cluster:
  physicalCluster:
    cellTypes:
      T4-NODE: {childCellType: T4, childCellNumber: 2, isNodeLevel: true}
    physicalCells:
    - {cellType: T4-NODE, cellAddress: n1}
)";

std::string replay_error(const std::string& steps) {
  auto result = run_scenario("inline.yaml", std::string(tiny_cluster) + steps, ".");
  return result ? std::string("<passed>") : result.err().message;
}

} // namespace

TEST_CASE("every scenario file replays with every expectation met", "[scheduler][scenario]") {
  const char* dir = std::getenv("KOZMO_SCHEDULER_SCENARIOS");
  if (!dir) FAIL("KOZMO_SCHEDULER_SCENARIOS is not set; run through `meson test`");
  if (!fs::is_directory(dir)) FAIL("scenario folder " << dir << " does not exist");
  const auto files = scenario_files(dir);
  if (files.empty()) FAIL("scenario folder " << dir << " holds no *.yaml file");
  for (const auto& file : files) {
    DYNAMIC_SECTION(file.filename().string()) {
      auto result = run_scenario(file.filename().string(), read_text(file), file.parent_path());
      if (!result) FAIL(result.err().message);
      SUCCEED(file.filename().string() << " passed");
    }
  }
}

TEST_CASE("a typo in a scenario fails naming the file and the step instead of passing",
          "[scheduler][scenario]") {
  const auto unknown_kind = replay_error(R"(steps:
- schedule: {group: a, members: [{podNumber: 1, leafCellNumber: 1}]}
- expectFre: {node: n1, leafCells: 1}
)");
  CHECK_THAT(unknown_kind, Contains("inline.yaml steps[1] (line 10)"));
  CHECK_THAT(unknown_kind, Contains("unknown key 'expectFre'"));
  CHECK_THAT(replay_error("steps:\n- schedule: {group: a, member: []}\n"),
             Contains("steps[0]") && Contains("unknown key 'member' in schedule"));
  CHECK_THAT(replay_error("steps:\n- release: {group: nobody}\n"),
             Contains("group 'nobody' holds no cells"));
  CHECK_THAT(replay_error("steps: []\n"), Contains("steps must be a non-empty list"));
}

TEST_CASE("a scenario whose expectation is wrong fails showing what the allocator did",
          "[scheduler][scenario]") {
  CHECK_THAT(replay_error(R"(steps:
- schedule: {group: a, members: [{podNumber: 1, leafCellNumber: 1}]}
  expect: {bound: [{node: n1, leafCells: [1]}]}
)"),
             Contains("steps[0]") && Contains("expected n1 [1], got n1 [0]"));
  CHECK_THAT(replay_error(R"(steps:
- schedule: {group: a, members: [{podNumber: 2, leafCellNumber: 2}]}
  expect: {wait: "no such words"}
)"),
             Contains("does not contain \"no such words\""));
  CHECK_THAT(replay_error(R"(steps:
- schedule: {group: a, members: [{podNumber: 1, leafCellNumber: 2}]}
- expectFree: {node: n1, leafCells: 2}
)"),
             Contains("steps[1]") && Contains("expected 2 free GPUs, got 0"));
}
