// The decoder's fast paths checked against the exact parsers (oracle tests on seeded random
// corpora), and the tape decoder checked against the tree decoder on awkward documents.
#include "k8s/json/value.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/detail/fast_scalars.hpp"
#include "k8s/model/watch.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <random>
#include <string>
#include <utility>

using namespace kozmo::k8s;
using kozmo::k8s::detail::parse_quantity_fast;
using kozmo::k8s::detail::parse_time_fast;

namespace {

std::string random_digits(std::mt19937& rng, int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += char('0' + rng() % 10);
  return s;
}

// Checks one quantity text: whatever the fast path accepts, the exact parser accepts with the
// same value, format and printed form. Returns whether the fast path took it.
bool fast_quantity_agrees(std::string_view text) {
  quantity fast;
  bool took = parse_quantity_fast(text, fast);
  auto exact = quantity::parse(text);
  if (!took)
    return false;
  INFO("quantity \"" << text << "\"");
  REQUIRE(exact.has_value());
  CHECK(fast.nanos() == exact->nanos());
  CHECK(fast.format() == exact->format());
  CHECK(fast.to_string() == exact->to_string());
  return true;
}

bool fast_time_agrees(const std::string& text) {
  time_point fast{};
  bool took = parse_time_fast(text, fast);
  auto exact = parse_time(text);
  INFO("time \"" << text << "\"");
  if (took) {
    REQUIRE(exact.has_value());
    CHECK(fast == *exact);
  } else if (text.size() == 20 && text.back() == 'Z') {
    // The canonical form is the fast path's whole job: it may only refuse what is invalid.
    CHECK_FALSE(exact.has_value());
  }
  return took;
}

std::string two(int v) { return std::string(1, char('0' + v / 10)) + char('0' + v % 10); }

} // namespace

TEST_CASE("the fast quantity path reads what the API server writes") {
  for (const char* text : {"0", "1", "8", "500m", "7500m", "32Gi", "64Gi", "512Mi", "100Ki", "2Ti", "1k", "4M", "3G",
                           "2T", "0Gi", "007", "999999999999999"})
    CHECK(fast_quantity_agrees(text));
  // Everything else is left to the exact parser.
  for (const char* text : {"", "1.5", "-1", "+1", "1e3", "1E", "2P", "1Pi", "1Ei", "5n", "5u", "Gi", "1Gb", "1 Gi",
                           "1000000000000000", "x"}) {
    quantity q;
    CHECK_FALSE(parse_quantity_fast(text, q));
  }
}

TEST_CASE("the fast quantity path agrees with the exact parser on random quantities") {
  static const char* suffixes[] = {"", "m", "k", "M", "G", "T", "P", "E", "n", "u", "Ki", "Mi", "Gi", "Ti",
                                   "Pi", "Ei", "e3", "E-2", "i", "K", "mi", "Gix", "GI"};
  std::mt19937 rng(20261121);
  int taken = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    if (rng() % 20 == 0)
      text += rng() % 2 ? '-' : '+';
    text += random_digits(rng, 1 + int(rng() % 9));
    if (rng() % 10 == 0)
      text += '.';
    text += random_digits(rng, int(rng() % 9));
    text += suffixes[rng() % std::size(suffixes)];
    taken += fast_quantity_agrees(text);
  }
  CHECK(taken > 5000); // the corpus does exercise the fast path
}

TEST_CASE("the fast timestamp path agrees with parse_time on random and broken timestamps") {
  std::mt19937 rng(42);
  int taken = 0;
  for (int i = 0; i < 20000; ++i) {
    int year = int(rng() % 10000);
    if (rng() % 4 == 0)
      year = std::array{1900, 2000, 2024, 2100, 1970, 1969}[rng() % 6];
    std::string text = two(year / 100) + two(year % 100);
    for (auto [sep, limit] : {std::pair{'-', 14}, {'-', 33}, {'T', 25}, {':', 61}, {':', 61}}) {
      text += sep;
      text += two(int(rng() % unsigned(limit)));
    }
    text += 'Z';
    if (rng() % 8 == 0) // a stray character anywhere
      text[rng() % text.size()] = "0Z-T:. /a"[rng() % 9];
    taken += fast_time_agrees(text);
  }
  CHECK(taken > 5000);
  for (const char* text : {"2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "1900-02-29T12:00:00Z",
                           "2000-02-29T23:59:59Z", "1970-01-01T00:00:00Z", "0000-03-01T00:00:00Z"})
    fast_time_agrees(text);
  // Fractions and offsets are the exact parser's.
  time_point t{};
  CHECK_FALSE(parse_time_fast("2026-11-21T20:01:26.5Z", t));
  CHECK_FALSE(parse_time_fast("2026-11-21T20:01:26+02:00", t));
}

