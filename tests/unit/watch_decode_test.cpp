#include "k8s/json/value.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/time.hpp"
#include "k8s/model/watch.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

using namespace kozmo::k8s;

namespace {

time_point at(std::string_view rfc3339) {
  auto t = parse_time(rfc3339);
  REQUIRE(t.has_value());
  return *t;
}

} // namespace

TEST_CASE("watch lines of every type decode with their resourceVersion") {
  auto added = decode_watch_event<pod>(
      R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"pw2","namespace":"wire-a","resourceVersion":"417","creationTimestamp":"2026-11-21T19:59:00Z"},"spec":{"containers":[{"name":"c","image":"busybox"}]},"status":{"phase":"Pending"}}})");
  REQUIRE(added.has_value());
  CHECK(added->type == watch_event_type::added);
  CHECK(added->kind == "Pod");
  CHECK(added->resource_version == "417");
  CHECK(added->object.metadata.name == "pw2");
  CHECK(added->object.status.phase == "Pending");
  CHECK_FALSE(added->status.has_value());

  auto modified = decode_watch_event<pod>(
      R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"pw2","resourceVersion":"419","deletionTimestamp":"2026-11-21T19:59:20Z","deletionGracePeriodSeconds":0,"labels":{"app":"demo","x":"1"}},"spec":{},"status":{}}})");
  REQUIRE(modified.has_value());
  CHECK(modified->type == watch_event_type::modified);
  CHECK(modified->object.metadata.deletion_timestamp == at("2026-11-21T19:59:20Z"));
  CHECK(modified->object.metadata.deletion_grace_period_seconds == 0);
  CHECK(modified->object.metadata.labels.size() == 2);

  auto deleted = decode_watch_event<pod>(
      R"({"type":"DELETED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"pw2","resourceVersion":"420"}}})");
  REQUIRE(deleted.has_value());
  CHECK(deleted->type == watch_event_type::deleted);
  CHECK(deleted->resource_version == "420");

  auto bookmark = decode_watch_event<pod>(
      R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"422","creationTimestamp":null},"spec":{"containers":null},"status":{}}})");
  REQUIRE(bookmark.has_value());
  CHECK(bookmark->type == watch_event_type::bookmark);
  CHECK(bookmark->resource_version == "422");
  CHECK_FALSE(bookmark->object.metadata.creation_timestamp.has_value());
  CHECK(bookmark->object.spec.containers.empty());

  auto gone = decode_watch_event<pod>(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (369)","reason":"Expired","code":410}})json");
  REQUIRE(gone.has_value());
  CHECK(gone->type == watch_event_type::error);
  CHECK(gone->kind == "Status");
  REQUIRE(gone->status.has_value());
  CHECK(gone->status->code == 410);
  CHECK(gone->status->reason == "Expired");
  CHECK(gone->status->is_gone());
  CHECK(gone->status->to_error().message == "too old resource version: 1 (369)");
  CHECK(gone->resource_version.empty());
}

TEST_CASE("a watch line is decoded whatever the order of its members") {
  auto r = decode_watch_event<node>(
      R"({"object":{"metadata":{"resourceVersion":"7","name":"n1"},"status":{"capacity":{"nvidia.com/gpu":"4"}},"apiVersion":"v1","kind":"Node"},"type":"MODIFIED"})");
  REQUIRE(r.has_value());
  CHECK(r->type == watch_event_type::modified);
  CHECK(r->kind == "Node");
  CHECK(r->resource_version == "7");
  CHECK(r->object.status.capacity.at("nvidia.com/gpu").value() == 4);
}

