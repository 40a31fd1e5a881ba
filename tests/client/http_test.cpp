// Requests, errors, retries and keep-alive against a scripted HTTP server on a real socket.
#include "k8s/client/client.hpp"
#include "tests/client/support/scripted_server.hpp"
#include "tests/client/support/waiting.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <thread>

using namespace kozmo;
using namespace kozmo::client;
using kozmo::test::received_request;
using kozmo::test::scripted_server;
using kozmo::test::server_connection;

namespace {

const std::string not_found_status =
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404})";

config fast_config(const std::string& url) {
  config cfg;
  cfg.server = url;
  cfg.token = "secret-token";
  cfg.retry_backoff_base = std::chrono::milliseconds(1);
  cfg.retry_backoff_cap = std::chrono::milliseconds(10);
  return cfg;
}

request get(std::string path) { return request{"GET", std::move(path)}; }

// A port nothing listens on: one a server had a moment ago.
std::uint16_t closed_port() {
  scripted_server s([](const received_request&, server_connection&) {});
  return s.port();
}

} // namespace

TEST_CASE("a GET returns the body and carries the token, user agent and accept headers",
          "[http]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.respond(200, R"({"kind":"PodList","items":[]})", {{"X-Test", "yes"}});
  });
  kozmo::client::client k(fast_config(server.url()));
  auto r = k.send_sync(get("/api/v1/pods?limit=500"));
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body == R"({"kind":"PodList","items":[]})");
  CHECK(r->headers["x-test"] == "yes");
  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].method == "GET");
  CHECK(seen[0].target == "/api/v1/pods?limit=500");
  CHECK(seen[0].headers["authorization"] == "Bearer secret-token");
  CHECK(seen[0].headers["user-agent"] == "kozmo/0.1");
  CHECK(seen[0].headers["accept"] == "application/json");
  CHECK(seen[0].headers["host"] == "127.0.0.1:" + std::to_string(server.port()));
}

TEST_CASE("an error answer becomes an error with the Status message, reason and code", "[http]") {
  scripted_server server([](const received_request& r, server_connection& c) {
    if (r.target == "/api/v1/namespaces/a/pods/nope")
      c.respond(404, not_found_status);
    else
      c.respond(403, "forbidden: you shall not pass", {{"Content-Type", "text/plain"}});
  });
  kozmo::client::client k(fast_config(server.url()));
  auto missing = k.get({"", "v1", "pods", "a", "nope"});
  REQUIRE_FALSE(missing);
  CHECK(missing.err().code == 404);
  CHECK(missing.err().reason == "NotFound");
  CHECK(missing.err().message == "pods \"nope\" not found");

  auto denied = k.send_sync(get("/api/v1/secrets"));
  REQUIRE_FALSE(denied);
  CHECK(denied.err().code == 403);
  CHECK(denied.err().message == "forbidden: you shall not pass");
}

TEST_CASE("a 429 with Retry-After is retried and the caller sees only the success", "[retry]") {
  std::atomic<int> calls{0};
  scripted_server server([&](const received_request&, server_connection& c) {
    if (calls++ == 0)
      c.respond(429, R"({"kind":"Status","message":"slow down","reason":"TooManyRequests","code":429})",
                {{"Retry-After", "1"}});
    else
      c.respond(200, R"({"ok":true})");
  });
  kozmo::client::client k(fast_config(server.url()));
  auto r = k.send_sync(get("/api/v1/nodes"));
  REQUIRE(r);
  CHECK(r->body == R"({"ok":true})");
  CHECK(server.requests().size() == 2);
}

TEST_CASE("a GET answered 500 is retried, a POST answered 500 is not", "[retry]") {
  std::atomic<int> gets{0};
  scripted_server server([&](const received_request& r, server_connection& c) {
    if (r.method == "GET" && gets++ > 0)
      c.respond(200, R"({"kind":"Pod"})");
    else
      c.respond(500, R"({"kind":"Status","message":"etcd hiccup","reason":"InternalError","code":500})");
  });
  kozmo::client::client k(fast_config(server.url()));
  auto got = k.get({"", "v1", "pods", "a", "p"});
  REQUIRE(got);
  CHECK(got->get_string("kind") == "Pod");

  auto created = k.create({"", "v1", "pods", "a"}, json::object{{"kind", "Pod"}});
  REQUIRE_FALSE(created);
  CHECK(created.err().code == 500);
  CHECK(created.err().message == "etcd hiccup");
  int posts = 0;
  for (const auto& r : server.requests()) posts += r.method == "POST";
  CHECK(posts == 1);
}

