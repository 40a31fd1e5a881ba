// The client's pure pieces: paths, retry policy, token bucket, line and LIST splitting, Status
// errors.
#include "k8s/client/line_splitter.hpp"
#include "k8s/client/list_splitter.hpp"
#include "k8s/json/value.hpp"
#include "k8s/client/paths.hpp"
#include "k8s/client/rate_limiter.hpp"
#include "k8s/client/retry.hpp"
#include "k8s/client/status_error.hpp"

#include <catch2/catch.hpp>

#include <vector>

using namespace kozmo::client;
namespace json = kozmo::json;
using namespace std::chrono_literals;

TEST_CASE("core resources live under /api/v1 and others under /apis/group/version", "[paths]") {
  CHECK(resource_path({"", "v1", "pods", "team-a", "p1"}) == "/api/v1/namespaces/team-a/pods/p1");
  CHECK(resource_path({"", "v1", "pods", "team-a", "p1", "binding"}) ==
        "/api/v1/namespaces/team-a/pods/p1/binding");
  CHECK(resource_path({"", "v1", "nodes", "", "n1"}) == "/api/v1/nodes/n1");
  CHECK(resource_path({"", "v1", "namespaces", "", "team-a"}) == "/api/v1/namespaces/team-a");
  CHECK(resource_path({"kubeflow.org", "v1", "pytorchjobs", "ml"}) ==
        "/apis/kubeflow.org/v1/namespaces/ml/pytorchjobs");
  CHECK(collection_path({"", "v1", "pods", "", "ignored", "status"}) == "/api/v1/pods");
}

TEST_CASE("list and watch options become the query kubectl would send", "[paths]") {
  list_options lo;
  lo.label_selector = "a in (b,c)";
  lo.field_selector = "spec.nodeName=n1";
  lo.limit = 500;
  lo.continue_token = "eyJ2Ijo=";
  CHECK(list_query(lo) ==
        "?labelSelector=a%20in%20%28b%2Cc%29&fieldSelector=spec.nodeName%3Dn1&limit=500&continue=eyJ2Ijo%3D");
  CHECK(list_query({}).empty());

  watch_options wo;
  wo.resource_version = "416";
  wo.timeout_seconds = 300;
  CHECK(watch_query(wo) == "?watch=1&allowWatchBookmarks=true&resourceVersion=416&timeoutSeconds=300");
  wo.allow_bookmarks = false;
  wo.resource_version.clear();
  wo.timeout_seconds = 0;
  CHECK(watch_query(wo) == "?watch=1");
}

TEST_CASE("each patch type is sent with its own content type", "[paths]") {
  CHECK(patch_content_type(patch_type::merge) == "application/merge-patch+json");
  CHECK(patch_content_type(patch_type::json) == "application/json-patch+json");
  CHECK(patch_content_type(patch_type::strategic) == "application/strategic-merge-patch+json");
  CHECK(patch_content_type(patch_type::apply) == "application/apply-patch+yaml");
}

TEST_CASE("idempotent requests are retried on 5xx and connection loss, POST only when unsent",
          "[retry]") {
  backoff_policy p;
  using kind = attempt_failure::kind;
  attempt_failure http500{kind::http_status, 500, {}};
  attempt_failure http501{kind::http_status, 501, {}};
  attempt_failure http404{kind::http_status, 404, {}};
  attempt_failure http429{kind::http_status, 429, {}};
  attempt_failure lost{kind::maybe_sent, 0, {}};
  attempt_failure refused{kind::not_sent, 0, {}};
  attempt_failure bad_cert{kind::permanent, 0, {}};

  CHECK(retry_delay(p, "GET", http500, 0, 0.0));
  CHECK(retry_delay(p, "PUT", lost, 0, 0.0));
  CHECK(retry_delay(p, "DELETE", refused, 0, 0.0));
  CHECK_FALSE(retry_delay(p, "GET", http501, 0, 0.0));
  CHECK_FALSE(retry_delay(p, "GET", http404, 0, 0.0));
  CHECK_FALSE(retry_delay(p, "GET", bad_cert, 0, 0.0));

  CHECK_FALSE(retry_delay(p, "POST", http500, 0, 0.0));
  CHECK_FALSE(retry_delay(p, "POST", lost, 0, 0.0));
  CHECK_FALSE(retry_delay(p, "PATCH", lost, 0, 0.0));
  CHECK(retry_delay(p, "POST", refused, 0, 0.0));
  CHECK(retry_delay(p, "POST", http429, 0, 0.0));

  CHECK_FALSE(retry_delay(p, "GET", http500, p.max_retries, 0.0));
}

