// Scenario tests as data (HiveD's setting.yaml + caseN.yaml): every *.yaml in the folder named
// by KOZMO_SCHEDULER_SCENARIOS is replayed step by step against the facade the actors use
// (scheduler_core), so a new regression is a new file, not new code. The format is in
// scheduler_scenarios/README.md. Strict on purpose: an unknown key or step kind fails, naming
// the file and step, so a typo can never turn an assertion into a no-op.
#include "actors/scheduler/label_topology.hpp"
#include "actors/scheduler/scheduler_core.hpp"

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
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

struct pod_record {
  pod_view view;
  std::optional<pod_decision> last;  // latest decision seen for the pod
};

// One replay: the core, the pods the script created, what the core decided for them.
struct replay {
  std::unique_ptr<scheduler_core> core;
  std::string config_text;
  fs::path base_dir;
  std::map<std::string, std::vector<std::string>> group_pods; // group -> uids in request order
  std::map<std::string, pod_record> pods;
  std::vector<std::pair<std::string, bool>> health;           // set_node calls, in order
  std::vector<group_notice> notices;                          // every notice taken, in order
  std::int64_t now = 0;

  void absorb(std::vector<pod_decision> decisions) {
    for (auto& d : decisions) {
      auto it = pods.find(d.pod.uid);
      if (it == pods.end()) continue;
      if (d.kind == decision_kind::bind) {
        it->second.view.node = d.node;
        it->second.view.bind_info = d.annotations[bind_info_annotation];
        core->pod_bound(d.pod.uid);
      }
      it->second.last = std::move(d);
    }
  }
  void run() {
    absorb(core->schedule(now));
    for (auto& n : core->take_notices()) notices.push_back(std::move(n));
  }
};

// A cluster with topologyFromLabels lists its nodes beside it (`labelledNodes: [{name, gpus,
// gpuType, labels}]`): the cells are derived from them (label_topology.hpp); others pass as given.
kozmo::expected<std::string> derived_from_labels(std::string text) {
  YAML::Node root = YAML::Load(text);
  if (!root.IsMap() || !root["topologyFromLabels"]) return text;
  std::vector<labelled_node> nodes;
  for (const auto& n : root["labelledNodes"]) {
    if (auto keys = only_keys(n, "labelledNodes[]", {"name", "gpus", "gpuType", "labels"}); !keys) return keys.err();
    labelled_node node{n["name"].as<std::string>(), n["gpus"].as<int>(), n["gpuType"].as<std::string>(), {}};
    for (const auto& kv : n["labels"]) node.labels[kv.first.as<std::string>()] = kv.second.as<std::string>();
    nodes.push_back(std::move(node));
  }
  root.remove("labelledNodes");
  auto derived = config_from_labels(YAML::Dump(root), nodes);
  if (!derived) return error{derived.err().message};
  return *derived;
}

kozmo::expected<std::string> cluster_text(const YAML::Node& root, const fs::path& base_dir) {
  if (root["cluster"].IsDefined() == root["clusterFile"].IsDefined())
    return error{"a scenario holds exactly one of cluster or clusterFile"};
  if (root["cluster"]) {
    if (root["cluster"].IsScalar()) return derived_from_labels(root["cluster"].as<std::string>());
    return derived_from_labels(YAML::Dump(root["cluster"]));
  }
  const fs::path path = base_dir / root["clusterFile"].as<std::string>();
  if (!fs::is_regular_file(path)) return error{"clusterFile " + path.string() + " not found"};
  return derived_from_labels(read_text(path));
}

