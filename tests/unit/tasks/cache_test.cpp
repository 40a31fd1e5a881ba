// The output cache's pure core (actors/tasks/cache.hpp): keys, and reservations with the peer's
// expiry (heartbeat x 3).
#include "actors/tasks/cache.hpp"
#include "fixture.hpp"

using namespace tasks_test;

namespace {

task_spec spec_of(const std::string& spec_json) {
  auto task = make_task("c", spec_json);
  auto spec = decode_task(task, {"container", "pod", "pytorch"});
  INFO((spec ? "" : spec.err().message));
  REQUIRE(spec.has_value());
  return *spec;
}

std::string cached(const std::string& image = "busybox:1.36", const std::string& version = "1",
                   const std::string& args = R"(["-c","tr a-z A-Z"])", const std::string& extra = "") {
  return R"({"type":"container","container":{"image":")" + image + R"(","command":["sh"],"args":)" + args +
         R"(},"cache":{"enabled":true,"version":")" + version + R"("})" + extra + "}";
}

} // namespace

TEST_CASE("sha256_hex matches the published test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("the same inputs in another order give the same key") {
  auto spec = spec_of(cached());
  std::map<std::string, std::string> a{{"text", "d1"}, {"model", "d2"}};
  std::map<std::string, std::string> b;
  b.emplace("model", "d2");
  b.emplace("text", "d1");
  CHECK(cache_key(spec, a) == cache_key(spec, b));
  // ... and the order spec.inputs or the job's keys were written in does not matter either.
  auto job1 = spec_of(R"({"type":"pytorch","job":{"runPolicy":{"backoffLimit":1},"pytorchReplicaSpecs":{}},
                          "cache":{"enabled":true,"version":"1"}})");
  auto job2 = spec_of(R"({"type":"pytorch","job":{"pytorchReplicaSpecs":{},"runPolicy":{"backoffLimit":1}},
                          "cache":{"enabled":true,"version":"1"}})");
  CHECK(cache_key(job1, {}) == cache_key(job2, {}));
}

TEST_CASE("a changed image, argument, version or input content gives another key") {
  std::map<std::string, std::string> in{{"text", "d1"}};
  auto base = cache_key(spec_of(cached()), in);
  CHECK(base.size() == 64);
  CHECK(cache_key(spec_of(cached("busybox:1.37")), in) != base);
  CHECK(cache_key(spec_of(cached("busybox:1.36", "2")), in) != base);
  CHECK(cache_key(spec_of(cached("busybox:1.36", "1", R"(["-c","tr A-Z a-z"])")), in) != base);
  CHECK(cache_key(spec_of(cached()), {{"text", "d2"}}) != base);
  CHECK(cache_key(spec_of(cached()), {{"other", "d1"}}) != base);
  // What does not change the outputs is not part of the key.
  CHECK(cache_key(spec_of(cached("busybox:1.36", "1", R"(["-c","tr a-z A-Z"])", R"(,"retries":3)")), in) == base);
  CHECK(cache_key(spec_of(cached("busybox:1.36", "1", R"(["-c","tr a-z A-Z"])",
                                 R"(,"resources":{"limits":{"memory":"1Gi"}})")),
                  in) == base);
}

TEST_CASE("spec.cache: on only when enabled, a version required, bad values named") {
  CHECK_FALSE(spec_of(R"({"type":"container","container":{"image":"x"},"cache":{"enabled":false}})").cache);
  auto s = spec_of(R"({"type":"container","container":{"image":"x"},
                       "cache":{"enabled":true,"version":"v3","serializable":true}})");
  REQUIRE(s.cache);
  CHECK(s.cache->version == "v3");
  CHECK(s.cache->serializable);
  auto message = [](const std::string& cache) {
    auto task = make_task("c", R"({"type":"container","container":{"image":"x"},"cache":)" + cache + "}");
    auto spec = decode_task(task, {"container"});
    return spec ? std::string("accepted") : spec.err().message;
  };
  CHECK(message(R"({"enabled":true})").rfind("spec.cache.version: Required value", 0) == 0);
  CHECK(message(R"({"enabled":"yes"})") == "spec.cache.enabled: Invalid value: \"yes\": must be true or false");
  CHECK(message(R"(true)").rfind("spec.cache: Invalid value", 0) == 0);
}

