// The scheduler's start-up (startup.hpp): which watch events it holds, and the order in which a
// restart hands them over; then the same steps played into a core, to show what a user sees
// after a restart (which gang keeps its VC's quota, what other schedulers' pods take away).
// Last, what a rebuild on a configuration derived from the nodes takes over (derived_following.hpp).
#include "actors/scheduler/derived_following.hpp"
#include "actors/scheduler/other_pods.hpp"
#include "actors/scheduler/pod_intake.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "actors/scheduler/startup.hpp"
#include "k8s/model/kozmo_keys.hpp"
#include "tests/unit/scheduler_fixtures.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace kozmo;
using namespace kozmo::scheduler;
using Catch::Matchers::Contains;
using watch::event_type;

namespace {

// A pod of `scheduler` asking for `gpus` GPUs as the gang `gang` of team-a, created at `created_s`.
k8s::pod make_pod(const std::string& name, int created_s, const std::string& node = "", int gpus = 8,
                  const std::string& scheduler = "kozmo") {
  k8s::pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "ml";
  p.metadata.uid = "uid-" + name;
  p.metadata.creation_timestamp = k8s::time_point(std::chrono::seconds(created_s));
  p.metadata.annotations[keys::virtual_cluster] = "team-a";
  p.metadata.annotations[keys::gang] = name;
  p.metadata.annotations[keys::gang_members] = "1x" + std::to_string(gpus);
  p.spec.scheduler_name = scheduler;
  p.spec.node_name = node;
  k8s::container c;
  c.name = "main";
  c.resources.limits["nvidia.com/gpu"] = k8s::quantity::from_int(gpus);
  p.spec.containers.push_back(c);
  return p;
}

pod_ptr shared(k8s::pod p) { return std::make_shared<const k8s::pod>(std::move(p)); }

node_ptr make_node(const std::string& name) {
  k8s::node n;
  n.metadata.name = name;
  k8s::condition ready;
  ready.type = "Ready";
  ready.status = "True";
  n.status.conditions.push_back(ready);
  return std::make_shared<const k8s::node>(std::move(n));
}

std::vector<std::string> names(const std::vector<pod_ptr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods)
    out.push_back(p->metadata.name);
  return out;
}

std::vector<std::string> names(const std::vector<node_ptr>& nodes) {
  std::vector<std::string> out;
  for (const auto& n : nodes)
    out.push_back(n->metadata.name);
  return out;
}

} // namespace

TEST_CASE("until the nodes and our pods have listed every event is held, the latest state of each",
          "[scheduler][startup]") {
  startup s({});
  CHECK_FALSE(s.pod_event(event_type::added, shared(make_pod("a", 1))));
  CHECK_FALSE(s.pod_event(event_type::added, shared(make_pod("gone", 2))));
  CHECK_FALSE(s.pod_event(event_type::deleted, shared(make_pod("gone", 2))));
  CHECK_FALSE(s.pod_event(event_type::modified, shared(make_pod("a", 1, "n1"))));
  CHECK_FALSE(s.node_event(event_type::added, make_node("n2")));
  CHECK_FALSE(s.node_event(event_type::added, make_node("n9")));
  CHECK_FALSE(s.node_event(event_type::deleted, make_node("n9")));
  CHECK(s.listed(listed_watch::pods).nodes.empty()); // the nodes have not listed yet
  CHECK(s.now() == startup::phase::listing);

  const auto step = s.listed(listed_watch::nodes);
  CHECK(names(step.nodes) == std::vector<std::string>{"n2"});
  CHECK(names(step.bound) == std::vector<std::string>{"a"}); // bound since it was first seen
  CHECK(step.recovered);
  CHECK(step.ready); // no watch of other schedulers' pods to wait for
  CHECK(step.waiting.empty());
  CHECK_FALSE(step.derive_from);
}