// Checks the latest decisions of a group's pods against `expect` (bound / wait / preempt).
status check_expect(replay& r, const std::string& group, const YAML::Node& expect) {
  if (auto keys = only_keys(expect, "expect", {"group", "bound", "wait", "preempt"}); !keys) return keys;
  const std::string who = expect["group"] ? expect["group"].as<std::string>() : group;
  const int kinds = (expect["bound"] ? 1 : 0) + (expect["wait"] ? 1 : 0) + (expect["preempt"] ? 1 : 0);
  if (kinds != 1) return error{"expect holds exactly one of bound, wait or preempt"};
  auto it = r.group_pods.find(who);
  if (it == r.group_pods.end()) return error{"expect names unknown group '" + who + "'"};
  const std::string prefix = "group '" + who + "': ";
  std::vector<const pod_decision*> got;
  std::string seen;
  for (const auto& uid : it->second) {
    const auto& rec = r.pods.at(uid);
    if (!rec.last) return error{prefix + "pod " + uid + " got no decision"};
    got.push_back(&*rec.last);
    const auto& d = *rec.last;
    seen += (seen.empty() ? "" : ", ") +
            (d.kind == decision_kind::bind ? describe(d.node, d.leaf_indices)
             : d.kind == decision_kind::wait ? "wait \"" + d.reason + "\""
                                             : "preempt \"" + d.reason + "\"");
  }
  if (expect["bound"]) {
    const YAML::Node bound = expect["bound"];
    if (!bound.IsSequence() || bound.size() != got.size())
      return error{prefix + "expected " + std::to_string(bound.size()) + " bound pods, got: " + seen};
    for (std::size_t i = 0; i < got.size(); ++i) {
      const YAML::Node want = bound[i];
      const std::string what = "expect.bound[" + std::to_string(i) + "]";
      if (auto keys = only_keys(want, what, {"node", "leafCells", "leafType"}); !keys) return keys;
      if (!want["node"] || !want["leafCells"]) return error{what + " needs node and leafCells"};
      const auto node = want["node"].as<std::string>();
      const auto gpus = want["leafCells"].as<std::vector<int>>();
      const auto& d = *got[i];
      if (d.kind != decision_kind::bind || d.node != node || d.leaf_indices != gpus)
        return error{prefix + "pod " + std::to_string(i) + ": expected " + describe(node, gpus) +
                     ", got " + seen};
      if (want["leafType"] && want["leafType"].as<std::string>() != d.leaf_type)
        return error{prefix + "pod " + std::to_string(i) + ": expected leaf type " +
                     want["leafType"].as<std::string>() + ", got " + d.leaf_type};
    }
    return kozmo::ok;
  }
  const bool wait = static_cast<bool>(expect["wait"]);
  std::string words;
  std::vector<std::string> victim_groups;
  if (wait) {
    words = expect["wait"].as<std::string>();
  } else {
    const YAML::Node p = expect["preempt"];
    if (auto keys = only_keys(p, "expect.preempt", {"victims", "reason"}); !keys) return keys;
    if (p["reason"]) words = p["reason"].as<std::string>();
    if (p["victims"]) victim_groups = p["victims"].as<std::vector<std::string>>();
  }
  for (const auto* d : got) {
    if (d->kind != (wait ? decision_kind::wait : decision_kind::preempt))
      return error{prefix + "expected every pod to " + (wait ? "wait" : "preempt") + ", got " + seen};
    if (d->reason.find(words) == std::string::npos)
      return error{prefix + "reason \"" + d->reason + "\" does not contain \"" + words + "\""};
    if (wait) continue;
    std::vector<std::string> groups;
    for (const auto& v : d->victims) {
      const auto g = r.core->group_of(v.uid);
      if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
    }
    std::sort(groups.begin(), groups.end());
    auto want = victim_groups;
    std::sort(want.begin(), want.end());
    if (groups != want) {
      std::string list;
      for (const auto& g : groups) list += (list.empty() ? "" : ", ") + g;
      return error{prefix + "expected victims from other groups, got [" + list + "]"};
    }
  }
  return kozmo::ok;
}