TEST_CASE("the fast decoder agrees with the tree decoder on an awkward pod") {
  // Escapes in keys and values, nulls everywhere, repeated keys, unknown members of every
  // shape before and after known ones, quantities as JSON numbers, empty containers.
  const std::string text = R"json({
    "kind": "Pod", "apiVersion": "v1", "unknownTop": {"a": [1, 2.5, {"b": null}], "c": "\u00e9"},
    "metadata": {"name": "p\"q\\r", "na\u006de": "renamed", "labels": {"a\/b": "x\ny", "k": null, "k": "last"},
      "annotations": {}, "generation": 7, "finalizers": [], "ownerReferences": null,
      "creationTimestamp": "2024-02-29T23:59:59Z", "deletionTimestamp": "2026-11-21T20:01:26.123456789+02:00",
      "managedFields": [{"fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}}]},
    "spec": {"containers": [{"name": "c1", "big": 18446744073709551615, "resources": {
        "limits": {"cpu": 2, "memory": 1.5, "nvidia.com/gpu": "8", "x": "100Ki"}, "requests": null},
        "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}, {"name": "B", "value": ""}],
        "command": ["sh", "-c", "echo \"hi\" \ud83d\ude00"]}],
      "priority": -5, "nodeSelector": {"z": "1", "a": "2"}, "affinity": {"podAffinity": {"x": [true, false, null, -1, 1e300]}},
      "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": null}], "hostNetwork": true},
    "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}, {"other": 1}], "conditions": [],
      "containerStatuses": [{"name": "c1", "state": {"terminated": {"exitCode": -1, "finishedAt": null}},
        "lastState": {}, "restartCount": 2147483647, "started": false}]}
  })json";
  auto fast = decode_pod(text);
  REQUIRE(fast.has_value());
  auto tree = kozmo::json::parse(text);
  REQUIRE(tree.has_value());
  auto slow = from_json<pod>(*tree);
  REQUIRE(slow.has_value());
  CHECK(*fast == *slow);

  CHECK(fast->metadata.name == "renamed");
  CHECK(fast->metadata.labels.at("a/b") == "x\ny");
  CHECK(fast->metadata.labels.at("k") == "last");
  CHECK(fast->spec.containers[0].resources.limits.at("memory").to_string() == "1500m");
  CHECK(fast->spec.containers[0].command[2] == "echo \"hi\" \xF0\x9F\x98\x80");
  CHECK(fast->spec.priority == -5);
  CHECK(fast->status.container_statuses[0].restart_count == 2147483647);
  CHECK(fast->status.pod_ips == std::vector<std::string>{"10.0.0.1", ""});
}

TEST_CASE("a watch line's bad value is reported with its path from the event") {
  auto bad = decode_watch_event<pod>(
      R"({"type":"MODIFIED","object":{"kind":"Pod","spec":{"containers":[{"name":"a","env":[{"name":5}]}]}}})");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.err().message == "object.spec.containers[0].env[0].name: expected a string, found a number");

  auto fraction = decode_watch_event<pod>(R"({"type":"ADDED","object":{"kind":"Pod","spec":{"priority":1.5}}})");
  REQUIRE_FALSE(fraction.has_value());
  CHECK(fraction.err().message == "object.spec.priority: expected an integer, found 1.5");

  auto truncated = decode_watch_event<pod>(R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"x"}})");
  REQUIRE_FALSE(truncated.has_value());
  CHECK(truncated.err().message.starts_with("json parse error: "));
}