TEST_CASE("a restart where bound pods arrive before the nodes recovers them oldest first once the "
          "nodes have listed, and admits waiting pods only after",
          "[scheduler][startup]") {
  startup s({});
  // The pods LIST comes first, newest first.
  for (int i = 5; i >= 1; --i)
    s.pod_event(event_type::added, shared(make_pod("bound-" + std::to_string(i), 100 + i, "n1")));
  s.pod_event(event_type::added, shared(make_pod("waiting-2", 300)));
  s.pod_event(event_type::added, shared(make_pod("waiting-1", 200)));
  const auto early = s.listed(listed_watch::pods);
  CHECK(early.bound.empty());
  CHECK_FALSE(early.recovered);
  s.node_event(event_type::added, make_node("n1"));
  s.node_event(event_type::added, make_node("n2"));

  const auto step = s.listed(listed_watch::nodes);
  CHECK(names(step.nodes) == std::vector<std::string>{"n1", "n2"});
  CHECK(names(step.bound) == std::vector<std::string>{"bound-1", "bound-2", "bound-3", "bound-4", "bound-5"});
  CHECK(step.ready);
  CHECK(names(step.waiting) == std::vector<std::string>{"waiting-1", "waiting-2"});
  CHECK(s.ready());
}

TEST_CASE("with a watch of other schedulers' pods, ours are recovered before it lists; meanwhile only "
          "our bound pods' changes pass",
          "[scheduler][startup]") {
  startup s({"kozmo", true, false});
  s.pod_event(event_type::added, shared(make_pod("ours", 1, "n1")));
  s.node_event(event_type::added, make_node("n1"));
  s.listed(listed_watch::nodes);
  const auto recovered = s.listed(listed_watch::pods);
  CHECK(names(recovered.bound) == std::vector<std::string>{"ours"});
  CHECK(recovered.recovered);
  CHECK_FALSE(recovered.ready);
  CHECK(s.now() == startup::phase::recovered);

  CHECK(s.pod_event(event_type::modified, shared(make_pod("ours", 1, "n1"))));  // bound: the core holds it
  CHECK(s.pod_event(event_type::deleted, shared(make_pod("ours", 1, "n1"))));
  CHECK(s.pod_event(event_type::modified, shared(make_pod("just-bound", 2, "n2"))));
  CHECK_FALSE(s.pod_event(event_type::added, shared(make_pod("waits", 3))));
  CHECK_FALSE(s.pod_event(event_type::added, shared(make_pod("theirs", 4, "n1", 4, "default-scheduler"))));
  CHECK_FALSE(s.node_event(event_type::modified, make_node("n1")));

  const auto ready = s.listed(listed_watch::other_pods);
  CHECK(ready.ready);
  CHECK_FALSE(ready.recovered);
  CHECK(names(ready.nodes) == std::vector<std::string>{"n1"}); // changed since recovery
  CHECK(ready.bound.empty());
  CHECK(names(ready.others) == std::vector<std::string>{"theirs"});
  CHECK(names(ready.waiting) == std::vector<std::string>{"waits"});
}

TEST_CASE("a derived configuration is derived from the nodes as listed, before any pod is recovered",
          "[scheduler][startup]") {
  startup s({"kozmo", false, true});
  s.node_event(event_type::added, make_node("n1"));
  s.pod_event(event_type::added, shared(make_pod("ours", 1, "n1")));
  const auto step = s.listed(listed_watch::nodes);
  REQUIRE(step.derive_from);
  CHECK(step.derive_from->count("n1") == 1);
  CHECK(step.nodes.empty()); // held until our pods have listed too
  CHECK(step.bound.empty());
  const auto recovered = s.listed(listed_watch::pods);
  CHECK_FALSE(recovered.derive_from);
  CHECK(names(recovered.nodes) == std::vector<std::string>{"n1"});
  CHECK(names(recovered.bound) == std::vector<std::string>{"ours"});
}

TEST_CASE("once ready every event passes and nothing is held any more", "[scheduler][startup]") {
  startup s({});
  s.listed(listed_watch::nodes);
  REQUIRE(s.listed(listed_watch::pods).ready);
  CHECK(s.pod_event(event_type::added, shared(make_pod("late", 9))));
  CHECK(s.node_event(event_type::added, make_node("n3")));
  const auto again = s.listed(listed_watch::nodes);
  CHECK(again.nodes.empty());
  CHECK(again.bound.empty());
  CHECK(again.waiting.empty());
  CHECK_FALSE(again.ready);
}