status run_schedule(replay& r, const YAML::Node& step) {
  const YAML::Node spec = step["schedule"];
  if (auto keys = only_keys(spec, "schedule",
                            {"group", "vc", "priority", "leafType", "pinnedCell", "lazyPreemption", "minMembers",
                             "members", "suggestedNodes", "ignoreSuggestedNodes", "gangLevel", "preferredLevel",
                             "subgroups", "refused"});
      !keys)
    return keys;
  const bool subgroups = static_cast<bool>(spec["subgroups"]);
  if (!spec["group"] || subgroups == static_cast<bool>(spec["members"]) ||
      !(subgroups ? spec["subgroups"] : spec["members"]).IsSequence())
    return error{"schedule needs group and either a members or a subgroups list"};
  pod_scheduling_spec s;
  s.affinity_group = spec["group"].as<std::string>();
  s.virtual_cluster = spec["vc"] ? spec["vc"].as<std::string>() : "default";
  s.priority = spec["priority"] ? spec["priority"].as<int>() : 0;
  if (spec["leafType"]) s.leaf_cell_type = spec["leafType"].as<std::string>();
  if (spec["pinnedCell"]) s.pinned_cell_id = spec["pinnedCell"].as<std::string>();
  if (spec["lazyPreemption"]) s.lazy_preemption_enable = spec["lazyPreemption"].as<bool>();
  if (spec["minMembers"]) s.min_members = spec["minMembers"].as<int>(); // elastic: one member only
  if (spec["ignoreSuggestedNodes"]) s.ignore_k8s_suggested_nodes = spec["ignoreSuggestedNodes"].as<bool>();
  if (spec["gangLevel"]) s.gang_level = spec["gangLevel"].as<std::string>();
  if (spec["preferredLevel"]) s.preferred_level = spec["preferredLevel"].as<std::string>();
  // Subgroups: each entry is a member of the gang whose pods carry its subgroup keys.
  std::vector<pod_scheduling_spec> member_specs;
  for (const auto& member : subgroups ? spec["subgroups"] : spec["members"]) {
    if (auto keys = subgroups ? only_keys(member, "schedule.subgroups[]",
                                          {"name", "podNumber", "leafCellNumber", "level", "minMembers"})
                              : only_keys(member, "schedule.members[]", {"podNumber", "leafCellNumber"});
        !keys)
      return keys;
    s.members.push_back({member["podNumber"].as<int>(), member["leafCellNumber"].as<int>()});
    pod_scheduling_spec& m = member_specs.emplace_back();
    if (!subgroups) continue;
    if (member["name"]) m.subgroup = member["name"].as<std::string>();
    if (member["level"]) m.subgroup_level = member["level"].as<std::string>();
    if (member["minMembers"]) m.subgroup_min_members = member["minMembers"].as<int>();
  }
  // Scheduling a group the script already created resubmits it: its old pods go first.
  auto& uids = r.group_pods[s.affinity_group];
  for (const auto& uid : uids) {
    r.core->remove_pod(uid);
    r.pods.erase(uid);
  }
  uids.clear();
  int index = 0;
  for (std::size_t mi = 0; mi < s.members.size(); ++mi)
    for (int k = 0; k < s.members[mi].pod_number; ++k) {
      const auto& m = s.members[mi];
      pod_view v;
      v.ref = {"default", s.affinity_group + "-" + std::to_string(index),
               s.affinity_group + "-" + std::to_string(index)};
      ++index;
      v.spec = s;
      v.spec.leaf_cell_number = m.leaf_cell_number;
      v.spec.subgroup = member_specs[mi].subgroup;
      v.spec.subgroup_level = member_specs[mi].subgroup_level;
      v.spec.subgroup_min_members = member_specs[mi].subgroup_min_members;
      v.created_ms = r.now;
      if (auto added = r.core->add_pod(v); !added) {
        // `refused`: the first pod must be refused with a message holding these words.
        if (spec["refused"] && added.err().message.find(spec["refused"].as<std::string>()) != std::string::npos)
          return kozmo::ok;
        return error{"group '" + s.affinity_group + "': add_pod refused: " + added.err().message};
      }
      if (spec["refused"]) return error{"group '" + s.affinity_group + "': add_pod accepted a pod expected refused"};
      uids.push_back(v.ref.uid);
      r.pods[v.ref.uid] = pod_record{v, std::nullopt};
    }
  if (spec["suggestedNodes"]) {
    const auto nodes = spec["suggestedNodes"].as<std::vector<std::string>>();
    std::vector<pod_decision> decisions;
    for (const auto& uid : uids) decisions.push_back(r.core->schedule_one(uid, nodes, r.now));
    r.absorb(std::move(decisions));
  } else {
    r.run();
  }
  if (!step["expect"]) return kozmo::ok;
  return check_expect(r, s.affinity_group, step["expect"]);
}

