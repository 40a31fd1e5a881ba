// The watch stream against a scripted server: lines across chunk boundaries, clean and broken
// ends, error answers, cancel, and a stream longer than Beast's default body limit.
#include "k8s/client/client.hpp"
#include "tests/client/support/scripted_server.hpp"
#include "tests/client/support/waiting.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace kozmo;
using namespace kozmo::client;
using kozmo::test::mailbox;
using kozmo::test::received_request;
using kozmo::test::scripted_server;
using kozmo::test::server_connection;

namespace {

config fast_config(const std::string& url) {
  config cfg;
  cfg.server = url;
  cfg.max_retries = 0;
  return cfg;
}

// Collects what a watch delivers.
struct recorder {
  mailbox<std::string> lines;
  mailbox<expected<ok_t>> ends;
  std::atomic<int> end_count{0};

  std::function<void(std::string_view)> on_line() {
    return [this](std::string_view l) { lines.put(std::string(l)); };
  }
  std::function<void(expected<ok_t>)> on_closed() {
    return [this](expected<ok_t> how) {
      ++end_count;
      ends.put(std::move(how));
    };
  }
};

const resource_ref pods{"", "v1", "pods", "wire-a"};

void let_it_flush() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

} // namespace

TEST_CASE("events split across chunks, or sharing one, arrive as whole lines in order",
          "[watch]") {
  const std::string e1 = R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"pw2","resourceVersion":"417"}}})";
  const std::string e2 = R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"pw2","resourceVersion":"418"}}})";
  const std::string e3 = R"({"type":"DELETED","object":{"kind":"Pod","metadata":{"name":"pw2","resourceVersion":"420"}}})";
  scripted_server server([&](const received_request&, server_connection& c) {
    c.start_chunked(200);
    c.send_chunk(e1.substr(0, 10));
    let_it_flush();
    c.send_chunk(e1.substr(10) + "\n" + e2 + "\n" + e3.substr(0, 30));
    let_it_flush();
    c.send_chunk(e3.substr(30) + "\n");
    c.end_chunks();
  });
  kozmo::client::client k(fast_config(server.url()));
  recorder rec;
  watch_options opts;
  opts.resource_version = "416";
  auto h = k.watch(pods, opts, rec.on_line(), rec.on_closed());
  auto end = rec.ends.take();
  REQUIRE(end);
  CHECK(end->has_value());
  REQUIRE(rec.lines.size() == 3);
  CHECK(rec.lines.take() == e1);
  CHECK(rec.lines.take() == e2);
  CHECK(rec.lines.take() == e3);
  CHECK(h.closed());
  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].target ==
        "/api/v1/namespaces/wire-a/pods?watch=1&allowWatchBookmarks=true&resourceVersion=416");
}

TEST_CASE("a watch broken mid-stream ends with an error, not a clean end", "[watch]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.start_chunked(200);
    c.send_chunk("{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"MOD");
    c.close_after();  // no terminating chunk
  });
  kozmo::client::client k(fast_config(server.url()));
  recorder rec;
  k.watch(pods, {}, rec.on_line(), rec.on_closed());
  auto end = rec.ends.take();
  REQUIRE(end);
  REQUIRE_FALSE(end->has_value());
  CHECK(end->err().code == 0);
  CHECK(end->err().message.find("watch " + server.url() + "/api/v1/namespaces/wire-a/pods?watch=1") == 0);
  CHECK(rec.lines.size() == 1);
}

TEST_CASE("an error answer to a watch ends it with the decoded Status", "[watch]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.respond(410, R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (369)","reason":"Expired","code":410})json");
  });
  kozmo::client::client k(fast_config(server.url()));
  recorder rec;
  k.watch(pods, {}, rec.on_line(), rec.on_closed());
  auto end = rec.ends.take();
  REQUIRE(end);
  REQUIRE_FALSE(end->has_value());
  CHECK(end->err().code == 410);
  CHECK(end->err().reason == "Expired");
  CHECK(end->err().message == "too old resource version: 1 (369)");
  CHECK(rec.lines.size() == 0);
}

TEST_CASE("an ERROR event inside a 200 stream is handed over as a line", "[watch]") {
  const std::string expired = R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (369)","reason":"Expired","code":410}})json";
  scripted_server server([&](const received_request&, server_connection& c) {
    c.start_chunked(200);
    c.send_chunk(expired + "\n");
    c.end_chunks();
  });
  kozmo::client::client k(fast_config(server.url()));
  recorder rec;
  k.watch(pods, {}, rec.on_line(), rec.on_closed());
  auto end = rec.ends.take();
  REQUIRE(end);
  CHECK(end->has_value());
  CHECK(rec.lines.take() == expired);
}

