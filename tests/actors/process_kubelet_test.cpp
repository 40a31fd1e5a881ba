// The kubelet's process runtime through the embedding API (kozmo::engine) and the embedded API
// server: real processes, observed with GETs of the pod and its log, as a user would.
#include "k8s/apiserver/pod_log_layout.hpp"
#include "k8s/client/client.hpp"
#include "runtime/engine_internal.hpp"

#include "tests/actors/support/api_polling.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

struct process_cluster {
  std::string work;
  std::unique_ptr<engine> e;
  std::shared_ptr<client::client> cli;

  process_cluster() {
    char dir[] = "/tmp/kozmo-process-test.XXXXXX";
    REQUIRE(::mkdtemp(dir));
    work = dir;
    engine_options o;
    o.api.embedded = true;
    o.parts.nodes = kozmo::uniform_nodes(1, 0);
    o.parts.binder = true;
    o.parts.kubelet_runtime = "process";
    o.parts.work_dir = work;
    e = std::make_unique<engine>(o);
    REQUIRE(e->start().has_value());
    cli = engine_internal::api(*e);
    for (int i = 0; i < 100; ++i) {
      auto list = cli->list({"", "v1", "nodes", "", "", ""});
      if (list && list->find("items")->as_array().size() == 1)
        break;
      std::this_thread::sleep_for(50ms);
    }
  }
  ~process_cluster() {
    e.reset();
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
  }

  void create_pod(const std::string& name, const std::string& command_json, const std::string& restart = "Never") {
    auto body = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                            R"("},"spec":{"restartPolicy":")" + restart +
                            R"(","containers":[{"name":"main","image":"busybox","command":)" + command_json + "}]}}");
    REQUIRE(body.has_value());
    auto r = cli->create({"", "v1", "pods", "default", "", ""}, *body);
    INFO((r ? "" : r.err().message));
    REQUIRE(r.has_value());
  }

  expected<json::value> pod(const std::string& name) { return cli->get({"", "v1", "pods", "default", name, ""}); }

  json::value wait_pod(const std::string& name, const std::function<bool(const json::value&)>& pred,
                       std::chrono::milliseconds timeout = 20s) {
    return test::poll_until([&] { return pod(name); }, pred, timeout);
  }

  std::string log_file(const json::value& pod, int restart) {
    std::ifstream in(pod_logs::container_log(pod_logs::pod_logs_root(work), "default",
                                             pod.at_path({"metadata", "name"})->as_string(),
                                             pod.at_path({"metadata", "uid"})->as_string(), "main", restart));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

std::string phase(const json::value& pod) {
  const auto* st = pod.find("status");
  return st ? st->get_string("phase") : "";
}

const json::value* terminated(const json::value& pod) {
  const auto* cs = pod.at_path({"status", "containerStatuses"});
  if (!cs || !cs->is_array() || cs->as_array().empty())
    return nullptr;
  return cs->as_array().front().at_path({"state", "terminated"});
}

} // namespace

TEST_CASE("a process pod runs its command, reports its exit code and keeps its output in the log layout") {
  process_cluster c;
  c.create_pod("hello", R"(["sh", "-c", "echo hello; echo err >&2; exit 3"])");
  auto pod = c.wait_pod("hello", [](const json::value& p) { return phase(p) == "Failed"; });
  REQUIRE(phase(pod) == "Failed");
  const auto* t = terminated(pod);
  REQUIRE(t);
  CHECK(t->get_int("exitCode") == 3);
  CHECK(t->get_string("reason") == "Error");
  auto log = c.log_file(pod, 0);
  CHECK(pod_logs::decode_cri(log, false) == "hello\nerr\n");
  CHECK(log.find(" stdout F hello\n") != std::string::npos);
  CHECK(log.find(" stderr F err\n") != std::string::npos);
}

TEST_CASE("deleting a running process pod stops its process with SIGTERM and removes the pod") {
  process_cluster c;
  c.create_pod("sleeper", R"(["sleep", "1000"])");
  auto pod = c.wait_pod("sleeper", [](const json::value& p) { return phase(p) == "Running"; });
  REQUIRE(phase(pod) == "Running");
  client::delete_options opts;
  opts.grace_period_seconds = 10;
  REQUIRE(c.cli->remove({"", "v1", "pods", "default", "sleeper", ""}, opts).has_value());
  auto start = std::chrono::steady_clock::now();
  bool gone = false;
  while (std::chrono::steady_clock::now() - start < 8s && !gone) {
    auto r = c.pod("sleeper");
    gone = !r && r.err().code == 404;
    std::this_thread::sleep_for(100ms);
  }
  CHECK(gone); // well before the grace period: sleep dies of SIGTERM
}