status run_release(replay& r, const YAML::Node& step) {
  const YAML::Node spec = step["release"];
  if (auto keys = only_keys(spec, "release", {"group", "pods"}); !keys) return keys;
  if (!spec["group"]) return error{"release needs group"};
  const auto group = spec["group"].as<std::string>();
  auto it = r.group_pods.find(group);
  // Releasing nothing is a script mistake (a misspelt group), not a no-op.
  if (it == r.group_pods.end() || it->second.empty()) return error{"group '" + group + "' holds no cells"};
  int count = spec["pods"] ? spec["pods"].as<int>() : static_cast<int>(it->second.size());
  while (count-- > 0 && !it->second.empty()) {
    r.core->remove_pod(it->second.back());
    r.pods.erase(it->second.back());
    it->second.pop_back();
  }
  if (it->second.empty()) r.group_pods.erase(it);
  return kozmo::ok;
}

status run_expect_free(replay& r, const YAML::Node& step) {
  const YAML::Node spec = step["expectFree"];
  if (auto keys = only_keys(spec, "expectFree", {"node", "leafCells"}); !keys) return keys;
  if (!spec["node"] || !spec["leafCells"]) return error{"expectFree needs node and leafCells"};
  const auto node = spec["node"].as<std::string>();
  const auto physical = r.core->inspect_physical_cluster();
  for (const auto& n : physical.as_array()) {
    if (n.get_string("node") != node) continue;
    const auto free = n.get_int("leafCells") - n.get_int("usedLeafCells");
    const int wanted = spec["leafCells"].as<int>();
    if (free != wanted)
      return error{"node " + node + ": expected " + std::to_string(wanted) + " free GPUs, got " +
                   std::to_string(free)};
    return kozmo::ok;
  }
  return error{"unknown node '" + node + "'"};
}

status run_expect_group(replay& r, const YAML::Node& step) {
  const YAML::Node spec = step["expectGroup"];
  if (auto keys = only_keys(spec, "expectGroup",
                            {"group", "state", "lazyPreempted", "reasonContains", "placement", "gone", "relaxed", "notice"});
      !keys)
    return keys;
  const auto name = spec["group"].as<std::string>();
  auto g = r.core->inspect_group(name);
  if (spec["gone"] && spec["gone"].as<bool>()) {
    if (g) return error{"group '" + name + "' still exists: " + kozmo::json::dump(*g)};
    return kozmo::ok;
  }
  if (!g) return error{g.err().message};
  const std::string shown = kozmo::json::dump(*g);
  if (spec["state"] && g->get_string("state") != spec["state"].as<std::string>())
    return error{"group '" + name + "': expected state " + spec["state"].as<std::string>() + ", got " + shown};
  const auto* lazy = g->find("lazyPreemptionStatus");
  if (spec["lazyPreempted"] && spec["lazyPreempted"].as<bool>() != (lazy != nullptr))
    return error{"group '" + name + "': lazyPreempted expected " + spec["lazyPreempted"].as<std::string>() + ", got " + shown};
  if (spec["reasonContains"] && (!lazy || lazy->get_string("reason").find(spec["reasonContains"].as<std::string>()) == std::string::npos))
    return error{"group '" + name + "': lazy preemption reason lacks \"" + spec["reasonContains"].as<std::string>() + "\": " + shown};
  // Gang topology: whether inspect says it lies outside its preferred level, and a notice
  // (the Event the actor posts) queued for the group at some point.
  const auto* topology = g->find("topology");
  const bool relaxed = topology && topology->find("relaxed");
  if (spec["relaxed"] && spec["relaxed"].as<bool>() != relaxed)
    return error{"group '" + name + "': relaxed expected " + spec["relaxed"].as<std::string>() + ", got " + shown};
  if (spec["notice"]) {
    const auto want = spec["notice"].as<std::string>();
    bool seen = false;
    for (const auto& n : r.notices) seen = seen || (n.group == name && want == event_reason(n.kind));
    if (!seen) return error{"group '" + name + "': no " + want + " notice was queued"};
  }
  if (spec["placement"]) {
    for (const auto& kv : spec["placement"]) {
      const auto* at = g->find("physicalPlacement")->find(kv.first.as<std::string>());
      std::vector<int> have;
      if (at) for (const auto& i : at->as_array()) have.push_back(static_cast<int>(i.as_int()));
      if (have != kv.second.as<std::vector<int>>())
        return error{"group '" + name + "': placement on " + kv.first.as<std::string>() + " differs: " + shown};
    }
  }
  return kozmo::ok;
}

