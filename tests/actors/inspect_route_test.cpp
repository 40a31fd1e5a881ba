// kubectl against `kozmo local`'s port while inspect requests wait for a scheduler that does not
// answer: the embedded server's routes answer through a callback, so a request that waits holds
// no io thread, and more waiting requests than the server has io threads leave kubectl served.
#include "k8s/apiserver/server.hpp"
#include "runtime/engine_internal.hpp"
#include "runtime/engine_internal.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

using namespace kozmo;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

bool have_kubectl() { return std::system("command -v kubectl >/dev/null 2>&1") == 0; }

// kubectl with its own kubeconfig and cache, in a directory removed at the end.
struct kubectl_dir {
  explicit kubectl_dir(const std::string& kubeconfig) {
    dir = fs::temp_directory_path() / ("kozmo-inspect-route-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "kubeconfig") << kubeconfig;
  }
  ~kubectl_dir() { fs::remove_all(dir); }

  std::vector<std::string> argv(const std::vector<std::string>& args) const {
    std::vector<std::string> a{"kubectl", "--kubeconfig", (dir / "kubeconfig").string(), "--cache-dir",
                               (dir / "cache").string()};
    a.insert(a.end(), args.begin(), args.end());
    return a;
  }

  // Started in the background, its output (and errors) going to `out`.
  pid_t spawn(const std::vector<std::string>& args, const fs::path& out) const {
    auto a = argv(args);
    std::vector<char*> c;
    for (auto& s : a)
      c.push_back(s.data());
    c.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, "kubectl", &fa, nullptr, c.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    return rc == 0 ? pid : -1;
  }

  // Run to the end: (exit status, output).
  std::pair<int, std::string> run(const std::vector<std::string>& args) const {
    fs::path out = dir / "run.out";
    pid_t pid = spawn(args, out);
    if (pid < 0)
      return {-1, "cannot start kubectl"};
    int status = 0;
    ::waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out)};
  }

  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir;
};

// A scheduler that does not answer: the inspect route keeps every request's reply and gives none
// until the test says so.
struct silent_scheduler {
  std::mutex mu;
  std::vector<apiserver::server::route_reply_fn> held;

  std::size_t waiting() {
    std::lock_guard lock(mu);
    return held.size();
  }
  void answer_all(const std::string& body) {
    std::vector<apiserver::server::route_reply_fn> replies;
    {
      std::lock_guard lock(mu);
      replies.swap(held);
    }
    for (auto& reply : replies)
      reply({200, body});
  }
};

} // namespace

TEST_CASE("inspect requests a scheduler leaves unanswered do not keep kubectl get pods waiting", "[inspect][kubectl]") {
  if (!have_kubectl()) {
    WARN("kubectl not found: skipped");
    return;
  }
  engine_options o;
  o.api.embedded = true;
  engine e(o);
  auto started = e.start();
  INFO((started ? "" : started.err().message));
  REQUIRE(started);
  kubectl_dir kubectl(e.kubeconfig());

  silent_scheduler scheduler;
  apiserver::server::route inspect;
  inspect.handler = [&scheduler](const std::string&, const std::string&, const std::string&,
                                 apiserver::server::route_reply_fn reply) {
    std::lock_guard lock(scheduler.mu);
    scheduler.held.push_back(std::move(reply));
  };
  inspect.deadline = std::chrono::hours(1); // nothing answers for the scheduler during the test
  apiserver::server* srv = engine_internal::embedded_server(e);
  REQUIRE(srv != nullptr);
  srv->add_route("/v1/inspect/", inspect);

  // More waiting requests than the server has io threads (apiserver::server::options::threads).
  const std::size_t held = apiserver::server::options{}.threads + 2;
  std::vector<pid_t> waiting;
  for (std::size_t i = 0; i < held; ++i)
    waiting.push_back(kubectl.spawn({"get", "--raw", "/v1/inspect/clusterstatus"},
                                    kubectl.dir / ("inspect-" + std::to_string(i) + ".out")));
  for (pid_t pid : waiting)
    REQUIRE(pid > 0);
  for (int i = 0; i < 600 && scheduler.waiting() < held; ++i) // they reach the server
    std::this_thread::sleep_for(100ms);
  REQUIRE(scheduler.waiting() == held);

  auto [rc, out] = kubectl.run({"get", "pods", "--request-timeout=60s"});
  INFO(out);
  CHECK(rc == 0);
  CHECK_THAT(out, Catch::Contains("No resources found in default namespace"));

  // kubectl answered while every inspect request was still waiting for the scheduler.
  CHECK(scheduler.waiting() == held);
  for (pid_t pid : waiting) {
    int status = 0;
    CHECK(::waitpid(pid, &status, WNOHANG) == 0);
  }

  // The scheduler answers at last, from this thread: each waiting kubectl gets its answer.
  scheduler.answer_all(R"({"answered":"late"})");
  for (std::size_t i = 0; i < held; ++i) {
    int status = 0;
    REQUIRE(::waitpid(waiting[i], &status, 0) == waiting[i]);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK_THAT(kubectl_dir::read(kubectl.dir / ("inspect-" + std::to_string(i) + ".out")),
               Catch::Contains(R"({"answered":"late"})"));
  }
  e.stop();
}