TEST_CASE("a POST answered 429 is retried because the server did not run it", "[retry]") {
  std::atomic<int> calls{0};
  scripted_server server([&](const received_request&, server_connection& c) {
    if (calls++ == 0)
      c.respond(429, R"({"kind":"Status","message":"too many","code":429})");
    else
      c.respond(201, R"({"kind":"Pod","metadata":{"name":"p"}})");
  });
  kozmo::client::client k(fast_config(server.url()));
  auto created = k.create({"", "v1", "pods", "a"}, json::object{{"kind", "Pod"}});
  REQUIRE(created);
  CHECK(server.requests().size() == 2);
}

TEST_CASE("retries give up after max_retries with the last error", "[retry]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.respond(503, "", {{"Content-Type", "text/plain"}});
  });
  auto cfg = fast_config(server.url());
  cfg.max_retries = 2;
  kozmo::client::client k(cfg);
  auto r = k.send_sync(get("/healthz"));
  REQUIRE_FALSE(r);
  CHECK(r.err().code == 503);
  CHECK(r.err().message == "503 Service Unavailable");
  CHECK(server.requests().size() == 3);
}

TEST_CASE("a refused connection is an error naming the server", "[http]") {
  auto port = closed_port();
  auto cfg = fast_config("http://127.0.0.1:" + std::to_string(port));
  cfg.max_retries = 1;
  kozmo::client::client k(cfg);
  auto r = k.send_sync(get("/api"));
  REQUIRE_FALSE(r);
  CHECK(r.err().code == 0);
  CHECK(r.err().message == "connect 127.0.0.1:" + std::to_string(port) + ": connection refused");
}

TEST_CASE("a bad server URL fails every request with a clear error", "[http]") {
  kozmo::client::client k(fast_config("ftp://example.com"));
  auto r = k.send_sync(get("/api"));
  REQUIRE_FALSE(r);
  CHECK(r.err().message == "server \"ftp://example.com\": only http:// and https:// are supported");
}

TEST_CASE("sequential requests reuse one keep-alive connection", "[keepalive]") {
  scripted_server server([](const received_request&, server_connection& c) { c.respond(200, "{}"); });
  kozmo::client::client k(fast_config(server.url()));
  for (int i = 0; i < 5; ++i) REQUIRE(k.send_sync(get("/api/v1/pods")));
  CHECK(server.connections() == 1);
  CHECK(k.idle_connections() == 1);
}

TEST_CASE("a keep-alive connection the server closed is noticed and a fresh one used",
          "[keepalive]") {
  scripted_server server([](const received_request& r, server_connection& c) {
    c.respond(200, R"({"n":)" + std::to_string(r.connection) + "}");
  });
  kozmo::client::client k(fast_config(server.url()));
  REQUIRE(k.send_sync(get("/a")));
  server.drop_connections();  // an idle timeout on the server side
  auto r = k.send_sync(request{"POST", "/b", "{}"});
  REQUIRE(r);
  CHECK(r->body == R"({"n":2})");
  CHECK(server.requests().size() == 2);
}

TEST_CASE("a request the server drops unanswered on a reused connection is sent again once",
          "[keepalive]") {
  // The race the idle check cannot see: the server reads the request, then closes.
  scripted_server server([](const received_request& r, server_connection& c) {
    if (r.connection == 1 && r.index_on_connection == 2) {
      c.close_after();
      return;
    }
    c.respond(200, R"({"connection":)" + std::to_string(r.connection) + "}");
  });
  auto cfg = fast_config(server.url());
  cfg.max_retries = 0;  // the re-send is not a retry
  kozmo::client::client k(cfg);
  REQUIRE(k.send_sync(get("/first")));
  auto r = k.send_sync(request{"POST", "/second", "{}"});
  REQUIRE(r);
  CHECK(r->body == R"({"connection":2})");
  CHECK(server.requests().size() == 3);
}

TEST_CASE("a server that never answers makes the request fail with a timeout", "[http]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.wait_for_client_close();
    c.close_after();
  });
  auto cfg = fast_config(server.url());
  cfg.request_timeout = std::chrono::milliseconds(200);
  cfg.max_retries = 0;
  kozmo::client::client k(cfg);
  auto r = k.send_sync(get("/slow"));
  REQUIRE_FALSE(r);
  CHECK(r.err().message == "GET " + server.url() + "/slow: timed out after 200 ms");
}