TEST_CASE("the untyped watch decoder picks the model from apiVersion and kind") {
  auto p = decode_watch_event(
      R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","resourceVersion":"444"},"spec":{"containers":[{"name":"a"},{"name":"b"}]}}})");
  REQUIRE(p.has_value());
  REQUIRE(std::holds_alternative<pod>(p->object));
  CHECK(std::get<pod>(p->object).spec.containers.size() == 2);
  CHECK(p->resource_version == "444");
  CHECK(p->api_version == "v1");
  CHECK(p->kind == "Pod");

  auto l = decode_watch_event(
      R"({"type":"MODIFIED","object":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"kozmo","namespace":"kube-system","resourceVersion":"55"},"spec":{"holderIdentity":"kozmo-0","leaseDurationSeconds":15,"acquireTime":"2026-11-21T20:00:00.000000Z","renewTime":"2026-11-21T20:00:10.250000Z","leaseTransitions":2}}})");
  REQUIRE(l.has_value());
  REQUIRE(std::holds_alternative<lease>(l->object));
  const auto& ls = std::get<lease>(l->object).spec;
  CHECK(ls.holder_identity == "kozmo-0");
  CHECK(ls.lease_duration_seconds == 15);
  CHECK(ls.renew_time == at("2026-11-21T20:00:10.25Z"));
  CHECK(ls.lease_transitions == 2);
  // MicroTime: nanoseconds a writer sent are dropped, so the lease writes back as it was read
  // (found by fuzzing: tests/fuzz/corpus/models/crash-lease-micro-time-nanoseconds.json).
  auto fine = decode_watch_event(
      R"({"type":"MODIFIED","object":{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"kozmo"},"spec":{"renewTime":"2026-11-21T20:00:10.112234567Z"}}})");
  REQUIRE(fine.has_value());
  CHECK(std::get<lease>(fine->object).spec.renew_time == at("2026-11-21T20:00:10.112234Z"));
  // metav1.Time: a fraction is dropped, as the time is written (tests/fuzz/corpus/models/crash-time-fraction.json).
  auto half = decode_watch_event(
      R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","creationTimestamp":"2026-11-21T20:00:10.5+01:00"}}})");
  REQUIRE(half.has_value());
  CHECK(std::get<pod>(half->object).metadata.creation_timestamp == at("2026-11-21T19:00:10Z"));

  auto cr = decode_watch_event(
      R"({"type":"ADDED","object":{"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"train","namespace":"wire-a","resourceVersion":"77","uid":"0a1b2c3d"},"spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1}}}}})");
  REQUIRE(cr.has_value());
  REQUIRE(std::holds_alternative<custom_object>(cr->object));
  const auto& job = std::get<custom_object>(cr->object);
  CHECK(job.kind == "PyTorchJob");
  CHECK(job.api_version == "kubeflow.org/v1");
  CHECK(job.metadata.uid == "0a1b2c3d");
  CHECK(job.document.at_path({"spec", "pytorchReplicaSpecs", "Master"})->get_int("replicas") == 1);
  CHECK(cr->resource_version == "77");

  // An Event of another group is not a core/v1 Event.
  auto other = decode_watch_event(
      R"({"type":"ADDED","object":{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e","resourceVersion":"3"},"note":"x"}})");
  REQUIRE(other.has_value());
  CHECK(std::holds_alternative<custom_object>(other->object));

  auto err = decode_watch_event(
      R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (369)","reason":"Expired","code":410}})json");
  REQUIRE(err.has_value());
  REQUIRE(std::holds_alternative<api_status>(err->object));
  CHECK(std::get<api_status>(err->object).code == 410);
}

TEST_CASE("broken watch lines are errors, not empty events") {
  CHECK_FALSE(decode_watch_event<pod>(R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"x")").has_value());
  auto unknown = decode_watch_event<pod>(R"({"type":"CHANGED","object":{"kind":"Pod"}})");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.err().message == "type: unknown watch event type \"CHANGED\"");
  auto no_type = decode_watch_event<pod>(R"({"object":{"kind":"Pod"}})");
  REQUIRE_FALSE(no_type.has_value());
  CHECK(no_type.err().message == "watch event without a type");
  CHECK_FALSE(decode_watch_event<pod>("").has_value());
}

TEST_CASE("list responses decode with their resourceVersion and continue token") {
  auto list = decode_list<pod>(
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"442","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ","remainingItemCount":3},
          "items":[{"metadata":{"name":"p1","resourceVersion":"440"},"spec":{"nodeName":"n1"}},
                   {"metadata":{"name":"p2","resourceVersion":"441"},"status":{"phase":"Running"}}]})");
  REQUIRE(list.has_value());
  CHECK(list->resource_version == "442");
  CHECK(list->continue_token == "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ");
  CHECK(list->remaining_item_count == 3);
  REQUIRE(list->items.size() == 2);
  CHECK(list->items[0].spec.node_name == "n1");
  CHECK(list->items[1].status.phase == "Running");

  auto bad = decode_list<node>(R"({"items":[{},{"status":{"capacity":{"cpu":"x"}}}]})");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.err().message.starts_with("items[1].status.capacity[cpu]: quantity \"x\" is invalid"));
}

