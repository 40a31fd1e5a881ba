// `kozmo status`'s pure parts: the cell map read from the inspect contract's JSON, jobs' and
// tasks' phases and ages, the tables sized to a terminal, the JSON/YAML document, and its flags.
#include "k8s/json/value.hpp"
#include "k8s/json/yaml.hpp"
#include "runtime/cli.hpp"
#include "runtime/status_view.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace kozmo;
using namespace kozmo::runtime;

namespace {

// GET /v1/inspect/cellmap as the scheduler answers it, with keys for the browser page that
// `kozmo status` does not show.
const char* cellmap_fixture = R"({
  "version": 7,
  "virtualClusters": [
    {"name": "vc1", "guaranteedGPUs": 16, "usedGPUs": 8, "freeGPUs": 8, "borrowedGPUs": 0, "cells": [1, 2]},
    {"name": "research", "guaranteedGPUs": 8, "usedGPUs": 12, "freeGPUs": 0, "borrowedGPUs": 4}
  ],
  "waitingGangs": [
    {"name": "default/big", "virtualCluster": "vc1", "priority": 0, "pods": 4, "gpus": 32,
     "reason": "VC vc1 has 8 of 16 GPUs free; the gang needs 32, more than the VC's guaranteed 16 GPUs",
     "reasonKind": "VirtualClusterFull", "waitingSeconds": 754}
  ],
  "waitingTotal": 1,
  "nodes": [{"name": "n0"}]
})";

json::value fixture() {
  auto doc = json::parse(cellmap_fixture);
  REQUIRE(doc.has_value());
  return *doc;
}

status_snapshot snapshot() {
  status_snapshot snap;
  auto view = parse_cellmap(fixture());
  REQUIRE(view.has_value());
  snap.cellmap = *view;
  snap.work = {{"TaskExecution", "team-b", "prep", "Running", 65},
               {"PyTorchJob", "team-a", "train", "Running", 4000}};
  return snap;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// Terminal columns of a line: UTF-8 continuation bytes take none.
std::size_t columns(const std::string& s) {
  std::size_t n = 0;
  for (char c : s)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

} // namespace

TEST_CASE("the cell map is read from the inspect contract, ignoring keys it does not show") {
  auto view = parse_cellmap(fixture());
  REQUIRE(view.has_value());
  CHECK(view->version == 7);
  REQUIRE(view->virtual_clusters.size() == 2);
  CHECK(view->virtual_clusters[1].name == "research");
  CHECK(view->virtual_clusters[1].used_gpus == 12);
  CHECK(view->virtual_clusters[1].borrowed_gpus == 4);
  REQUIRE(view->waiting_gangs.size() == 1);
  const auto& g = view->waiting_gangs[0];
  CHECK(g.name == "default/big");
  CHECK(g.virtual_cluster == "vc1");
  CHECK(g.pods == 4);
  CHECK(g.gpus == 32);
  CHECK(g.reason_kind == "VirtualClusterFull");
  CHECK(g.waiting_seconds == 754);
  CHECK(view->waiting_total == 1);
}

TEST_CASE("gangs the scheduler counted but did not list are said to exist") {
  auto doc = fixture();
  doc["waitingTotal"] = 501;
  auto view = parse_cellmap(doc);
  REQUIRE(view.has_value());
  status_snapshot snap;
  snap.cellmap = *view;
  CHECK_THAT(render_text(snap, {}), Catch::Contains("12m       VC vc1") && Catch::Contains("(500 more waiting, not listed by the scheduler)\n"));
  CHECK(snapshot_document(snap).get_int("waitingTotal") == 501);
}

TEST_CASE("a cell map of the wrong shape is an error naming the key, never a half-read table") {
  for (auto [text, says] : {std::pair{"[]", "not a JSON object"},
                            std::pair{R"({"virtualClusters": {}})", "virtualClusters is not a list"},
                            std::pair{R"({"virtualClusters": [3]})", "not an object"},
                            std::pair{R"({"virtualClusters": [{"name": "a", "usedGPUs": "8"}]})", "usedGPUs is not a number"},
                            std::pair{R"({"waitingGangs": [{"name": 5}]})", "name is not a string"}}) {
    auto doc = json::parse(text);
    REQUIRE(doc.has_value());
    auto view = parse_cellmap(*doc);
    REQUIRE_FALSE(view.has_value());
    CHECK_THAT(view.err().message, Catch::Contains(says));
  }
  auto empty = parse_cellmap(*json::parse("{}"));
  REQUIRE(empty.has_value());
  CHECK(empty->virtual_clusters.empty());
}

TEST_CASE("a job's phase is its last true condition; a task's is status.phase") {
  auto job = *json::parse(R"({"status": {"conditions": [
      {"type": "Created", "status": "True"}, {"type": "Running", "status": "False"},
      {"type": "Restarting", "status": "True"}]}})");
  CHECK(job_phase(job) == "Restarting");
  CHECK(job_phase(*json::parse(R"({"metadata": {"name": "j"}})")) == "Pending");
  CHECK(task_phase(*json::parse(R"({"status": {"phase": "WaitingForResources"}})")) == "WaitingForResources");
  CHECK(task_phase(*json::parse(R"({"spec": {}})")) == "Pending");
  CHECK(finished_phase("Succeeded"));
  CHECK(finished_phase("Aborted"));
  CHECK(finished_phase("Complete")); // a TrainJob's
  auto train_job = *json::parse(R"({"status": {"conditions": [{"type": "Running", "status": "False"},
      {"type": "Created", "status": "True"}, {"type": "Suspended", "status": "True"}]}})");
  CHECK(job_phase(train_job) == "Suspended");
  CHECK_FALSE(finished_phase("Running"));
}