TEST_CASE("async callbacks run on the io thread, where blocking calls are refused", "[http]") {
  scripted_server server([](const received_request&, server_connection& c) { c.respond(200, "{}"); });
  kozmo::client::client k(fast_config(server.url()));
  kozmo::test::mailbox<std::string> out;
  k.send(get("/x"), [&](expected<response> r) {
    if (!r) return out.put("first request failed: " + r.err().message);
    auto nested = k.send_sync(get("/y"));
    out.put(nested ? std::string("blocked") : nested.err().message);
  });
  auto msg = out.take();
  REQUIRE(msg);
  CHECK(*msg == "send_sync called on the client's io thread (it would deadlock)");
}

TEST_CASE("destroying the client fails a request still waiting for its answer", "[http]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.wait_for_client_close();
    c.close_after();
  });
  kozmo::test::mailbox<std::string> out;
  {
    kozmo::client::client k(fast_config(server.url()));
    k.send(get("/hang"), [&](expected<response> r) {
      out.put(r ? std::string("answered") : r.err().message);
    });
    while (server.requests().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto msg = out.take();
  REQUIRE(msg);
  CHECK(*msg == "client is shut down");
}

TEST_CASE("many concurrent async requests all complete", "[http]") {
  scripted_server server([](const received_request& r, server_connection& c) {
    c.respond(200, R"({"path":")" + r.target + "\"}");
  });
  kozmo::client::client k(fast_config(server.url()));
  kozmo::test::mailbox<bool> done;
  constexpr int n = 40;
  for (int i = 0; i < n; ++i) {
    std::string path = "/item/" + std::to_string(i);
    k.send(get(path), [&done, path](expected<response> r) {
      done.put(r && r->body == R"({"path":")" + path + "\"}");
    });
  }
  int good = 0;
  for (int i = 0; i < n; ++i) {
    auto ok = done.take();
    REQUIRE(ok);
    good += *ok;
  }
  CHECK(good == n);
}

TEST_CASE("a client whose last owner lets go inside a callback still shuts down cleanly",
          "[http]") {
  std::promise<void> released;
  auto go = released.get_future().share();
  kozmo::test::mailbox<bool> connection_closed;
  scripted_server server([&](const received_request&, server_connection& c) {
    go.wait();
    c.respond(200, "{}");
    c.wait_for_client_close();  // the shut-down client closes its idle connection
    connection_closed.put(true);
    c.close_after();
  });
  auto k = std::make_shared<kozmo::client::client>(fast_config(server.url()));
  std::shared_ptr<kozmo::client::client> last_owner = k;
  kozmo::test::mailbox<bool> answered;
  k->send(get("/x"), [&](expected<response> r) {
    bool ok = r.has_value();
    last_owner.reset();  // the client is destroyed here, on its own io thread
    answered.put(ok);
  });
  k.reset();
  released.set_value();
  auto ok = answered.take();
  REQUIRE(ok);
  CHECK(*ok);
  CHECK(connection_closed.take());
}

TEST_CASE("requests beyond the burst wait for the rate limiter; watches do not", "[rate]") {
  scripted_server server([](const received_request& r, server_connection& c) {
    if (r.target.find("watch=1") != std::string::npos) {
      c.start_chunked(200);
      c.send_chunk("{\"type\":\"ADDED\",\"object\":{}}\n");
      c.end_chunks();
      return;
    }
    c.respond(200, "{}");
  });
  auto cfg = fast_config(server.url());
  cfg.qps = 0.001;  // one token every ~17 minutes
  cfg.burst = 1;
  kozmo::test::mailbox<std::string> queued;
  {
    kozmo::client::client k(cfg);
    REQUIRE(k.send_sync(get("/first")));
    k.send(get("/second"), [&](expected<response> r) {
      queued.put(r ? std::string("sent") : r.err().message);
    });
    kozmo::test::mailbox<bool> watch_ended;
    k.watch({"", "v1", "pods"}, {}, [](std::string_view) {},
            [&](expected<ok_t> how) { watch_ended.put(how.has_value()); });
    auto clean = watch_ended.take();
    REQUIRE(clean);
    CHECK(*clean);
  }
  // The throttled request never left; shutting the client down released it with an error.
  CHECK(queued.take() == std::string("client is shut down"));
  auto seen = server.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].target == "/first");
  CHECK(seen[1].target.find("watch=1") != std::string::npos);
}

