// Actor rules that depend on time and on message order, under CAF's test coordinator: the
// test delivers every message and fires every timer, and the actors read a manual clock that
// moves in step with the coordinator's. Nothing sleeps, so "ten minutes later" takes no time
// and an outcome never depends on the machine's load.
//
// The actors here talk to their neighbours only by messages, so the neighbours are actors of
// the test: an executor that keeps the plans it is given and answers them as the test says,
// watches that feed the scheduler exactly the events the test sends, cellgroups that record
// what they are asked to bind. Over real sockets, the same actors are tested in training/,
// scheduler/ and controller/.
#include "actors/controller/executor_actor.hpp"
#include "actors/controller/supervisor_actor.hpp"
#include "actors/scheduler/scheduler_actor.hpp"
#include "actors/scheduler/scheduler_core.hpp"
#include "actors/training/training_job_actor.hpp"
#include "k8s/json/patch.hpp"
#include "k8s/metrics/registry.hpp"
#include "k8s/model/codec.hpp"
#include "messages/atoms.hpp"
#include "messages/scheduler_messages.hpp"
#include "messages/watch_messages.hpp"

#include "tests/actors/support/coordinated.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <sstream>

using namespace kozmo;
using namespace kozmo::testing;
using namespace std::chrono_literals;

namespace {

// --- a training job actor with an executor of the test's ------------------------------------

json::value job_json() {
  return *json::parse(R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
    "metadata":{"name":"deadline","namespace":"default","uid":"job-uid","resourceVersion":"10"},
    "spec":{"runPolicy":{"activeDeadlineSeconds":600},"pytorchReplicaSpecs":{"Master":{"replicas":1,
      "template":{"spec":{"containers":[{"name":"pytorch","image":"x"}]}}}}}})");
}

// Answers a plan as an API server would have: created objects come back with a uid, the status
// patch with the job as patched. `job` holds the job as the server has it.
controller::plan_outcome answer(const controller::plan& p, json::value& job) {
  controller::plan_outcome out;
  out.plan = p; // handed back, as the executor does
  out.answers.resize(p.steps.size());
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    if (const auto* c = std::get_if<controller::create_step>(&p.steps[i])) {
      json::value obj = c->object;
      obj["metadata"]["uid"] = obj.at_path({"metadata"})->get_string("name") + "-uid";
      obj["metadata"]["resourceVersion"] = "20";
      out.answers[i] = obj;
    } else if (const auto* s = std::get_if<controller::patch_step>(&p.steps[i]); s && s->ref.subresource == "status") {
      job = json::apply_merge_patch(job, s->patch);
      job["metadata"]["resourceVersion"] = std::to_string(std::stoi(job.at_path({"metadata"})->get_string("resourceVersion")) + 1);
      out.answers[i] = job;
    }
  }
  return out;
}

std::string status_patch_of(const controller::plan& p) {
  for (const auto& s : p.steps)
    if (const auto* patch = std::get_if<controller::patch_step>(&s); patch && patch->ref.subresource == "status")
      return json::dump(patch->patch);
  return {};
}

int deletes_in(const controller::plan& p) {
  int n = 0;
  for (const auto& s : p.steps)
    n += std::holds_alternative<controller::delete_step>(s) ? 1 : 0;
  return n;
}

struct job_fixture : coordinated {
  std::shared_ptr<plans> got = std::make_shared<plans>();
  json::value job = job_json();
  caf::actor actor;
  caf::actor executor;

  job_fixture() {
    executor = keep(sys->spawn(scripted_executor, got));
    auto cfg = std::make_shared<training::job_actor_config>();
    controller::child_tools tools{executor, nullptr, clock};
    actor = keep(training::spawn_training_job(
        *sys, nullptr, cfg, tools, std::make_shared<const k8s::custom_object>(*k8s::from_json<k8s::custom_object>(job))));
    sched->run();
  }
  void reply(std::size_t index, controller::plan_outcome out) {
    caf::anon_send(executor, answer_atom::value, index, std::move(out));
    sched->run();
  }
};

} // namespace