TEST_CASE("map keys come out in order whatever order the line gives them, the last repeat winning") {
  auto ev = decode_watch_event<pod>(
      R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p",
          "labels":{"zeta":"1","alpha":"2","mid":"3","alpha":"4"}},
          "spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"2","memory":"32Gi","cpu":"8"}}}]}}})");
  REQUIRE(ev.has_value());
  auto& labels = ev->object.metadata.labels;
  std::vector<std::string> keys;
  for (auto& [k, v] : labels)
    keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"alpha", "mid", "zeta"});
  CHECK(labels.at("alpha") == "4");
  auto& limits = ev->object.spec.containers.at(0).resources.limits;
  REQUIRE(limits.size() == 3);
  CHECK(limits.begin()->first == "cpu");
  CHECK(limits.at("memory") == quantity::parse("32Gi").value());
  CHECK(limits.at("nvidia.com/gpu").value() == 2);

  // The same through the tree decoder.
  auto tree = from_json<pod>(to_json(ev->object));
  REQUIRE(tree.has_value());
  CHECK(tree->metadata.labels == labels);

  auto bad = decode_watch_event<pod>(
      R"({"type":"ADDED","object":{"kind":"Pod","spec":{"containers":[{"resources":{"limits":{"memory":"1Gi","cpu":"lots"}}}]}}})");
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.err().message.starts_with("object.spec.containers[0].resources.limits[cpu]: quantity \"lots\" is invalid"));
}

TEST_CASE("an env var's valueFrom decodes when present and stays empty when absent or null") {
  auto ev = decode_watch_event<pod>(
      R"({"type":"ADDED","object":{"kind":"Pod","spec":{"containers":[{"name":"c","env":[
          {"name":"A","value":"1"},
          {"name":"B","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.name"}}},
          {"name":"C","valueFrom":null}]}]}}})");
  REQUIRE(ev.has_value());
  auto& env = ev->object.spec.containers.at(0).env;
  REQUIRE(env.size() == 3);
  CHECK_FALSE(env[0].value_from.has_value());
  REQUIRE(env[1].value_from.has_value());
  CHECK(env[1].value_from->field_ref->field_path == "metadata.name");
  CHECK_FALSE(env[2].value_from);
  auto copy = env; // copies are deep
  copy[1].value_from->field_ref->field_path = "metadata.namespace";
  CHECK(env[1].value_from->field_ref->field_path == "metadata.name");
  CHECK(copy != env);
}

// The decoder parses a line in place when simdjson's read-ahead stays inside the line's last
// page, and copies it otherwise: a line that ends right before an unreadable page must decode
// (no read past it), and so must one in the middle of a page.
TEST_CASE("a watch line decodes wherever it lies, even right before an unmapped page") {
  const std::string line =
      R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"edge","resourceVersion":"7"},"spec":{},"status":{"phase":"Running"}}})";
  const long page = sysconf(_SC_PAGESIZE);
  void* mem = mmap(nullptr, static_cast<std::size_t>(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(mem != MAP_FAILED);
  char* base = static_cast<char*>(mem);
  REQUIRE(mprotect(base + page, static_cast<std::size_t>(page), PROT_NONE) == 0);
  for (std::size_t gap : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{1000}}) {
    char* at = base + page - static_cast<long>(line.size() + gap);
    std::memcpy(at, line.data(), line.size());
    auto ev = decode_watch_event<pod>(std::string_view(at, line.size()));
    INFO("bytes left in the page after the line: " << gap);
    REQUIRE(ev.has_value());
    CHECK(ev->object.metadata.name == "edge");
    CHECK(ev->object.status.phase == "Running");
  }
  munmap(mem, static_cast<std::size_t>(2 * page));
}