TEST_CASE("back-off doubles from 100 ms up to its cap and Retry-After overrides it", "[retry]") {
  backoff_policy p;
  CHECK(backoff_delay(p, 0, 0.0) == 100ms);
  CHECK(backoff_delay(p, 1, 0.0) == 200ms);
  CHECK(backoff_delay(p, 3, 0.0) == 800ms);
  CHECK(backoff_delay(p, 20, 0.0) == 5000ms);
  CHECK(backoff_delay(p, 0, 0.999) < 121ms);
  CHECK(backoff_delay(p, 0, 0.999) > 100ms);

  attempt_failure busy{attempt_failure::kind::http_status, 429, std::chrono::seconds(3)};
  CHECK(retry_delay(p, "GET", busy, 0, 0.5) == 3000ms);
  CHECK(parse_retry_after(" 1 ") == std::chrono::seconds(1));
  CHECK_FALSE(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"));
}

TEST_CASE("the token bucket lets a burst through, then paces requests at qps", "[rate]") {
  auto t0 = token_bucket::clock::time_point{} + 1h;
  token_bucket b(10, 3, t0);
  CHECK(b.reserve(t0) == 0ms);
  CHECK(b.reserve(t0) == 0ms);
  CHECK(b.reserve(t0) == 0ms);
  // The fourth and fifth wait for refills, queued behind each other.
  CHECK(b.reserve(t0) == 100ms);
  CHECK(b.reserve(t0) == 200ms);
  // After a quiet second the bucket is full again, never above its burst.
  auto t1 = t0 + 10s;
  CHECK(b.tokens(t1) == Approx(3.0));
  token_bucket unlimited(0, 1, t0);
  for (int i = 0; i < 100; ++i) CHECK(unlimited.reserve(t0) == 0ms);
}

TEST_CASE("watch lines are reassembled across chunks and split when they share one", "[lines]") {
  line_splitter s;
  std::vector<std::string> lines;
  auto collect = [&](std::string_view l) {
    lines.emplace_back(l);
    return true;
  };
  s.feed(R"({"type":"ADDED","object":{"metadata":{"na)", collect);
  CHECK(lines.empty());
  s.feed("me\":\"a\"}}}\n{\"type\":\"DELETED\"}\r\n{\"type\":", collect);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})");
  CHECK(lines[1] == R"({"type":"DELETED"})");
  s.feed("\"MODIFIED\"}", collect);
  CHECK(lines.size() == 2);
  s.finish(collect);
  REQUIRE(lines.size() == 3);
  CHECK(lines[2] == R"({"type":"MODIFIED"})");
}