TEST_CASE("activeDeadlineSeconds fails the job when the clock passes the deadline, not a moment before",
          "[actors][deterministic][training]") {
  job_fixture f;
  REQUIRE(f.got->received.size() == 1); // the first pass: create the master, start the clock
  CHECK_THAT(status_patch_of(f.got->received[0]), Catch::Contains("\"startTime\":\"2027-01-15T08:00:00Z\""));
  f.reply(0, answer(f.got->received[0], f.job));

  f.advance(599s);
  CHECK(f.got->received.size() == 1); // nothing to do yet: no periodic resync

  f.advance(2s);
  REQUIRE(f.got->received.size() == 2);
  const auto& failing = f.got->received[1];
  CHECK_THAT(status_patch_of(failing), Catch::Contains("DeadlineExceeded"));
  CHECK_THAT(status_patch_of(failing), Catch::Contains("\"type\":\"Failed\""));
  CHECK(deletes_in(failing) >= 1); // its pods go
}

TEST_CASE("a failed plan is tried again after 250 ms, then 500 ms, 1 s, and the back-off resets on success",
          "[actors][deterministic][training]") {
  job_fixture f;
  auto fail = [&](std::size_t i) {
    controller::plan_outcome out;
    out.what = controller::plan_outcome::result::failed;
    out.plan = f.got->received[i];
    out.answers.resize(f.got->received[i].steps.size());
    out.failure = "create pods deadline-master-0: the server is unavailable";
    out.code = 503;
    f.reply(i, std::move(out));
  };
  fail(0);
  f.advance(249ms);
  CHECK(f.got->received.size() == 1);
  f.advance(1ms);
  REQUIRE(f.got->received.size() == 2);
  fail(1);
  f.advance(499ms);
  CHECK(f.got->received.size() == 2);
  f.advance(1ms);
  REQUIRE(f.got->received.size() == 3);
  fail(2);
  f.advance(1000ms);
  REQUIRE(f.got->received.size() == 4);
  f.reply(3, answer(f.got->received[3], f.job)); // works now
  // A later failure starts again from 250 ms.
  auto pod = k8s::from_json<k8s::pod>(*json::parse(R"({"metadata":{"name":"deadline-master-0","namespace":"default",
    "uid":"deadline-master-0-uid","resourceVersion":"30","labels":{"training.kubeflow.org/job-name":"deadline",
    "training.kubeflow.org/replica-type":"master","training.kubeflow.org/replica-index":"0"},
    "ownerReferences":[{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","name":"deadline","uid":"job-uid","controller":true}]},
    "spec":{"containers":[{"name":"pytorch","image":"x"}]},"status":{"phase":"Running"}})"));
  REQUIRE(pod);
  caf::anon_send(f.actor, object_event<k8s::pod>{watch::event_type::modified,
                                                 std::make_shared<const k8s::pod>(std::move(*pod)), nullptr});
  f.sched->run();
  REQUIRE(f.got->received.size() == 5); // Running: a status to write
  fail(4);
  f.advance(250ms);
  CHECK(f.got->received.size() == 6);
}

// --- the scheduler actor with watches and cellgroups of the test's -------------------------

namespace {

struct scheduler_world {
  std::vector<group_bind> binds;
  std::vector<group_preempt> preempts;
};

using listed_atom = caf::atom_constant<caf::atom("listed")>;

// A watch that says it has listed only when the test sends it listed_atom. (The constructor
// keeps CAF from building the state from the actor pointer: C++20 would aggregate-initialise
// `synced` with it.)
struct listing_state {
  listing_state() = default;
  bool synced = false;
  std::vector<caf::response_promise> waiting;
};

caf::behavior scripted_watch(caf::stateful_actor<listing_state>* self) {
  return {
      [](atoms::subscribe_atom, watch::index_kind, const std::string&, const caf::actor&) {},
      [self](atoms::synced_atom) -> caf::result<caf::ok_atom> {
        if (self->state.synced)
          return caf::ok_atom::value;
        self->state.waiting.push_back(self->make_response_promise<caf::ok_atom>());
        return caf::delegated<caf::ok_atom>();
      },
      [self](listed_atom) {
        self->state.synced = true;
        for (auto& rp : self->state.waiting)
          rp.deliver(caf::ok_atom::value);
        self->state.waiting.clear();
      },
  };
}

caf::behavior recording_cellgroup(caf::event_based_actor* self, std::shared_ptr<scheduler_world> w) {
  return {
      [w](const group_bind& b) { w->binds.push_back(b); },
      [w](const group_preempt& p) { w->preempts.push_back(p); },
      [](const group_pod_gone&) {},
      [self](const group_release&) { self->quit(); },
  };
}

// Three 8-GPU nodes; team-a owns `nodes` of them.
std::string team_a_owns(int nodes) {
  return R"(
physicalCluster:
  cellTypes:
    V100-NODE: {childCellType: V100, childCellNumber: 8, isNodeLevel: true}
  physicalCells:
  - {cellType: V100-NODE, cellAddress: n1}
  - {cellType: V100-NODE, cellAddress: n2}
  - {cellType: V100-NODE, cellAddress: n3}
virtualClusters:
  team-a:
    virtualCells: [{cellType: V100-NODE, cellNumber: )" +
         std::to_string(nodes) + "}]\n";
}

std::shared_ptr<const k8s::pod> gpu_pod(const std::string& name, int gpus, std::map<std::string, std::string> ann = {},
                                        const std::string& node = {}) {
  k8s::pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "default";
  p.metadata.uid = name + "-uid";
  p.metadata.annotations.insert(ann.begin(), ann.end());
  p.spec.scheduler_name = "kozmo";
  p.spec.node_name = node;
  k8s::container c;
  c.name = "main";
  c.resources.limits["nvidia.com/gpu"] = *k8s::quantity::parse(std::to_string(gpus));
  p.spec.containers.push_back(c);
  return std::make_shared<const k8s::pod>(std::move(p));
}

std::shared_ptr<const k8s::node> ready_node(const std::string& name) {
  k8s::node n;
  n.metadata.name = name;
  n.status.conditions.push_back({"Ready", "True", "", "", {}, {}, {}});
  return std::make_shared<const k8s::node>(std::move(n));
}

struct scheduler_fixture : coordinated {
  std::shared_ptr<scheduler_world> world = std::make_shared<scheduler_world>();
  std::shared_ptr<client::client> cli;
  caf::actor pods, nodes, scheduler;

  explicit scheduler_fixture(const std::string& config) {
    client::config cc;
    cc.server = "http://127.0.0.1:1"; // condition patches go nowhere: the test reads messages
    cc.max_retries = 0;
    cli = std::make_shared<client::client>(cc);
    pods = keep(sys->spawn(scripted_watch));
    nodes = keep(sys->spawn(scripted_watch));
    scheduler::scheduler_actor_config sc;
    sc.config_yaml = config;
    sc.time = clock;
    auto* system = sys.get();
    auto w = world;
    auto spawned = scheduler::spawn_scheduler(*sys, cli, pods, nodes, sc,
                                              [system, w](const std::string&, int, const caf::actor&) {
                                                return system->spawn(recording_cellgroup, w);
                                              });
    REQUIRE(spawned);
    scheduler = keep(*spawned);
    sched->run();
  }
  void feed(watch::event_type type, std::shared_ptr<const k8s::pod> p) {
    caf::anon_send(scheduler, object_event<k8s::pod>{type, std::move(p), nullptr});
  }
  void node(const std::string& name) {
    caf::anon_send(scheduler, object_event<k8s::node>{watch::event_type::added, ready_node(name), nullptr});
  }
  void sync() {
    caf::anon_send(pods, listed_atom::value);
    caf::anon_send(nodes, listed_atom::value);
    sched->run();
  }
  // The answer, or "<no answer>" when the scheduler has not answered (yet).
  std::string inspect(const std::string& path) {
    auto body = std::make_shared<std::string>("<no answer>");
    caf::anon_send(scheduler, inspect_callback{path, [body](inspect_reply r) { *body = r.body; }});
    sched->run();
    return *body;
  }
};

double rounds() {
  std::istringstream in(metrics::render());
  for (std::string line; std::getline(in, line);)
    if (line.rfind("kozmo_scheduler_round_seconds_count ", 0) == 0)
      return std::stod(line.substr(line.find(' ') + 1));
  return 0;
}

} // namespace

TEST_CASE("a burst of watch events is one scheduling round, and nothing is placed before the watches listed",
          "[actors][deterministic][scheduler]") {
  scheduler_fixture f(team_a_owns(2));
  for (const char* n : {"n1", "n2", "n3"})
    f.node(n);
  for (int i = 0; i < 6; ++i)
    f.feed(watch::event_type::added, gpu_pod("p" + std::to_string(i), 2));
  f.sched->run();
  CHECK(f.world->binds.empty()); // the watches have not listed yet
  CHECK(f.inspect("/v1/inspect/affinitygroups/") == "<no answer>"); // inspect waits for recovery

  const double before = rounds();
  f.sync();
  CHECK(f.world->binds.size() == 6);
  CHECK(rounds() - before == 1); // six pods, one round
  CHECK_THAT(f.inspect("/v1/inspect/affinitygroups/"), Catch::Contains("default/p5"));

  for (int i = 6; i < 10; ++i)
    f.feed(watch::event_type::added, gpu_pod("p" + std::to_string(i), 1));
  f.sched->run();
  CHECK(f.world->binds.size() == 10);
  CHECK(rounds() - before == 2);
}

TEST_CASE("bound pods are recovered before anything new is placed: their GPUs are never given twice",
          "[actors][deterministic][scheduler]") {
  // A first scheduler's decisions, as the bind-info it wrote on the pods.
  auto first = scheduler::scheduler_core::load(team_a_owns(1));
  REQUIRE(first);
  scheduler::pod_view v;
  v.ref = {"default", "old", "old-uid"};
  v.spec.virtual_cluster = "team-a";
  v.spec.leaf_cell_number = 8;
  v.spec.affinity_group = "default/old";
  v.spec.members = {{1, 8}};
  REQUIRE(first->add_pod(v));
  auto decided = first->schedule(0);
  REQUIRE(decided.size() == 1);
  REQUIRE(decided[0].kind == scheduler::decision_kind::bind);

  scheduler_fixture f(team_a_owns(1));
  for (const char* n : {"n1", "n2", "n3"})
    f.node(n);
  // The LIST has the waiting pod first and the bound one after it.
  f.feed(watch::event_type::added, gpu_pod("new", 8, {{"kozmo.io/virtual-cluster", "team-a"}}));
  f.feed(watch::event_type::added,
         gpu_pod("old", 8,
                 {{"kozmo.io/virtual-cluster", "team-a"},
                  {scheduler::bind_info_annotation, decided[0].annotations.at(scheduler::bind_info_annotation)}},
                 decided[0].node));
  f.sync();
  CHECK(f.world->binds.empty()); // team-a's one node is the old pod's
  CHECK_THAT(f.inspect("/v1/inspect/affinitygroups/default%2Fold"), Catch::Contains("\"state\":\"Allocated\""));
  CHECK_THAT(f.inspect("/v1/inspect/affinitygroups/default%2Fnew"), Catch::Contains("\"state\":\"Pending\""));
}

TEST_CASE("a lazy preemption is stamped with the scheduler's clock", "[actors][deterministic][scheduler]") {
  scheduler_fixture f(team_a_owns(1));
  for (const char* n : {"n1", "n2", "n3"})
    f.node(n);
  f.sync();
  f.feed(watch::event_type::added,
         gpu_pod("low", 8, {{"kozmo.io/virtual-cluster", "team-a"}, {"kozmo.io/priority", "1"},
                            {"kozmo.io/lazy-preemption", "true"}}));
  f.sched->run();
  REQUIRE(f.world->binds.size() == 1);
  f.advance(90s);
  f.feed(watch::event_type::added,
         gpu_pod("high", 8, {{"kozmo.io/virtual-cluster", "team-a"}, {"kozmo.io/priority", "5"}}));
  f.sched->run();
  REQUIRE(f.world->binds.size() == 2); // bound elsewhere: the low group was downgraded instead
  CHECK(f.world->preempts.empty());
  auto low = f.inspect("/v1/inspect/affinitygroups/default%2Flow");
  CHECK_THAT(low, Catch::Contains("\"preemptionTime\":" + std::to_string(f.clock->now_ms())));
  CHECK_THAT(low, Catch::Contains("\"preemptor\":\"default/high\""));
}