TEST_CASE("a row's age comes from creationTimestamp, in kubectl's units") {
  auto obj = *json::parse(R"({"metadata": {"name": "t", "namespace": "ns",
      "creationTimestamp": "2026-11-29T16:00:00Z"}, "status": {"phase": "Running"}})");
  auto now = parse_rfc3339_seconds("2026-11-29T17:05:30Z");
  REQUIRE(now.has_value());
  auto w = work_item_of("TaskExecution", obj, *now);
  CHECK(w.ns == "ns");
  CHECK(w.phase == "Running");
  CHECK(w.age_seconds == 3930);
  CHECK(human_duration(w.age_seconds) == "65m");
  CHECK(parse_rfc3339_seconds("1970-01-01T00:00:00Z") == 0);
  CHECK(parse_rfc3339_seconds("2026-11-29T18:00:00.123+01:00") == parse_rfc3339_seconds("2026-11-29T17:00:00Z"));
  CHECK_FALSE(parse_rfc3339_seconds("yesterday").has_value());
  CHECK_FALSE(parse_rfc3339_seconds("2026-13-29T17:00:00Z").has_value());
  CHECK(work_item_of("PyTorchJob", *json::parse(R"({"metadata": {"name": "x"}})"), 0).age_seconds == -1);
  for (auto [secs, text] : {std::pair{0L, "0s"}, std::pair{119L, "119s"}, std::pair{192L, "3m12s"}, std::pair{600L, "10m"},
                            std::pair{5 * 3600L + 600, "5h10m"}, std::pair{20 * 3600L, "20h"},
                            std::pair{3 * 86400L + 4 * 3600, "3d4h"}, std::pair{40 * 86400L, "40d"},
                            std::pair{3 * 365 * 86400L, "3y"}})
    CHECK(human_duration(secs) == text);
}

TEST_CASE("the three sections are aligned tables with kubectl's columns") {
  auto text = render_text(snapshot(), {});
  auto lines = lines_of(text);
  REQUIRE(lines.size() >= 12);
  CHECK(lines[0] == "VIRTUAL CLUSTERS");
  CHECK(lines[1] == "NAME       GUARANTEED   USED   FREE   BORROWED");
  CHECK(lines[2] == "vc1        16           8      8      0");
  CHECK(lines[3] == "research   8            12     0      4");
  CHECK(lines[5] == "WAITING GANGS");
  CHECK(lines[6].rfind("NAME          VC    PRIORITY   PODS   GPUS   WAITING   REASON", 0) == 0);
  CHECK_THAT(lines[7], Catch::StartsWith("default/big   vc1   0          4      32     12m       VC vc1 has 8 of 16") &&
                           Catch::EndsWith("guaranteed 16 GPUs"));
  CHECK(lines[9] == "JOBS AND TASKS");
  CHECK(lines[10] == "NAMESPACE   KIND            NAME    PHASE     AGE");
  CHECK(lines[11] == "team-a      PyTorchJob      train   Running   66m");
  CHECK(lines[12] == "team-b      TaskExecution   prep    Running   65s");
}

TEST_CASE("on a terminal a long reason is cut with an ellipsis to the width; not a terminal or -o wide, never") {
  render_options tty;
  tty.width = 80;
  tty.truncate = true;
  auto lines = lines_of(render_text(snapshot(), tty));
  CHECK(columns(lines[7]) == 79); // the space before the cut is dropped
  CHECK_THAT(lines[7], Catch::EndsWith("   VC vc1 has 8 of 16 GPUs\u2026"));
  for (const auto& line : lines)
    CHECK(columns(line) <= 80);
  // A very narrow terminal still shows ten characters of the reason.
  tty.width = 20;
  CHECK_THAT(lines_of(render_text(snapshot(), tty))[7], Catch::EndsWith("   VC vc1 ha\u2026"));

  render_options pipe;
  pipe.width = 60;
  CHECK_THAT(render_text(snapshot(), pipe), Catch::Contains("the VC's guaranteed 16 GPUs\n"));
  render_options wide = tty;
  wide.wide = true;
  auto wide_text = render_text(snapshot(), wide);
  CHECK_THAT(wide_text, Catch::Contains("KIND                 REASON") && Catch::Contains("VirtualClusterFull   VC vc1") &&
                            Catch::Contains("guaranteed 16 GPUs\n"));
}

