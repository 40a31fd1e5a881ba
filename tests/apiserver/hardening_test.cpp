// The API server keeps serving whatever its clients do: it outlives an exhausted file table,
// holds a bounded number of connections, and cuts idle, half-sent and never-finished requests
// (k8s/serve/limits.hpp). Over real sockets.
#include "tests/apiserver/fixture.hpp"
#include "tests/support/raw_http.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace kozmo;
using namespace kozmo::test;
using namespace std::chrono_literals;

namespace {

apiserver::server::options with_limits(serve::limits l) {
  apiserver::server::options o;
  o.limits = l;
  return o;
}

// A TCP connection that sends nothing; -1 when socket() or connect() fails.
int idle_connection(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The process's open-file soft limit, lowered for the scope and restored after.
struct lowered_open_file_limit {
  explicit lowered_open_file_limit(rlim_t soft) {
    ::getrlimit(RLIMIT_NOFILE, &saved);
    rlimit low = saved;
    low.rlim_cur = soft;
    ::setrlimit(RLIMIT_NOFILE, &low);
  }
  ~lowered_open_file_limit() { ::setrlimit(RLIMIT_NOFILE, &saved); }
  rlimit saved{};
};

int open_descriptors() {
  int n = 0;
  for (int fd = 0; fd < 4096; ++fd)
    if (::fcntl(fd, F_GETFD) != -1)
      ++n;
  return n;
}

} // namespace

TEST_CASE("the API server accepts again once the file table it ran out of has room", "[hardening]") {
  running_server s(with_limits(serve::limits{.max_connections = 100000}));
  REQUIRE(s.http->get("/version").status == 200);
  std::vector<int> held;
  {
    // Clients and server share this process: every connection costs two descriptors, so the
    // server's accept runs into EMFILE while connections wait in its backlog.
    lowered_open_file_limit low(static_cast<rlim_t>(open_descriptors() + 40));
    for (int i = 0; i < 200; ++i) {
      int fd = idle_connection(s.srv.port());
      if (fd < 0)
        break;
      held.push_back(fd);
    }
    std::this_thread::sleep_for(200ms); // the server meets EMFILE on the connections backlogged
  }
  REQUIRE(held.size() >= 20);
  for (int fd : held)
    ::close(fd);
  // On a server whose accept loop ended with the error, this request waits in the backlog
  // forever (the client gives up after 30 s).
  auto r = s.http->get("/version");
  CHECK(r.status == 200);
}

TEST_CASE("over its connection limit the API server closes a new connection at once and serves the others",
          "[hardening]") {
  running_server s(with_limits(serve::limits{.max_connections = 6}));
  std::vector<std::unique_ptr<raw_connection>> held;
  held.push_back(std::make_unique<raw_connection>(s.srv.port()));
  REQUIRE(held.back()->request("GET", "/version").status == 200);
  while (held.size() < 6)
    held.push_back(std::make_unique<raw_connection>(s.srv.port()));
  // Let the listener count them before the next one.
  for (int i = 0; i < 100 && s.srv.open_connections() < 6; ++i)
    std::this_thread::sleep_for(10ms);
  REQUIRE(s.srv.open_connections() == 6);

  raw_connection over(s.srv.port());
  CHECK(over.closed_within(5000));
  // The held ones still work, and once one goes a new connection is served.
  CHECK(held.front()->request("GET", "/version").status == 200);
  held.pop_back();
  for (int i = 0; i < 100 && s.srv.open_connections() >= 6; ++i)
    std::this_thread::sleep_for(10ms);
  raw_connection next(s.srv.port());
  CHECK(next.request("GET", "/version").status == 200);
}

TEST_CASE("a request head sent by halves is cut after the header timeout", "[hardening]") {
  serve::limits l;
  l.header_timeout = 300ms;
  running_server s(with_limits(l));
  std::vector<std::unique_ptr<raw_connection>> slow;
  for (int i = 0; i < 40; ++i) {
    slow.push_back(std::make_unique<raw_connection>(s.srv.port()));
    slow.back()->send_raw("GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
  }
  for (auto& c : slow)
    CHECK(c->closed_within(5000));
  CHECK(s.http->get("/version").status == 200);
}

TEST_CASE("an idle keep-alive connection is closed after the idle timeout, a busy one is not", "[hardening]") {
  serve::limits l;
  l.idle_timeout = 300ms;
  running_server s(with_limits(l));
  raw_connection idle(s.srv.port());
  CHECK(idle.closed_within(5000));

  raw_connection busy(s.srv.port());
  for (int i = 0; i < 5; ++i) {
    REQUIRE(busy.request("GET", "/version").status == 200);
    std::this_thread::sleep_for(100ms);
  }
}

TEST_CASE("a body that never finishes is cut after the body timeout", "[hardening]") {
  serve::limits l;
  l.body_timeout = 300ms;
  running_server s(with_limits(l));
  raw_connection c(s.srv.port());
  c.send_raw("POST " + configmaps + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             "Content-Length: 1000\r\n\r\n{\"apiVersion\":");
  CHECK(c.closed_within(5000));
  // Nothing half-written was stored.
  CHECK(s.http->get(configmaps).json().at_path({"items"})->as_array().empty());
}

TEST_CASE("a request head over 1 MiB is refused and the server keeps serving", "[hardening]") {
  running_server s;
  raw_connection c(s.srv.port());
  c.send_raw("GET /version HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(1100 * 1024, 'a') + "\r\n\r\n");
  CHECK(c.closed_within(5000));
  CHECK(s.http->get("/version").status == 200);
}
