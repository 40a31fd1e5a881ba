// Pods in protobuf as a real kube-apiserver v1.20.2 sends them (tests/unit/data/protobuf,
// recorded by record.sh there): the counted-pod decoder reads the same pods as from the JSON of
// the same list, the LIST splitter hands them over in batches wherever the bytes are cut, and a
// Status in protobuf becomes the error a user reads.
#include "k8s/client/protobuf_list_splitter.hpp"
#include "k8s/client/status_error.hpp"
#include "k8s/model/watch.hpp"
#include "k8s/protobuf_wire.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace kozmo;
namespace proto = kozmo::k8s::protobuf;

namespace {

std::string fixture(const std::string& name) {
  const char* dir = std::getenv("KOZMO_PROTOBUF_FIXTURES");
  REQUIRE(dir != nullptr);
  std::ifstream in(std::string(dir) + "/" + name, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const k8s::pod* by_name(const std::vector<k8s::pod>& pods, std::string_view prefix) {
  for (auto& p : pods)
    if (p.metadata.name.starts_with(prefix))
      return &p;
  return nullptr;
}

// Feeds `body` to a splitter in pieces of `step` and 1 bytes in turn (so that the cuts fall at
// many offsets: inside keys, lengths and items) and decodes what it hands over.
struct split_result {
  std::vector<k8s::pod> items;
  std::size_t batches = 0;
  std::size_t counted = 0;
  std::string rest;
};
split_result split(std::string_view body, std::size_t step, std::size_t batch_bytes) {
  split_result out;
  client::protobuf_list_splitter s(
      [&](std::string batch, std::size_t count) {
        ++out.batches;
        out.counted += count;
        auto decoded = k8s::decode_counted_pod_list_protobuf(batch);
        REQUIRE(decoded);
        CHECK(decoded->resource_version.empty());
        for (auto& p : decoded->items)
          out.items.push_back(std::move(p));
      },
      batch_bytes);
  std::size_t pos = 0;
  bool small = false;
  while (pos < body.size()) {
    std::size_t n = std::min(small ? std::size_t{1} : step, body.size() - pos);
    s.feed(body.substr(pos, n));
    pos += n;
    small = !small;
  }
  out.rest = s.finish();
  return out;
}

// One recorded list read from its JSON (STEM.json) and from its protobuf (STEM.pb).
struct both_forms {
  k8s::object_list<k8s::pod> from_json, from_proto;
};
both_forms read_both(const std::string& stem) {
  auto from_json = k8s::decode_counted_pod_list(fixture(stem + ".json"));
  auto from_proto = k8s::decode_counted_pod_list_protobuf(fixture(stem + ".pb"));
  REQUIRE(from_json);
  REQUIRE(from_proto);
  return {std::move(*from_json), std::move(*from_proto)};
}

} // namespace

TEST_CASE("a PodList in protobuf decodes to the same counted pods as its JSON", "[protobuf]") {
  auto [json, proto] = read_both("pods");
  REQUIRE(proto.items.size() == 2);
  CHECK(proto.resource_version == json.resource_version);
  CHECK_FALSE(proto.resource_version.empty());
  CHECK(proto.items == json.items);

  // What the scheduler counts, spelled out.
  const k8s::pod* bound = by_name(proto.items, "gpu-bound");
  REQUIRE(bound);
  CHECK(bound->spec.node_name == "gpu-node-7");
  CHECK(bound->spec.scheduler_name == "other-scheduler");
  CHECK(bound->spec.priority == -5); // a negative int32: ten bytes on the wire
  CHECK(bound->status.phase == "Running");
  REQUIRE(bound->spec.containers.size() == 2);
  CHECK(bound->spec.containers[0].resources.requests.at("nvidia.com/gpu") == k8s::quantity::from_int(2));
  CHECK(bound->spec.containers[0].resources.requests.at("cpu") == k8s::quantity::from_milli(500));
  CHECK(bound->spec.containers[0].resources.limits.at("memory") == *k8s::quantity::parse("1.5Gi"));
  CHECK(bound->spec.containers[1].resources.requests.at("cpu") == k8s::quantity::from_milli(100));
  REQUIRE(bound->spec.init_containers.size() == 1);
  CHECK(bound->spec.init_containers[0].resources.requests.at("cpu") == k8s::quantity::from_int(1));
  CHECK(bound->metadata.labels.at("tier") == "gpu");
  CHECK(bound->metadata.annotations.at("kozmo.io/note") == "two GPUs, bound by hand");
  REQUIRE(bound->metadata.controller_ref());
  CHECK(bound->metadata.controller_ref()->kind == "PyTorchJob");
  CHECK(bound->metadata.deletion_timestamp.has_value());
  CHECK(bound->metadata.deletion_grace_period_seconds == 30);
  // Only what is counted: the rest of the pod stays empty, as from JSON.
  CHECK(bound->spec.containers[0].image.empty());
  CHECK(bound->spec.restart_policy.empty());

  const k8s::pod* finalized = by_name(proto.items, "finalized-");
  REQUIRE(finalized);
  CHECK(finalized->metadata.finalizers == std::vector<std::string>{"kozmo.io/test"});
  CHECK(finalized->metadata.generate_name == "finalized-");
  CHECK(finalized->spec.node_name.empty());
  CHECK(finalized->status.phase == "Pending");
}

TEST_CASE("a page in protobuf keeps its continue token and remaining count", "[protobuf]") {
  auto [json, proto] = read_both("page");
  CHECK(proto.items.size() == 1);
  CHECK_FALSE(proto.continue_token.empty());
  CHECK(proto.continue_token == json.continue_token);
  CHECK(proto.remaining_item_count == 1);
  CHECK(proto.items == json.items);
}

TEST_CASE("a protobuf LIST is split into its items wherever the bytes are cut", "[protobuf]") {
  const std::string body = fixture("pods.pb");
  auto whole = k8s::decode_counted_pod_list_protobuf(body);
  REQUIRE(whole);
  for (std::size_t step : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{64},
                           std::size_t{1000}, body.size()}) {
    for (std::size_t batch_bytes : {std::size_t{1}, std::size_t{256} * 1024}) {
      CAPTURE(step, batch_bytes);
      auto got = split(body, step, batch_bytes);
      CHECK(got.items == whole->items);
      CHECK(got.counted == 2);
      CHECK(got.batches == (batch_bytes == 1 ? 2u : 1u));
      // The rest: the list's metadata in its envelope, no items.
      auto rest = k8s::decode_counted_pod_list_protobuf(got.rest);
      REQUIRE(rest);
      CHECK(rest->items.empty());
      CHECK(rest->resource_version == whole->resource_version);
      CHECK(proto::open_envelope(got.rest)->kind == "PodList");
    }
  }
}

TEST_CASE("a cut-off or foreign protobuf answer is refused, not read as an empty list", "[protobuf]") {
  const std::string body = fixture("pods.pb");
  // Cut anywhere but at the end: the splitter's rest is empty, which no decoder takes.
  for (std::size_t cut : {std::size_t{2}, std::size_t{10}, body.size() / 2, body.size() - 1}) {
    CAPTURE(cut);
    auto got = split(body.substr(0, cut), 5, 1);
    CHECK(got.rest.empty());
    CHECK_FALSE(k8s::decode_counted_pod_list_protobuf(got.rest));
    auto direct = k8s::decode_counted_pod_list_protobuf(body.substr(0, cut));
    CHECK_FALSE(direct);
  }
  CHECK(split("{\"items\":[]}", 4, 1).rest.empty());
  // Another kind in the envelope.
  std::string other = body;
  auto at = other.find("PodList");
  REQUIRE(at != std::string::npos);
  other.replace(at, 7, "NodeLis");
  auto foreign = k8s::decode_counted_pod_list_protobuf(other);
  REQUIRE_FALSE(foreign);
  CHECK(foreign.err().message.find("NodeLis") != std::string::npos);
}

TEST_CASE("a pod whose quantity the model cannot read is skipped and named", "[protobuf]") {
  std::string body = fixture("pods.pb");
  // The Quantity {1: "500m"} (cpu of gpu-bound's main container; the annotation kubectl apply
  // leaves holds the text too, as JSON) becomes "5x0m": same length, no re-encoding.
  auto at = body.find(std::string_view("\x0a\x04" "500m", 6));
  REQUIRE(at != std::string::npos);
  body[at + 3] = 'x';
  std::vector<std::string> skipped;
  auto out = k8s::decode_counted_pod_list_protobuf(body, &skipped);
  REQUIRE(out);
  REQUIRE(out->items.size() == 1);
  CHECK(out->items[0].metadata.name.starts_with("finalized-"));
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].find("proto-fixture/gpu-bound") != std::string::npos);
  CHECK(skipped[0].find("cpu") != std::string::npos);
}

TEST_CASE("a Status in protobuf gives the server's message, reason and code", "[protobuf]") {
  auto e = client::error_from_response(404, "Not Found", fixture("status-404.pb"));
  CHECK(e.code == 404);
  CHECK(e.reason == "NotFound");
  CHECK(e.message == "pods \"nope\" not found");
}
