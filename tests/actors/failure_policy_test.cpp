// A training job and a task meet the same API failures and treat them the same way, because both
// run on the controller kit's pass loop (actors/controller/pass_loop.hpp): a 409 re-reads what
// conflicted and backs off, a 404 on their own object stops their writes, a 500 backs off and the
// back-off resets once a plan goes through. Under CAF's test coordinator with an executor of the
// test's, so "nothing was written before 250 ms" is exact, not a guess about timing.
#include "actors/tasks/task_actor.hpp"
#include "actors/training/training_job_actor.hpp"
#include "k8s/json/patch.hpp"
#include "k8s/model/codec.hpp"
#include "messages/watch_messages.hpp"

#include "tests/actors/support/coordinated.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <functional>
#include <map>

using namespace kozmo;
using namespace kozmo::testing;
using namespace std::chrono_literals;

namespace {

using controller::plan;
using controller::plan_outcome;

// A controller of either kind, as the test drives it.
struct subject {
  std::string kind;
  std::string primary; // the object, as the API server holds it
  std::string pod;     // the pod its first plan creates
  std::function<caf::actor(coordinated&, caf::actor executor, std::shared_ptr<const k8s::custom_object>)> spawn;
  // The user's change that makes it delete that pod: suspend the job, delete the task.
  std::function<void(json::value&)> stop;
};

std::vector<subject> subjects() {
  subject job;
  job.kind = "PyTorchJob";
  job.primary = R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob",
    "metadata":{"name":"same","namespace":"default","uid":"same-uid","resourceVersion":"10"},
    "spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,
      "template":{"spec":{"containers":[{"name":"pytorch","image":"x"}]}}}}}})";
  job.pod = "same-master-0";
  job.spawn = [](coordinated& c, caf::actor executor, std::shared_ptr<const k8s::custom_object> obj) {
    auto cfg = std::make_shared<training::job_actor_config>();
    return training::spawn_training_job(*c.sys, nullptr, cfg, {executor, nullptr, c.clock}, std::move(obj));
  };
  job.stop = [](json::value& j) { j["spec"]["runPolicy"]["suspend"] = true; };

  subject task;
  task.kind = "TaskExecution";
  task.primary = R"({"apiVersion":"kozmo.io/v1alpha1","kind":"TaskExecution",
    "metadata":{"name":"same","namespace":"default","uid":"same-uid","resourceVersion":"10"},
    "spec":{"type":"container","container":{"image":"busybox"}}})";
  task.spawn = [](coordinated& c, caf::actor executor, std::shared_ptr<const k8s::custom_object> obj) {
    auto cfg = std::make_shared<tasks::task_actor_config>();
    cfg->platform = std::make_shared<const tasks::platform_config>();
    cfg->plugins = std::make_shared<const tasks::plugin_registry>(tasks::plugin_registry::with_builtins());
    return tasks::spawn_task_actor(*c.sys, nullptr, cfg, {executor, nullptr, c.clock}, std::move(obj));
  };
  task.stop = [](json::value& t) { t["metadata"]["deletionTimestamp"] = "2027-01-15T08:00:00Z"; };
  return {job, task};
}

// The subject's actor, an executor of the test's and the API server's copy of the object.
struct world : coordinated {
  subject who;
  std::shared_ptr<plans> got = std::make_shared<plans>();
  json::value primary;
  int rv = 10;
  std::map<std::string, json::value> created; // by name, as answered
  caf::actor executor, actor;

  explicit world(subject s) : who(std::move(s)), primary(*json::parse(who.primary)) {
    executor = keep(sys->spawn(scripted_executor, got));
    actor = keep(who.spawn(*this, executor, object()));
    sched->run();
    REQUIRE(plans_seen() == 1); // the first pass's plan: it creates the pod
  }
  std::shared_ptr<const k8s::custom_object> object() const {
    return std::make_shared<const k8s::custom_object>(*k8s::custom_object_from(json::value(primary)));
  }
  std::size_t plans_seen() const { return got->received.size(); }
  const plan& last() const { return got->received.back(); }