TEST_CASE("cancel ends a quiet watch once, with ok, from any thread", "[watch]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.start_chunked(200);
    c.send_chunk("{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n");
    c.wait_for_client_close();
    c.close_after();
  });
  kozmo::client::client k(fast_config(server.url()));
  recorder rec;
  auto h = k.watch(pods, {}, rec.on_line(), rec.on_closed());
  REQUIRE(rec.lines.take());
  auto copy = h;
  std::thread other([&] { copy.cancel(); });
  h.cancel();
  other.join();
  auto end = rec.ends.take();
  REQUIRE(end);
  CHECK(end->has_value());
  h.cancel();
  k.post([&] { rec.ends.put(error{"marker"}); });  // everything before it on the io thread ran
  auto marker = rec.ends.take();
  REQUIRE(marker);
  CHECK_FALSE(marker->has_value());
  CHECK(rec.end_count == 1);
  CHECK(h.closed());
}

TEST_CASE("a watch streaming more than 8 MiB is not cut off by a body limit", "[watch]") {
  constexpr int events = 12000;
  const std::string padding(1000, 'x');
  scripted_server server([&](const received_request&, server_connection& c) {
    c.start_chunked(200);
    std::string batch;
    for (int i = 0; i < events; ++i) {
      batch += R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":")" + std::to_string(i) +
               R"("},"pad":")" + padding + "\"}}\n";
      if (batch.size() > 60000) {
        // Cut mid-line on purpose.
        c.send_chunk(batch.substr(0, batch.size() - 7));
        batch = batch.substr(batch.size() - 7);
      }
    }
    c.send_chunk(batch);
    c.end_chunks();
  });
  kozmo::client::client k(fast_config(server.url()));
  std::atomic<int> count{0};
  std::atomic<int> malformed{0};
  recorder rec;
  k.watch(pods, {}, [&](std::string_view line) {
    if (line.size() < 1000 || line.back() != '}') ++malformed;
    ++count;
  }, rec.on_closed());
  auto end = rec.ends.take();
  REQUIRE(end);
  CHECK(end->has_value());
  CHECK(count == events);
  CHECK(malformed == 0);
}

TEST_CASE("a watch of a named object selects it by metadata.name", "[watch]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.start_chunked(200);
    c.end_chunks();
  });
  kozmo::client::client k(fast_config(server.url()));
  recorder rec;
  watch_options opts;
  opts.allow_bookmarks = false;
  opts.timeout_seconds = 30;
  k.watch({"kubeflow.org", "v1", "pytorchjobs", "ml", "job-1"}, opts, rec.on_line(), rec.on_closed());
  REQUIRE(rec.ends.take());
  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].target ==
        "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs?watch=1&fieldSelector=metadata.name%3Djob-1&timeoutSeconds=30");
}

TEST_CASE("a watch that cannot connect reports why", "[watch]") {
  std::uint16_t port;
  {
    scripted_server gone([](const received_request&, server_connection&) {});
    port = gone.port();
  }
  kozmo::client::client k(fast_config("http://127.0.0.1:" + std::to_string(port)));
  recorder rec;
  k.watch(pods, {}, rec.on_line(), rec.on_closed());
  auto end = rec.ends.take();
  REQUIRE(end);
  REQUIRE_FALSE(end->has_value());
  CHECK(end->err().message == "connect 127.0.0.1:" + std::to_string(port) + ": connection refused");
}

TEST_CASE("destroying the client ends its open watches with ok", "[watch]") {
  scripted_server server([](const received_request&, server_connection& c) {
    c.start_chunked(200);
    c.send_chunk("{\"type\":\"ADDED\",\"object\":{}}\n");
    c.wait_for_client_close();
    c.close_after();
  });
  recorder rec;
  watch_handle h;
  {
    kozmo::client::client k(fast_config(server.url()));
    h = k.watch(pods, {}, rec.on_line(), rec.on_closed());
    REQUIRE(rec.lines.take());
  }
  auto end = rec.ends.take();
  REQUIRE(end);
  CHECK(end->has_value());
  h.cancel();  // harmless after the client is gone
  CHECK(rec.end_count == 1);
}
