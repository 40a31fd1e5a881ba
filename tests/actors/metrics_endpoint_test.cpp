// GET /metrics on `kozmo local`'s port (the embedded API server): what a Prometheus server
// scraping Kozmo sees after the GPU scheduler has placed a pod.
#include "k8s/client/client.hpp"
#include "runtime/engine_internal.hpp"
#include "runtime/hived_shape.hpp"

#include "tests/actors/support/api_polling.hpp"

#include <catch2/catch.hpp>

#include <regex>
#include <set>
#include <sstream>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

engine_options one_node_cluster() {
  engine_options o;
  o.api.embedded = true;
  o.parts.nodes = kozmo::uniform_nodes(1, 8);
  o.parts.binder = true;
  o.parts.scheduler_config = runtime::hived_config_from_shape(kozmo::cluster_shape_of(o.parts.nodes));
  return o;
}

client::response scrape(client::client& cli) {
  auto r = cli.send_sync({"GET", "/metrics", "", "application/json", "text/plain"});
  INFO((r ? "" : r.err().message));
  REQUIRE(r.has_value());
  return *r;
}

// The value of one series ("name" or "name{labels}" exactly as exposed); -1 when absent.
double value_of(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(series + " ", 0) == 0)
      return std::stod(line.substr(series.size() + 1));
  return -1;
}

// Polls /metrics until the series reaches `at_least` (counters move a moment after the API
// shows their effect: the actor counts when the answer reaches it).
double wait_value(client::client& cli, const std::string& series, double at_least) {
  double v = -1;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < deadline) {
    v = value_of(scrape(cli).body, series);
    if (v >= at_least)
      break;
    std::this_thread::sleep_for(100ms);
  }
  return v;
}

// The lines of `text` that are not Prometheus text exposition (format 0.0.4): comments are
// "# HELP name text" or "# TYPE name counter|gauge|histogram|summary|untyped"; samples are
// `name{label="value",...} number`, each under a TYPE of its family.
std::vector<std::string> bad_lines(const std::string& text) {
  static const std::regex help(R"(# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*)");
  static const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*\})? )"
      R"(([-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?|[-+]Inf|NaN)( -?[0-9]+)?)");
  std::set<std::string> typed;
  std::vector<std::string> bad;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.empty() || std::regex_match(line, help))
      continue;
    if (std::regex_match(line, m, type)) {
      typed.insert(m[1]);
      continue;
    }
    if (!std::regex_match(line, m, sample)) {
      bad.push_back(line);
      continue;
    }
    std::string family = m[1];
    for (std::string suffix : {"_bucket", "_sum", "_count"})
      if (!typed.count(family) && family.size() > suffix.size() &&
          family.compare(family.size() - suffix.size(), suffix.size(), suffix) == 0)
        family.resize(family.size() - suffix.size());
    if (!typed.count(family))
      bad.push_back(line + "   <- no # TYPE before it");
  }
  return bad;
}

} // namespace

TEST_CASE("GET /metrics on kozmo local's port shows the scheduler's decisions in Prometheus text format") {
  engine e(one_node_cluster());
  auto st = e.start();
  INFO((st ? "" : st.err().message));
  REQUIRE(st.has_value());
  auto cli = engine_internal::api(e);

  auto body = json::parse(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"metered"},"spec":{"schedulerName":"kozmo",)"
      R"("restartPolicy":"Never","containers":[{"name":"main","image":"busybox:1.36",)"
      R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})");
  REQUIRE(body.has_value());
  auto created = cli->create({"", "v1", "pods", "default", "", ""}, *body);
  REQUIRE(created.has_value());
  auto pod = test::poll_until([&] { return cli->get({"", "v1", "pods", "default", "metered", ""}); },
                              [](const json::value& p) {
                                const auto* spec = p.find("spec");
                                return spec && !spec->get_string("nodeName").empty();
                              },
                              30s);
  REQUIRE(pod.at_path({"spec", "nodeName"}) != nullptr);

  auto r = scrape(*cli);
  CHECK(r.status == 200);
  CHECK(r.headers["content-type"].rfind("text/plain; version=0.0.4", 0) == 0);
  CHECK(value_of(r.body, R"(kozmo_scheduler_decisions_total{kind="bind"})") >= 1);
  CHECK(value_of(r.body, "kozmo_scheduler_round_seconds_count") >= 1);
  CHECK(value_of(r.body, R"(kozmo_client_requests_total{code="2xx",method="POST"})") >= 1);
  CHECK(wait_value(*cli, R"(kozmo_cellgroup_binds_total{outcome="succeeded"})", 1) >= 1);
  CHECK_THAT(r.body, Catch::Contains("# HELP kozmo_scheduler_decisions_total "));
  CHECK_THAT(r.body, Catch::Contains("# TYPE kozmo_scheduler_round_seconds histogram"));
  // Every series exists from the start, at zero until something happens.
  CHECK(value_of(r.body, R"(kozmo_training_jobs_finished_total{outcome="failed"})") >= 0);
  std::string bad;
  for (const auto& line : bad_lines(r.body))
    bad += line + "\n";
  INFO("not Prometheus text:\n" << bad);
  CHECK(bad.empty());
}

TEST_CASE("/metrics refuses anything but GET") {
  engine e(one_node_cluster());
  REQUIRE(e.start().has_value());
  auto r = engine_internal::api(e)->send_sync({"DELETE", "/metrics", "", "application/json", "text/plain"});
  CHECK((r ? r->status : r.err().code) == 405);
}

TEST_CASE("a training job that runs to Succeeded is counted with the pods it created") {
  engine_options o;
  o.api.embedded = true;
  o.parts.nodes = kozmo::uniform_nodes(1, 8);
  o.parts.binder = true;
  o.parts.training = true;
  engine e(o);
  REQUIRE(e.start().has_value());
  auto cli = engine_internal::api(e);
  const client::resource_ref pytorchjobs{"kubeflow.org", "v1", "pytorchjobs", "default", "", ""};
  auto body = json::parse(
      R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"counted","namespace":"default"},)"
      R"("spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"restartPolicy":"OnFailure","template":{"metadata":)"
      R"({"annotations":{"kozmo.io/sim-duration":"300ms","kozmo.io/sim-pull-duration":"100ms"}},)"
      R"("spec":{"containers":[{"name":"pytorch","image":"kozmo/pytorch-mnist:1"}]}}}}}})");
  REQUIRE(body.has_value());
  // The CRD is installed by start(); its API answers a moment later.
  auto created = test::poll_until([&] { return cli->create(pytorchjobs, *body); },
                                  [](const json::value&) { return true; }, 10s);
  REQUIRE(created.find("metadata") != nullptr);

  auto ref = pytorchjobs;
  ref.name = "counted";
  auto done = test::poll_until([&] { return cli->get(ref); },
                               [](const json::value& j) {
                                 const auto* conds = j.at_path({"status", "conditions"});
                                 if (!conds || !conds->is_array())
                                   return false;
                                 for (const auto& c : conds->as_array())
                                   if (c.get_string("type") == "Succeeded" && c.get_string("status") == "True")
                                     return true;
                                 return false;
                               },
                               30s);
  REQUIRE(done.at_path({"status", "completionTime"}) != nullptr);
  CHECK(wait_value(*cli, R"(kozmo_training_jobs_finished_total{outcome="succeeded"})", 1) == 1);
  CHECK(value_of(scrape(*cli).body, "kozmo_training_pods_created_total") >= 1);
  CHECK(value_of(scrape(*cli).body, R"(kozmo_training_jobs_finished_total{outcome="failed"})") == 0);
}
