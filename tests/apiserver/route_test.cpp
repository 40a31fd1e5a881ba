// Extra routes (server::add_route) answer through a callback: later, from another thread, or not
// at all, in which case the route's deadline answers for them; a client that went away meanwhile
// costs the server nothing once the answer comes.
#include "tests/apiserver/fixture.hpp"
#include "tests/support/raw_http.hpp"

#include <future>
#include <mutex>
#include <thread>
#include <vector>

using namespace kozmo;
using namespace kozmo::test;
using namespace std::chrono_literals;

namespace {

// Keeps the replies of the requests it gets; answers none by itself.
struct held_replies {
  std::mutex mu;
  std::vector<apiserver::server::route_reply_fn> replies;

  apiserver::server::route route(std::chrono::milliseconds deadline) {
    apiserver::server::route r;
    r.handler = [this](const std::string&, const std::string&, const std::string&,
                       apiserver::server::route_reply_fn reply) {
      std::lock_guard lock(mu);
      replies.push_back(std::move(reply));
    };
    r.deadline = deadline;
    r.late = {504, R"({"message":"too late"})"};
    return r;
  }
  std::size_t count() {
    std::lock_guard lock(mu);
    return replies.size();
  }
  apiserver::server::route_reply_fn take() {
    std::lock_guard lock(mu);
    auto r = std::move(replies.front());
    replies.erase(replies.begin());
    return r;
  }
};

void wait_until(const std::function<bool()>& done) {
  for (int i = 0; i < 500 && !done(); ++i)
    std::this_thread::sleep_for(20ms);
}

} // namespace

TEST_CASE("a route answers later from another thread, once", "[route]") {
  running_server s;
  held_replies held;
  s.srv.add_route("/v1/held/", held.route(std::chrono::hours(1)));
  auto answer = std::async(std::launch::async, [&] { return s.http->get("/v1/held/x?y=1"); });
  wait_until([&] { return held.count() == 1; });
  REQUIRE(held.count() == 1);
  auto reply = held.take();
  std::thread([reply] {
    reply({201, "first", "text/plain"});
    reply({500, "second"}); // ignored
  }).join();
  auto r = answer.get();
  CHECK(r.status == 201);
  CHECK(r.body == "first");
  CHECK(r.header("Content-Type") == "text/plain");
  CHECK(s.http->get("/api/v1/namespaces/default/pods").status == 200); // the API is served as ever
}

TEST_CASE("a route that never answers gets the route's late reply at its deadline", "[route]") {
  running_server s;
  held_replies held;
  s.srv.add_route("/v1/held/", held.route(50ms));
  auto r = s.http->get("/v1/held/x");
  CHECK(r.status == 504);
  CHECK(r.body == R"({"message":"too late"})");
  REQUIRE(held.count() == 1);
  held.take()({200, "after the deadline"}); // ignored: the client has its answer
  CHECK(s.http->get("/v1/held/y").status == 504);
}

TEST_CASE("an answer for a client that went away closes its connection and the server serves on", "[route]") {
  running_server s;
  held_replies held;
  s.srv.add_route("/v1/held/", held.route(std::chrono::hours(1)));
  {
    raw_connection gone(s.srv.port());
    REQUIRE(gone.connected());
    gone.send_raw("GET /v1/held/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    wait_until([&] { return held.count() == 1; });
  } // the client closes its socket before the answer
  REQUIRE(held.count() == 1);
  held.take()({200, "for nobody"});
  wait_until([&] { return s.srv.open_connections() == 0; });
  CHECK(s.srv.open_connections() == 0);
  CHECK(s.http->get("/api/v1/namespaces/default/pods").status == 200);
}

TEST_CASE("a route's answer after the server stopped, or went away, is dropped", "[route]") {
  held_replies held;
  apiserver::server::route_reply_fn late;
  {
    running_server s;
    s.srv.add_route("/v1/held/", held.route(std::chrono::hours(1)));
    raw_connection first(s.srv.port()), second(s.srv.port());
    first.send_raw("GET /v1/held/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    second.send_raw("GET /v1/held/y HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    wait_until([&] { return held.count() == 2; });
    REQUIRE(held.count() == 2);
    s.srv.stop();
    held.take()({200, "after stop"}); // nothing is written
    late = held.take();
    CHECK(first.read_reply().status == 0); // stop() closed it without an answer
  }
  late({200, "after the server is gone"}); // nothing is written, nothing breaks
}