TEST_CASE("a request's extra headers are sent as given, and a HEAD answer's Content-Length brings no body",
          "[http]") {
  scripted_server server([](const received_request& r, server_connection& c) {
    if (r.method == "HEAD") {
      // What an object store answers: the object's length, and no body after the head.
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 12345\r\nETag: \"abc\"\r\n\r\n");
      return;
    }
    c.respond(200, "ok");
  });
  config cfg = fast_config(server.url());
  cfg.token = "";
  cfg.request_timeout = std::chrono::seconds(5);
  kozmo::client::client k(cfg);
  request head{"HEAD", "/bucket/key"};
  head.headers = {{"x-amz-date", "20150830T123600Z"}, {"Authorization", "AWS4-HMAC-SHA256 Credential=x"}};
  auto start = std::chrono::steady_clock::now();
  auto r = k.send_sync(head);
  REQUIRE(r);
  CHECK(r->status == 200);
  CHECK(r->body.empty());
  CHECK(r->headers["content-length"] == "12345");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2)); // not the request timeout
  // The connection stays usable: the next request on it is answered.
  auto next = k.send_sync(get("/next"));
  REQUIRE(next);
  CHECK(next->body == "ok");
  auto seen = server.requests();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].headers["x-amz-date"] == "20150830T123600Z");
  CHECK(seen[0].headers["authorization"] == "AWS4-HMAC-SHA256 Credential=x");
  CHECK(k.idle_connections() == 1);
}

TEST_CASE("a LIST's items reach their handler in batches as they arrive, and a retried answer starts over",
          "[http]") {
  // 300 items of about 1 KiB: more than one batch of 256 KiB.
  std::string list = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[)";
  for (int i = 0; i < 300; ++i)
    list += (i ? "," : "") + std::string(R"({"metadata":{"name":"p)") + std::to_string(i) +
            R"(","annotations":{"pad":")" + std::string(1000, 'x') + "\"}}}";
  list += "]}";
  std::atomic<int> calls{0};
  scripted_server server([&](const received_request& r, server_connection& c) {
    if (r.target == "/api/v1/namespaces/a/pods/nope") {
      c.respond(404, not_found_status);
      return;
    }
    c.start_chunked(200);
    if (calls++ == 0) { // the first answer breaks off half-way: the GET is retried
      c.send_chunk(std::string_view(list).substr(0, list.size() / 2));
      c.close_after();
      return;
    }
    for (std::size_t at = 0; at < list.size(); at += 1000)
      c.send_chunk(std::string_view(list).substr(at, 1000));
    c.end_chunks();
  });
  kozmo::client::client k(fast_config(server.url()));
  // The handler runs on the io thread; send_sync returns after its last call.
  int restarts = 0, batches = 0;
  std::vector<std::string> names;
  auto handler = std::make_shared<list_items_handler>();
  handler->restart = [&] {
    ++restarts;
    batches = 0;
    names.clear();
  };
  handler->batch = [&](std::string batch, std::size_t count) {
    ++batches;
    auto doc = json::parse(batch);
    REQUIRE(doc);
    const auto& items = doc->find("items")->as_array();
    CHECK(items.size() == count);
    for (const auto& item : items)
      names.push_back(item.find("metadata")->get_string("name"));
  };
  auto req = get("/api/v1/pods");
  req.list_items = handler;
  auto r = k.send_sync(req);
  REQUIRE(r);
  CHECK(calls == 2);
  CHECK(restarts == 2);
  CHECK(batches >= 2);
  REQUIRE(names.size() == 300);
  CHECK(names.front() == "p0");
  CHECK(names.back() == "p299");
  CHECK(r->body == R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9"},"items":[]})");

  // An error answer comes whole, to the caller, and the handler hears nothing of it.
  auto missing = get("/api/v1/namespaces/a/pods/nope");
  missing.list_items = handler;
  auto e = k.send_sync(missing);
  REQUIRE_FALSE(e);
  CHECK(e.err().code == 404);
  CHECK(e.err().message == "pods \"nope\" not found");
  CHECK(restarts == 2);
}