// bench/data's stream was recorded from a real kube-apiserver v1.20.2 (bench/record_watch_stream.sh):
// every line must decode, and the fast path (simdjson's tape) must give the same pod as the
// tree decoder the embedded server uses.
TEST_CASE("every event of a pod watch stream recorded from kube-apiserver v1.20.2 decodes, both ways alike") {
  const char* path = std::getenv("KOZMO_RECORDED_POD_STREAM");
  if (!path)
    FAIL("KOZMO_RECORDED_POD_STREAM is not set; run through `meson test`");
  FILE* in = popen(("xz -dc '" + std::string(path) + "'").c_str(), "r");
  REQUIRE(in != nullptr);
  std::string text;
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, in)) > 0;)
    text.append(buf, n);
  REQUIRE(pclose(in) == 0);
  std::size_t lines = 0, running = 0, with_env = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos)
      end = text.size();
    std::string_view line(text.data() + at, end - at);
    at = end + 1;
    if (line.empty())
      continue;
    ++lines;
    INFO("line " << lines);
    auto fast = decode_watch_event<pod>(line);
    REQUIRE(fast.has_value());
    auto tree = kozmo::json::parse(line);
    REQUIRE(tree.has_value());
    auto slow = from_json<pod>(*tree->find("object"));
    REQUIRE(slow.has_value());
    CHECK(fast->object == *slow);
    CHECK(fast->resource_version == slow->metadata.resource_version);
    CHECK_FALSE(fast->object.metadata.uid.empty());
    running += fast->object.status.phase == "Running";
    with_env += !fast->object.spec.containers.empty() && !fast->object.spec.containers[0].env.empty();
  }
  CHECK(lines > 2000);
  CHECK(running > 100);
  CHECK(with_env == lines); // the training controller's MASTER_ADDR, WORLD_SIZE, RANK...
}

TEST_CASE("another scheduler's pods decode with what is counted of them and nothing more") {
  const std::string pod_json =
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"theirs","namespace":"ml","uid":"u-1","resourceVersion":"51","labels":{"app":"x"},"annotations":{"a":"b"}},)"
      R"("spec":{"nodeName":"node-7","schedulerName":"default-scheduler","priority":100,)"
      R"("initContainers":[{"name":"init","image":"busybox","env":[{"name":"E","value":"v"}],"resources":{"limits":{"nvidia.com/gpu":"4"}}}],)"
      R"("containers":[{"name":"main","image":"trainer:1","command":["python"],"env":[{"name":"E","value":"v"}],"resources":{"limits":{"nvidia.com/gpu":"2","cpu":"4"},"requests":{"cpu":"2"}}}],)"
      R"("tolerations":[{"key":"k","operator":"Exists"}],"nodeSelector":{"gpu":"a100"}},)"
      R"("status":{"phase":"Running","podIP":"10.0.0.7","conditions":[{"type":"Ready","status":"True"}]}})";
  auto check_counted = [](const pod& p) {
    CHECK(p.metadata.name == "theirs");
    CHECK(p.metadata.namespace_ == "ml");
    CHECK(p.metadata.uid == "u-1");
    CHECK(p.metadata.resource_version == "51");
    CHECK(p.metadata.annotations.size() == 1);
    CHECK(p.spec.node_name == "node-7");
    CHECK(p.spec.scheduler_name == "default-scheduler");
    CHECK(p.spec.priority == 100);
    REQUIRE(p.spec.containers.size() == 1);
    CHECK(p.spec.containers[0].name == "main");
    CHECK(p.spec.containers[0].resources.limits.size() == 2);
    CHECK(p.spec.containers[0].resources.requests.size() == 1);
    REQUIRE(p.spec.init_containers.size() == 1);
    CHECK(p.spec.init_containers[0].resources.limits.size() == 1);
    CHECK(p.status.phase == "Running");
    // What the count does not need stays empty.
    CHECK(p.spec.containers[0].image.empty());
    CHECK(p.spec.containers[0].env.empty());
    CHECK(p.spec.containers[0].command.empty());
    CHECK(p.spec.init_containers[0].env.empty());
    CHECK(p.spec.tolerations.empty());
    CHECK(p.spec.node_selector.empty());
    CHECK(p.status.conditions.empty());
    CHECK(p.status.pod_ip.empty());
  };
  auto event = decode_counted_pod_event(R"({"type":"MODIFIED","object":)" + pod_json + "}");
  REQUIRE(event.has_value());
  CHECK(event->type == watch_event_type::modified);
  CHECK(event->resource_version == "51");
  check_counted(event->object);

  auto list = decode_counted_pod_list(R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"60","continue":"c2"},"items":[)" +
                                      pod_json + "," + pod_json + "]}");
  REQUIRE(list.has_value());
  CHECK(list->resource_version == "60");
  CHECK(list->continue_token == "c2");
  REQUIRE(list->items.size() == 2);
  check_counted(list->items[1]);

  // A Status on the stream (410 Expired) is read as one, and a broken line is an error.
  auto expired = decode_counted_pod_event(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410}})");
  REQUIRE(expired.has_value());
  REQUIRE(expired->status.has_value());
  CHECK(expired->status->code == 410);
  CHECK_FALSE(decode_counted_pod_event(R"({"type":"ADDED","object":{"spec":{"containers":[{)").has_value());
}
