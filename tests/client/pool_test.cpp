// The connection cap (config::max_connections) and the lanes requests wait in for a connection
// (normal, a background view's, Events last), against a scripted HTTP server on a real socket.
#include "k8s/client/client.hpp"
#include "tests/client/support/scripted_server.hpp"

#include <catch2/catch.hpp>

#include <condition_variable>
#include <future>
#include <mutex>

using namespace kozmo;
using namespace kozmo::client;
using kozmo::test::received_request;
using kozmo::test::scripted_server;
using kozmo::test::server_connection;

namespace {

config capped_config(const std::string& url, int max_connections) {
  config cfg;
  cfg.server = url;
  cfg.qps = 0;
  cfg.max_connections = max_connections;
  return cfg;
}

// Blocks until every callback of `n` async requests has run; returns how many succeeded.
struct countdown {
  std::mutex mu;
  std::condition_variable cv;
  int left;
  int ok = 0;
  explicit countdown(int n) : left(n) {}
  void done(bool success) {
    std::lock_guard lock(mu);
    --left;
    ok += success ? 1 : 0;
    cv.notify_all();
  }
  int wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return left == 0; });
    return ok;
  }
};

// A server that answers every request at once but GET /hold, which it holds until let_go():
// with a pool of one connection, what queues behind it shows the order requests go out in.
struct holding_server {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  scripted_server http{[this](const received_request& r, server_connection& c) {
    if (r.target == "/hold") {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return release; });
    }
    c.respond(200, "{}");
  }};
  void let_go() {
    {
      std::lock_guard lock(mu);
      release = true;
    }
    cv.notify_all();
  }
};

// Runs on the io thread after everything posted before it: requests started before this
// call are then waiting for a connection.
void drain_io_thread(client::client& k) {
  std::promise<void> ran;
  k.post([&] { ran.set_value(); });
  ran.get_future().wait();
}

} // namespace

TEST_CASE("a burst of concurrent requests shares at most max_connections connections", "[pool]") {
  scripted_server server([](const received_request&, server_connection& c) { c.respond(200, "{}"); });
  client::client k(capped_config(server.url(), 3));
  const int n = 60;
  countdown all(n);
  for (int i = 0; i < n; ++i)
    k.send(request{"GET", "/api/v1/pods/p" + std::to_string(i)}, [&](expected<response> r) { all.done(r && r->status == 200); });
  CHECK(all.wait() == n);
  CHECK(server.requests().size() == static_cast<std::size_t>(n));
  CHECK(server.connections() <= 3);
}

TEST_CASE("requests waiting for a connection go before waiting Events", "[pool]") {
  holding_server server;
  client::client k(capped_config(server.http.url(), 1));
  countdown all(3);
  k.send(request{"GET", "/hold"}, [&](expected<response> r) { all.done(bool(r)); });
  json::value ev;
  ev["metadata"]["namespace"] = "default";
  ev["metadata"]["name"] = "e1";
  k.create_event(ev, [&](expected<json::value> r) { all.done(bool(r)); });
  k.send(request{"GET", "/api/v1/namespaces/default/pods/p"}, [&](expected<response> r) { all.done(bool(r)); });
  drain_io_thread(k);
  server.let_go();
  REQUIRE(all.wait() == 3);
  auto seen = server.http.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].target == "/hold");
  CHECK(seen[1].target == "/api/v1/namespaces/default/pods/p");
  CHECK(seen[2].target == "/api/v1/namespaces/default/events");
}

TEST_CASE("a background view's requests go after the waiting requests of the client it shares", "[pool]") {
  holding_server server;
  auto k = std::make_shared<client::client>(capped_config(server.http.url(), 1));
  auto tasks = k->background_view();
  countdown all(3);
  k->send(request{"GET", "/hold"}, [&](expected<response> r) { all.done(bool(r)); });
  tasks->send(request{"GET", "/apis/kozmo.io/v1alpha1/namespaces/default/taskexecutions/t"},
              [&](expected<response> r) { all.done(bool(r)); });
  k->send(request{"GET", "/api/v1/namespaces/default/pods/p"}, [&](expected<response> r) { all.done(bool(r)); });
  drain_io_thread(*k);
  server.let_go();
  REQUIRE(all.wait() == 3);
  auto seen = server.http.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[1].target == "/api/v1/namespaces/default/pods/p");
  CHECK(seen[2].target == "/apis/kozmo.io/v1alpha1/namespaces/default/taskexecutions/t");
  // The view shares the connection pool: dropping the first client leaves the view working.
  k.reset();
  CHECK(tasks->send_sync(request{"GET", "/after"}).has_value());
}

TEST_CASE("a background view's Events go after its waiting status writes", "[pool]") {
  holding_server server;
  auto k = std::make_shared<client::client>(capped_config(server.http.url(), 1));
  auto tasks = k->background_view();
  countdown all(4);
  k->send(request{"GET", "/hold"}, [&](expected<response> r) { all.done(bool(r)); });
  json::value ev;
  ev["metadata"]["namespace"] = "default";
  ev["metadata"]["name"] = "e1";
  tasks->create_event(ev, [&](expected<json::value> r) { all.done(bool(r)); });
  tasks->send(request{"PATCH", "/apis/kozmo.io/v1alpha1/namespaces/default/taskexecutions/t/status"},
              [&](expected<response> r) { all.done(bool(r)); });
  k->send(request{"GET", "/api/v1/namespaces/default/pods/p"}, [&](expected<response> r) { all.done(bool(r)); });
  drain_io_thread(*k);
  server.let_go();
  REQUIRE(all.wait() == 4);
  auto seen = server.http.requests();
  REQUIRE(seen.size() == 4);
  CHECK(seen[1].target == "/api/v1/namespaces/default/pods/p");
  CHECK(seen[2].target == "/apis/kozmo.io/v1alpha1/namespaces/default/taskexecutions/t/status");
  CHECK(seen[3].target == "/api/v1/namespaces/default/events");
}

TEST_CASE("a closing view's writes go before a background view's waiting writes", "[pool]") {
  holding_server server;
  auto k = std::make_shared<client::client>(capped_config(server.http.url(), 1));
  auto tasks = k->background_view();
  auto ending = k->view(lane::closing);
  countdown all(3);
  k->send(request{"GET", "/hold"}, [&](expected<response> r) { all.done(bool(r)); });
  tasks->send(request{"POST", "/api/v1/namespaces/default/pods"}, [&](expected<response> r) { all.done(bool(r)); });
  ending->send(request{"PATCH", "/apis/kozmo.io/v1alpha1/namespaces/default/taskexecutions/hit/status"},
               [&](expected<response> r) { all.done(bool(r)); });
  drain_io_thread(*k);
  server.let_go();
  REQUIRE(all.wait() == 3);
  auto seen = server.http.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[1].target == "/apis/kozmo.io/v1alpha1/namespaces/default/taskexecutions/hit/status");
  CHECK(seen[2].target == "/api/v1/namespaces/default/pods");
}