TEST_CASE("a reservation is taken when free, extended by its owner, and waited for by others") {
  const auto hb = std::chrono::milliseconds(10000);
  auto first = reserve(std::nullopt, "a-0", t0(), hb);
  CHECK(first.held);
  CHECK(first.changed);
  CHECK(first.reservation == cache_reservation{"a-0", t0() + 30s}); // heartbeat x 3

  auto other = reserve(first.reservation, "b-0", t0() + 5s, hb);
  CHECK_FALSE(other.held);
  CHECK_FALSE(other.changed);
  CHECK(other.reservation.owner == "a-0");

  auto extended = reserve(first.reservation, "a-0", t0() + 10s, hb);
  CHECK(extended.held);
  CHECK(extended.reservation.expires_at == t0() + 40s);

  // The holder stopped heartbeating (its controller died): past the expiry another takes over.
  CHECK_FALSE(reserve(extended.reservation, "b-0", t0() + 39s, hb).held);
  auto taken = reserve(extended.reservation, "b-0", t0() + 40s, hb);
  CHECK(taken.held);
  CHECK(taken.reservation.owner == "b-0");
}

TEST_CASE("only the owner releases a reservation") {
  cache_reservation r{"a-0", t0() + 30s};
  CHECK(may_release(r, "a-0"));
  CHECK_FALSE(may_release(r, "b-0"));
  CHECK_FALSE(may_release(std::nullopt, "a-0"));
  // One owner per task: a retried attempt keeps its place.
  CHECK(reservation_owner("uid-1") == "taskexecution/uid-1");
}

TEST_CASE("cache operations on a stored entry: reserve, store, release, lookup") {
  const auto hb = std::chrono::milliseconds(10000);
  cache_op_args a{cache_op::reserve, "k1", "sig", "taskexecution/a", t0(), hb, false, {}};
  auto first = apply_cache_op(std::nullopt, a);
  REQUIRE(first.entry);
  CHECK(first.write); // created with the reservation
  CHECK(first.entry->key == "k1");
  CHECK(first.entry->signature == "sig");
  CHECK(holds_reservation(first.entry, "taskexecution/a", t0()));
  CHECK_FALSE(holds_reservation(first.entry, "taskexecution/a", t0() + 30s)); // expired

  auto b = a;
  b.owner = "taskexecution/b";
  auto second = apply_cache_op(first.entry, b);
  CHECK_FALSE(second.write);
  CHECK_FALSE(holds_reservation(second.entry, "taskexecution/b", t0()));

  // A release by someone else changes nothing; the holder's lets the waiting ones go on.
  auto wrong = b;
  wrong.op = cache_op::release;
  CHECK_FALSE(apply_cache_op(first.entry, wrong).write);
  auto rel = a;
  rel.op = cache_op::release;
  auto released = apply_cache_op(first.entry, rel);
  CHECK(released.write);
  CHECK(released.notify);
  CHECK_FALSE(released.entry->reservation);

  // Stored outputs end the reservation and are what a later reserve or lookup finds (no new
  // reservation: it is a hit), unless the asker overwrites.
  auto st = a;
  st.op = cache_op::store;
  st.outputs = {"s3://b/out/", "ml/a", "a", t0() + 5s};
  auto stored = apply_cache_op(first.entry, st);
  CHECK(stored.write);
  CHECK(stored.notify);
  REQUIRE(stored.entry->outputs);
  CHECK(stored.entry->outputs->location == "s3://b/out/");
  CHECK_FALSE(stored.entry->reservation);
  auto hit = apply_cache_op(stored.entry, b);
  CHECK_FALSE(hit.write);
  CHECK(hit.entry->outputs);
  auto over = b;
  over.overwrite = true;
  auto recompute = apply_cache_op(stored.entry, over);
  CHECK(recompute.write);
  CHECK(holds_reservation(recompute.entry, "taskexecution/b", t0()));
  auto look = a;
  look.op = cache_op::lookup;
  CHECK_FALSE(apply_cache_op(std::nullopt, look).entry);
  CHECK_FALSE(apply_cache_op(std::nullopt, look).write);
}

TEST_CASE("a cache entry survives its trip through the API server's JSON") {
  cache_entry e{"abc", "type=container\n", cache_outputs{"file:///tmp/out/", "ml/t1", "uid-1", t0()},
                cache_reservation{"taskexecution/uid-2", t0() + 30s}};
  auto obj = cache_entry_to_json(e, "ml");
  CHECK(obj.get_string("kind") == "TaskCacheEntry");
  CHECK(obj.at_path({"metadata", "name"})->as_string() == "tx-abc");
  CHECK(obj.at_path({"metadata", "namespace"})->as_string() == "ml");
  CHECK(cache_entry_from_json(obj) == e);
  CHECK(cache_entry_from_json(parse_json(R"({"spec":{"key":"k"}})")) == cache_entry{"k", "", std::nullopt, std::nullopt});
}