TEST_CASE("a single namespace drops the NAMESPACE column; empty sections say (none)") {
  render_options one_ns;
  one_ns.namespace_column = false;
  auto text = render_text(snapshot(), one_ns);
  CHECK_THAT(text, Catch::Contains("KIND            NAME    PHASE     AGE\nPyTorchJob"));
  auto empty = render_text(status_snapshot{}, {});
  CHECK(empty == "VIRTUAL CLUSTERS\n(none)\n\nWAITING GANGS\n(none)\n\nJOBS AND TASKS\n(none)\n");
  // A section whose source failed says so; the others still show (rule 1).
  auto half = snapshot();
  half.cellmap = {};
  half.cellmap_read = false;
  auto half_text = render_text(half, {});
  CHECK_THAT(half_text, Catch::StartsWith("VIRTUAL CLUSTERS\n(could not be read)\n\nWAITING GANGS\n(could not be read)\n") &&
                            Catch::Contains("PyTorchJob      train"));
}

TEST_CASE("-o json and -o yaml print one document with the three lists, the same in both") {
  auto snap = snapshot();
  snap.errors.push_back("the GPU scheduler's cell map: 503");
  auto doc = snapshot_document(snap);
  CHECK(doc.at_path({"virtualClusters"})->as_array().size() == 2);
  CHECK(doc.at_path({"waitingGangs"})->as_array()[0].get_string("reasonKind") == "VirtualClusterFull");
  CHECK(doc.at_path({"jobsAndTasks"})->as_array()[1].get_int("ageSeconds") == 4000);
  CHECK(doc.at_path({"errors"})->as_array().size() == 1);
  CHECK_FALSE(snapshot_document(status_snapshot{}).find("errors"));

  auto yaml = json::dump_yaml(doc);
  CHECK_THAT(yaml, Catch::StartsWith("virtualClusters:\n- name: vc1\n  guaranteedGPUs: 16\n"));
  CHECK_THAT(yaml, Catch::Contains("  reason: \"VC vc1 has 8 of 16 GPUs free; "));
  auto back = json::parse_yaml(yaml);
  REQUIRE(back.has_value());
  CHECK(*back == doc);
  // Strings YAML would read as something else stay strings.
  json::value tricky = json::object{{"a", "true"}, {"b", "123"}, {"c", "-x"}, {"d", ""}, {"e", "a: b"},
                                    {"f", json::array{}}, {"g", json::object{}}, {"h", "caf\u00e9 #1"}};
  auto tricky_back = json::parse_yaml(json::dump_yaml(tricky));
  REQUIRE(tricky_back.has_value());
  CHECK(*tricky_back == tricky);
}

TEST_CASE("kozmo status takes kubectl's flags, short and long") {
  auto cmd = parse_command_line({"status", "-n", "team-a", "-ojson", "-w", "--interval=0.5", "--kubeconfig", "/kc",
                                 "--inspect-url", "https://127.0.0.1:8080", "--insecure-skip-tls-verify", "--finished"});
  REQUIRE(cmd.has_value());
  CHECK(cmd->what == command::kind::status);
  const auto& o = cmd->status;
  CHECK(o.ns == "team-a");
  CHECK_FALSE(o.all_namespaces);
  CHECK(o.output == "json");
  CHECK(o.watch);
  CHECK(o.interval_seconds == 0.5);
  CHECK(o.kubeconfig == "/kc");
  CHECK(o.inspect_url == "https://127.0.0.1:8080");
  CHECK(o.insecure_skip_tls_verify);
  CHECK(o.finished);

  auto plain = parse_command_line({"status"});
  REQUIRE(plain.has_value());
  CHECK(plain->status.all_namespaces);
  CHECK(plain->status.interval_seconds == 2);
  auto all = parse_command_line({"status", "--namespace=x", "-A", "--output", "yaml"});
  REQUIRE(all.has_value());
  CHECK(all->status.all_namespaces); // as kubectl: -A wins
  CHECK(all->status.ns.empty());
  CHECK(all->status.output == "yaml");
}

TEST_CASE("kozmo status refuses a bad flag or value, saying which and what is accepted") {
  for (auto [args, says] : {std::pair{std::vector<std::string>{"status", "--interval", "0.1"}, "outside 0.2..3600"},
                            std::pair{std::vector<std::string>{"status", "--interval=3601"}, "outside 0.2..3600"},
                            std::pair{std::vector<std::string>{"status", "--interval", "2s"}, "not a number of seconds"},
                            std::pair{std::vector<std::string>{"status", "--interval", "nan"}, "outside 0.2..3600"},
                            std::pair{std::vector<std::string>{"status", "-o", "table"}, "not one of wide, json, yaml"},
                            std::pair{std::vector<std::string>{"status", "-n"}, "-n needs a value"},
                            std::pair{std::vector<std::string>{"status", "--watch=maybe"}, "not true or false"},
                            std::pair{std::vector<std::string>{"status", "pods"}, "unknown flag or argument \"pods\""},
                            std::pair{std::vector<std::string>{"status", "--inspect-url", "127.0.0.1:8080"},
                                      "not an http:// or https:// URL"}}) {
    auto cmd = parse_command_line(args);
    REQUIRE_FALSE(cmd.has_value());
    CHECK_THAT(cmd.err().message, Catch::Contains(says));
  }
}