status run_expect_vc(replay& r, const YAML::Node& step) {
  const YAML::Node spec = step["expectVC"];
  if (auto keys = only_keys(spec, "expectVC", {"vc", "bad", "healthy", "used", "bound"}); !keys) return keys;
  const auto name = spec["vc"].as<std::string>();
  auto vc = r.core->inspect_virtual_cluster(name);
  if (!vc) return error{vc.err().message};
  int bad = 0, healthy = 0, used = 0, bound = 0;
  for (const auto& c : vc->as_array()) {
    (c.get_string("cellHealthiness") == "Bad" ? bad : healthy)++;
    used += c.get_string("cellState") == "Used" ? 1 : 0;
    bound += c.get_string("cellAddress").empty() ? 0 : 1;
  }
  const std::pair<const char*, int> checks[] = {{"bad", bad}, {"healthy", healthy}, {"used", used}, {"bound", bound}};
  for (const auto& [key, have] : checks)
    if (spec[key] && spec[key].as<int>() != have)
      return error{"VC " + name + ": expected " + spec[key].as<std::string>() + " " + key +
                   " cells, got " + std::to_string(have) + ": " + kozmo::json::dump(*vc)};
  return kozmo::ok;
}

kozmo::json::value snapshot(const scheduler_core& core) {
  kozmo::json::object o;
  o.set("groups", core.inspect_groups());
  o.set("vcs", core.inspect_virtual_clusters());
  o.set("physical", core.inspect_physical_cluster());
  return o;
}

// A scheduler restart: a fresh core (optionally on a new configuration) recovers every bound
// pod from its bind-info and re-queues the waiting ones.
status run_restart(replay& r, const YAML::Node& step) {
  const YAML::Node spec = step["restart"];
  if (!spec.IsNull() && !spec.IsMap()) return error{"restart must be a mapping or empty"};
  if (spec.IsMap())
    if (auto keys = only_keys(spec, "restart", {"clusterFile", "cluster", "sameState"}); !keys) return keys;
  std::string text = r.config_text;
  if (spec.IsMap() && (spec["cluster"] || spec["clusterFile"])) {
    auto t = cluster_text(spec, r.base_dir);
    if (!t) return t.err();
    text = *t;
  }
  auto loaded = scheduler_core::load(text);
  if (!loaded) return error{"restart: " + loaded.err().message};
  const auto before = snapshot(*r.core);
  auto core = std::make_unique<scheduler_core>(std::move(*loaded));
  for (const auto& [node, healthy] : r.health) core->set_node(node, healthy);
  for (auto& [uid, rec] : r.pods)
    if (!rec.view.bind_info.empty())
      if (auto st = core->recover_pod(rec.view); !st) return error{"recover " + uid + ": " + st.err().message};
  for (auto& [uid, rec] : r.pods)
    if (rec.view.bind_info.empty())
      if (auto st = core->add_pod(rec.view); !st) return error{"re-add " + uid + ": " + st.err().message};
  r.core = std::move(core);
  r.config_text = text;
  if (spec.IsMap() && spec["sameState"] && spec["sameState"].as<bool>()) {
    const auto after = snapshot(*r.core);
    if (after != before)
      return error{"state differs after recovery:\nbefore " + kozmo::json::dump(before) + "\nafter  " + kozmo::json::dump(after)};
  }
  return kozmo::ok;
}