TEST_CASE("other schedulers' pods count against their node while bound and running, and give it back "
          "when they go",
          "[scheduler][startup]") {
  other_pods others("nvidia.com/gpu");
  auto theirs = make_pod("theirs", 1, "n1", 4, "default-scheduler");
  auto done = make_pod("done", 2, "n2", 8, "default-scheduler");
  done.status.phase = "Succeeded";
  const auto counted = others.count_listed({shared(theirs), shared(done), shared(make_pod("pending", 3, "", 2, "x"))});
  CHECK(counted == std::vector<other_pods::change>{{"n1", 4}});
  CHECK(others.apply(event_type::modified, theirs).empty()); // holds the same
  theirs.status.phase = "Failed";
  CHECK(others.apply(event_type::modified, theirs) == std::vector<other_pods::change>{{"n1", -4}});
  CHECK(others.held().empty());
}

// ---- the same steps played into a core, as the scheduler actor does ------------------------

namespace {

// Two nodes in one rack; team-a's quota is `nodes` whole nodes.
std::string team_a_owning(int nodes) {
  return test::v100_racks(1) + "virtualClusters:\n  team-a:\n    virtualCells: [{cellType: V100-RACK.V100-NODE, "
                               "cellNumber: " +
         std::to_string(nodes) + "}]\n";
}

scheduler_core loaded(const std::string& config) {
  auto core = scheduler_core::load(config);
  REQUIRE(core);
  return std::move(*core);
}

struct restarted_scheduler {
  scheduler_core core;
  other_pods others{"nvidia.com/gpu"};
  intake_options intake;
  std::vector<std::string> recovery_errors;

  void run(const startup_step& step) {
    for (const auto& n : step.nodes)
      core.set_node(n->metadata.name, node_healthy(*n));
    for (const auto& p : step.bound)
      if (auto done = core.recover_pod(*pod_view_of(*p, intake)); !done)
        recovery_errors.push_back(done.err().message);
    if (!step.ready)
      return;
    for (const auto& [node, gpus] : others.count_listed(step.others))
      core.set_other_pods_gpus(node, core.other_pods_gpus(node) + gpus);
    for (const auto& p : step.waiting)
      REQUIRE(core.add_pod(*pod_view_of(*p, intake)));
  }
};

// The gangs `first` (older) and `second`, 8 GPUs each, bound by a scheduler whose team-a owned
// both nodes: the pods as the API server holds them, bind-info written.
std::vector<k8s::pod> bound_before_restart() {
  auto core = loaded(team_a_owning(2));
  std::vector<k8s::pod> pods{make_pod("first", 100), make_pod("second", 200)};
  for (const auto& p : pods)
    REQUIRE(core.add_pod(*pod_view_of(p, {})));
  for (const auto& d : core.schedule(0)) {
    REQUIRE(d.kind == decision_kind::bind);
    for (auto& p : pods)
      if (p.metadata.uid == d.pod.uid) {
        p.spec.node_name = d.node;
        for (const auto& [k, v] : d.annotations)
          p.metadata.annotations[k] = v;
      }
  }
  return pods;
}

} // namespace

TEST_CASE("after a restart on a VC that shrank, the gang bound first keeps the quota and the later one "
          "runs on, downgraded, whatever order the LIST had",
          "[scheduler][startup]") {
  auto pods = bound_before_restart();
  restarted_scheduler after{loaded(team_a_owning(1))};
  startup s({});
  s.pod_event(event_type::added, shared(pods[1])); // the newer gang is listed first
  s.pod_event(event_type::added, shared(pods[0]));
  s.listed(listed_watch::pods);
  s.node_event(event_type::added, make_node("n1"));
  s.node_event(event_type::added, make_node("n2"));
  after.run(s.listed(listed_watch::nodes));

  CHECK(after.recovery_errors.empty()); // nothing is dropped
  CHECK(after.core.placed_groups() == 2);
  auto first = after.core.inspect_group("first");
  auto second = after.core.inspect_group("second");
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->find("lazyPreemptionStatus") == nullptr);
  REQUIRE(second->find("lazyPreemptionStatus") != nullptr);
  CHECK_THAT(second->find("lazyPreemptionStatus")->get_string("reason"), Contains("outside virtual cluster"));
  const auto notices = after.core.take_notices();
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].kind == notice_kind::downgraded);
  CHECK(notices[0].group == "second");
}