  // Answers plan `i` as the API server would, up to step `upto` (all: npos): creates come back
  // with a uid, patches of the object are applied to it.
  plan_outcome answers(std::size_t i, std::size_t upto = std::string::npos) {
    const plan& p = got->received.at(i);
    plan_outcome out;
    out.plan = p;
    out.answers.resize(p.steps.size());
    for (std::size_t k = 0; k < p.steps.size() && k < upto; ++k) {
      if (const auto* c = std::get_if<controller::create_step>(&p.steps[k])) {
        json::value obj = c->object;
        obj["metadata"]["uid"] = obj.at_path({"metadata"})->get_string("name") + "-uid";
        obj["metadata"]["resourceVersion"] = std::to_string(++rv);
        created[obj.at_path({"metadata"})->get_string("name")] = obj;
        out.answers[k] = obj;
      } else if (const auto* s = std::get_if<controller::patch_step>(&p.steps[k]); s && s->ref.name == "same") {
        primary = json::apply_merge_patch(primary, s->patch);
        primary["metadata"]["resourceVersion"] = std::to_string(++rv);
        out.answers[k] = primary;
      } else if (std::holds_alternative<controller::delete_step>(p.steps[k])) {
        out.answers[k] = json::object{};
      }
    }
    return out;
  }
  void reply(std::size_t i, plan_outcome out) {
    caf::anon_send(executor, answer_atom::value, i, std::move(out));
    sched->run();
  }
  // Plan `i` fails at `step` with `code`; the steps before it went through.
  void fail(std::size_t i, std::size_t step, int code, std::optional<json::value> reread = std::nullopt) {
    auto out = answers(i, step);
    out.what = plan_outcome::result::failed;
    out.failed_step = step;
    out.code = code;
    out.failure = controller::describe(got->received[i].steps[step]) + ": " + std::to_string(code);
    out.reread = std::move(reread);
    reply(i, std::move(out));
  }
  void user_changes(const std::function<void(json::value&)>& change) {
    change(primary);
    primary["metadata"]["resourceVersion"] = std::to_string(++rv);
    caf::anon_send(actor, object_event<k8s::custom_object>{watch::event_type::modified, object(), nullptr});
    sched->run();
  }
  // Whether the next plan comes `d` from now: none before, one then.
  bool next_plan_after(std::chrono::milliseconds d) {
    auto seen = plans_seen();
    advance(d - 1ms);
    if (plans_seen() != seen)
      return false;
    advance(1ms);
    return plans_seen() == seen + 1;
  }
  // The kubelet reports the pod (as created) running.
  void pod_runs(const std::string& name) {
    json::value doc = created.at(name);
    doc["metadata"]["resourceVersion"] = std::to_string(++rv);
    doc["status"]["phase"] = "Running";
    auto pod = k8s::from_json<k8s::pod>(doc);
    REQUIRE(pod);
    caf::anon_send(actor, object_event<k8s::pod>{watch::event_type::modified,
                                                 std::make_shared<const k8s::pod>(std::move(*pod)), nullptr});
    sched->run();
  }
};

std::optional<std::size_t> step_of(const plan& p, const std::function<bool(const controller::step&)>& is) {
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    if (is(p.steps[i]))
      return i;
  return std::nullopt;
}

std::optional<std::size_t> delete_of(const plan& p, const std::string& pod) {
  return step_of(p, [&](const controller::step& s) {
    const auto* d = std::get_if<controller::delete_step>(&s);
    return d != nullptr && d->ref.resource == "pods" && d->ref.name == pod;
  });
}

std::optional<std::size_t> create_of_pod(const plan& p) {
  return step_of(p, [](const controller::step& s) {
    const auto* c = std::get_if<controller::create_step>(&s);
    return c != nullptr && c->where.resource == "pods";
  });
}

std::optional<std::size_t> own_patch(const plan& p) {
  return step_of(p, [](const controller::step& s) {
    const auto* w = std::get_if<controller::patch_step>(&s);
    return w != nullptr && w->ref.name == "same";
  });
}

std::string pod_created(const plan& p) {
  auto i = create_of_pod(p);
  REQUIRE(i);
  return std::get<controller::create_step>(p.steps[*i]).object.at_path({"metadata"})->get_string("name");
}

} // namespace

TEST_CASE("a 409 on a pod delete's uid precondition: the namesake replaces the pod, the retry backs off",
          "[actors][deterministic][failures]") {
  for (const auto& s : subjects()) {
    INFO(s.kind);
    world w(s);
    auto pod = pod_created(w.last());
    w.reply(0, w.answers(0));
    w.pod_runs(pod);
    // Whatever the running pod made it write, answered, before the user stops it.
    for (std::size_t i = 1; i < w.plans_seen(); ++i)
      w.reply(i, w.answers(i));
    w.user_changes(s.stop);
    REQUIRE(w.plans_seen() >= 2);
    auto deleting = w.plans_seen() - 1;
    auto at = delete_of(w.last(), pod);
    REQUIRE(at);
    // Meanwhile the pod was deleted and a namesake of someone else's created: the uid
    // precondition fails, and the executor re-reads the pod as it is now.
    auto namesake = *json::parse(R"({"metadata":{"name":")" + pod + R"(","namespace":"default","uid":"other-uid",
      "resourceVersion":"99"},"spec":{"containers":[{"name":"main","image":"x"}]}})");
    w.fail(deleting, *at, 409, namesake);
    REQUIRE(w.next_plan_after(250ms));     // not at once: after the back-off
    CHECK_FALSE(delete_of(w.last(), pod)); // the namesake is not ours to delete
  }
}

TEST_CASE("a 404 on its own object: nothing more is written, whatever happens next", "[actors][deterministic][failures]") {
  for (const auto& s : subjects()) {
    INFO(s.kind);
    world w(s);
    auto own = own_patch(w.last());
    REQUIRE(own);
    w.fail(0, *own, 404);
    w.advance(60s);
    w.user_changes(s.stop);
    w.advance(60s);
    CHECK(w.plans_seen() == 1);
  }
}

TEST_CASE("a 500 backs off (250 ms, then 500 ms) and the back-off resets once a plan goes through",
          "[actors][deterministic][failures]") {
  for (const auto& s : subjects()) {
    INFO(s.kind);
    world w(s);
    auto pod = pod_created(w.last());
    w.fail(0, 0, 500);
    REQUIRE(w.next_plan_after(250ms));
    w.fail(1, 0, 500);
    REQUIRE(w.next_plan_after(500ms));
    w.reply(2, w.answers(2)); // works now
    w.pod_runs(pod);
    REQUIRE(w.plans_seen() == 4); // the running pod: a status to write
    w.fail(3, 0, 500);
    CHECK(w.next_plan_after(250ms));
  }
}