status run_step(replay& r, const YAML::Node& step, std::size_t index) {
  if (auto keys = only_keys(step, "step", {"at", "schedule", "expect", "release", "expectFree", "tick",
                                           "setNode", "expectGroup", "expectVC", "restart"});
      !keys)
    return keys;
  const char* kinds_list[] = {"schedule", "release", "expectFree", "tick", "setNode", "expectGroup", "expectVC", "restart"};
  int kinds = 0;
  for (const char* k : kinds_list) kinds += step[k] ? 1 : 0;
  if (kinds != 1)
    return error{"a step holds exactly one of schedule, release, expectFree, tick, setNode, expectGroup, expectVC, restart"};
  r.now = step["at"] ? step["at"].as<std::int64_t>() : static_cast<std::int64_t>(index) * 1000;
  if (step["schedule"]) return run_schedule(r, step);
  if (step["tick"]) {
    r.run();
    return step["expect"] ? check_expect(r, "", step["expect"]) : kozmo::ok;
  }
  if (step["expect"]) return error{"expect belongs to a schedule or tick step"};
  if (step["release"]) return run_release(r, step);
  if (step["setNode"]) {
    const YAML::Node s = step["setNode"];
    if (auto keys = only_keys(s, "setNode", {"node", "healthy"}); !keys) return keys;
    const auto node = s["node"].as<std::string>();
    const bool healthy = s["healthy"].as<bool>();
    r.core->set_node(node, healthy);
    r.health.emplace_back(node, healthy);
    return kozmo::ok;
  }
  if (step["expectGroup"]) return run_expect_group(r, step);
  if (step["expectVC"]) return run_expect_vc(r, step);
  if (step["restart"]) return run_restart(r, step);
  return run_expect_free(r, step);
}

// Replays one scenario; the error names the file, the step index and its line.
status run_scenario(const std::string& name, const std::string& text, const fs::path& base_dir) {
  const auto fail = [&](const std::string& where, const std::string& why) {
    return error{name + " " + where + ": " + why};
  };
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return fail("", e.what());
  }
  if (auto keys = only_keys(doc, "the scenario", {"description", "cluster", "clusterFile", "options", "steps"}); !keys)
    return fail("(top level)", keys.err().message);
  replay r;
  r.base_dir = base_dir;
  try {
    auto cluster = cluster_text(doc, base_dir);
    if (!cluster) return fail("(cluster)", cluster.err().message);
    auto loaded = scheduler_core::load(*cluster);
    if (!loaded) return fail("(cluster)", loaded.err().message);
    r.core = std::make_unique<scheduler_core>(std::move(*loaded));
    r.config_text = *cluster;
    if (doc["options"]) {
      if (auto keys = only_keys(doc["options"], "options", {"reserveAfterMs"}); !keys) return fail("(options)", keys.err().message);
      scheduler_options o;
      if (doc["options"]["reserveAfterMs"]) o.reserve_after_ms = doc["options"]["reserveAfterMs"].as<std::int64_t>();
      r.core->set_options(o);
    }
  } catch (const YAML::Exception& e) {
    return fail("(cluster)", e.what());
  }
  const YAML::Node steps = doc["steps"];
  if (!steps || !steps.IsSequence() || steps.size() == 0)
    return fail("(top level)", "steps must be a non-empty list");
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const YAML::Node step = steps[i];
    const std::string where =
        "steps[" + std::to_string(i) + "] (line " + std::to_string(step.Mark().line + 1) + ")";
    try {
      if (auto done = run_step(r, step, i); !done) return fail(where, done.err().message);
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

TEST_CASE("a scenario whose expectation is wrong fails showing what the scheduler did",
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