TEST_CASE("after a restart, GPUs other schedulers' pods hold are counted before our waiting gang is "
          "placed, and it goes where they are free",
          "[scheduler][startup]") {
  restarted_scheduler after{loaded(team_a_owning(2))};
  startup s({"kozmo", true, false});
  s.node_event(event_type::added, make_node("n1"));
  s.node_event(event_type::added, make_node("n2"));
  s.pod_event(event_type::added, shared(make_pod("theirs", 1, "n1", 4, "default-scheduler")));
  s.pod_event(event_type::added, shared(make_pod("waiting", 2)));
  after.run(s.listed(listed_watch::nodes));
  after.run(s.listed(listed_watch::pods));
  REQUIRE_FALSE(s.ready());
  after.run(s.listed(listed_watch::other_pods));
  REQUIRE(s.ready());

  CHECK(after.core.other_pods_gpus("n1") == 4);
  CHECK(after.core.other_pods_gpus("n2") == 0);
  const auto decisions = after.core.schedule(1000);
  REQUIRE(decisions.size() == 1);
  CHECK(decisions[0].kind == decision_kind::bind);
  CHECK(decisions[0].node == "n2");
}

// ---- a configuration derived from the nodes -------------------------------------------------

namespace {

// A node offering `gpus` GPUs (its signature, in this test: the count, "" for none).
node_ptr gpu_node(const std::string& name, int gpus) {
  k8s::node n;
  n.metadata.name = name;
  if (gpus > 0)
    n.status.allocatable["nvidia.com/gpu"] = k8s::quantity::from_int(gpus);
  return std::make_shared<const k8s::node>(std::move(n));
}

derived_following following() {
  return derived_following(
      [](const k8s::node& n) {
        auto it = n.status.allocatable.find("nvidia.com/gpu");
        return it == n.status.allocatable.end() ? std::string() : std::to_string(it->second.value());
      },
      [](const std::vector<k8s::node>& nodes) {
        std::string yaml;
        for (const auto& n : nodes)
          yaml += n.metadata.name + ";";
        return yaml;
      });
}

} // namespace

TEST_CASE("a node's heartbeat asks for no new configuration; a GPU node joining, changing or leaving does",
          "[scheduler][startup][derived]") {
  auto f = following();
  CHECK(f.node_event(event_type::added, gpu_node("n1", 8)));
  CHECK_FALSE(f.node_event(event_type::modified, gpu_node("n1", 8)));
  CHECK_FALSE(f.node_event(event_type::added, gpu_node("cpu-1", 0)));
  CHECK(f.node_event(event_type::modified, gpu_node("n1", 4)));
  CHECK(f.node_event(event_type::deleted, gpu_node("n1", 4)));
  CHECK_FALSE(f.node_event(event_type::deleted, gpu_node("cpu-1", 0)));
  CHECK(f.nodes().empty());

  f.node_event(event_type::added, gpu_node("n2", 8));
  f.node_event(event_type::added, gpu_node("cpu-2", 0));
  const auto d = f.derive(f.nodes());
  CHECK(d.yaml == "cpu-2;n2;");
  CHECK(d.gpu_nodes == 1);
}

TEST_CASE("a rebuild takes over the pods the old core held, oldest first, and a bind still being "
          "written as it will be once written",
          "[scheduler][startup][derived]") {
  auto f = following();
  const auto binding = shared(make_pod("binding", 30));
  f.pod_seen(binding);
  f.pod_seen(shared(make_pod("running", 10, "n1")));
  f.pod_seen(shared(make_pod("refused", 20)));
  f.pod_seen(shared(make_pod("deleted", 5, "n1")));
  f.pod_gone("uid-deleted");
  pod_decision bind;
  bind.kind = decision_kind::bind;
  bind.pod = {"ml", "binding", "uid-binding"};
  bind.node = "n2";
  bind.annotations[bind_info_annotation] = "node: \"n2\"";
  f.bind_sent(bind);

  const auto held = [](const std::string& uid) { return uid != "uid-refused"; };
  const auto pods = f.carried_over(held);
  CHECK(names(pods) == std::vector<std::string>{"running", "binding"});
  REQUIRE(pods.size() == 2);
  CHECK(pods[1]->spec.node_name == "n2");
  CHECK(pods[1]->metadata.annotations.at(bind_info_annotation) == "node: \"n2\"");
  CHECK(binding->spec.node_name.empty()); // the watch's copy is not touched

  f.bind_over("uid-binding"); // seen bound (or gone from the core): the watch's pod is the truth
  CHECK(f.carried_over(held)[1]->spec.node_name.empty());
}