namespace {

// A LIST answer whose items hold what could mislead a splitter: braces, brackets, quotes and
// backslashes inside strings, a nested "items" key, an empty object, and a key after the items.
const std::string tricky_list =
    "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"42\",\"items\":\"not these\"},"
    "\"items\": [ {\"metadata\":{\"name\":\"a\",\"annotations\":{\"x\":\"}]{[\\\"\\\\\"}}},"
    "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"items\":[{\"k\":[1,2]},\"items\"]}} ,\n"
    "{}, {\"metadata\":{\"name\":\"c\\\\\"}} ],\"extra\":{\"continue\":\"\"}}";

struct split_result {
  std::vector<json::value> items;
  std::vector<std::size_t> counts;
  std::string rest;
};

// Feeds `text` in pieces of `piece` bytes to a splitter making batches of `batch_bytes`.
split_result split(const std::string& text, std::size_t piece, std::size_t batch_bytes) {
  split_result out;
  list_splitter s(
      [&](std::string batch, std::size_t count) {
        auto doc = json::parse(batch);
        REQUIRE(doc);
        const auto& items = doc->find("items")->as_array();
        CHECK(items.size() == count);
        out.items.insert(out.items.end(), items.begin(), items.end());
        out.counts.push_back(count);
      },
      batch_bytes);
  for (std::size_t at = 0; at < text.size(); at += piece)
    s.feed(std::string_view(text).substr(at, piece));
  out.rest = s.finish();
  return out;
}

} // namespace

TEST_CASE("a LIST answer is split into its items wherever its chunks end", "[lists]") {
  auto whole = json::parse(tricky_list);
  REQUIRE(whole);
  const auto& expected_items = whole->find("items")->as_array();
  for (std::size_t piece : {std::size_t(1), std::size_t(2), std::size_t(7), tricky_list.size()}) {
    INFO("pieces of " << piece << " bytes");
    auto got = split(tricky_list, piece, 1 << 20);
    REQUIRE(got.items.size() == 4);
    for (std::size_t i = 0; i < got.items.size(); ++i)
      CHECK(got.items[i] == expected_items[i]);
    CHECK(got.counts == std::vector<std::size_t>{4});
    // The rest is the answer without its items, still JSON, its metadata untouched.
    auto rest = json::parse(got.rest);
    REQUIRE(rest);
    CHECK(rest->find("items")->as_array().empty());
    CHECK(rest->find("metadata")->get_string("resourceVersion") == "42");
    CHECK(rest->find("metadata")->get_string("items") == "not these");
    CHECK(rest->find("extra") != nullptr);
  }
}

TEST_CASE("a LIST's items come in batches of about the size asked for", "[lists]") {
  std::string text = "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[";
  for (int i = 0; i < 100; ++i)
    text += (i ? "," : "") + std::string("{\"metadata\":{\"name\":\"pod-") + std::to_string(i) + "\"}}";
  text += "]}";
  auto got = split(text, 100, 300);
  REQUIRE(got.items.size() == 100);
  CHECK(got.items[99].find("metadata")->get_string("name") == "pod-99");
  CHECK(got.counts.size() > 5);
  CHECK(got.counts.size() < 20);
  // An empty list and an answer that is no list pass through whole.
  auto empty = split(R"({"kind":"PodList","metadata":{},"items":[]})", 3, 300);
  CHECK(empty.items.empty());
  CHECK(empty.rest == R"({"kind":"PodList","metadata":{},"items":[]})");
  auto other = split(R"({"kind":"Pod","metadata":{"name":"items"},"spec":{"items":[1]}})", 5, 300);
  CHECK(other.items.empty());
  CHECK(other.rest == R"({"kind":"Pod","metadata":{"name":"items"},"spec":{"items":[1]}})");
}

TEST_CASE("a Kubernetes Status body becomes the error's message, reason and code", "[errors]") {
  auto e = error_from_response(
      404, "Not Found",
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404})");
  CHECK(e.code == 404);
  CHECK(e.reason == "NotFound");
  CHECK(e.message == "pods \"nope\" not found");

  auto plain = error_from_response(502, "Bad Gateway", "upstream connect error\n");
  CHECK(plain.code == 502);
  CHECK(plain.message == "upstream connect error");

  auto empty = error_from_response(503, "Service Unavailable", "");
  CHECK(empty.message == "503 Service Unavailable");
  CHECK(empty.reason == "ServiceUnavailable");
}
