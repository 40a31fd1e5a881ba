// Leader election's rules (actors/controller/leader_election.hpp), as client-go's
// leaderelection package has them: who may take a Lease, what a taker and a renewal write, and
// when a leader has lost.
#include "actors/controller/leader_election.hpp"

#include "k8s/json/value.hpp"

#include <catch2/catch.hpp>

using namespace kozmo::controller;
using namespace std::chrono_literals;
using kind = election_core::write::kind;

namespace {

const std::chrono::steady_clock::time_point t0{};

lease_record held_by(const std::string& who, std::int64_t transitions = 0) {
  lease_record r;
  r.holder = who;
  r.lease_duration_s = 15;
  r.acquire_time = "2026-11-25T00:00:00.000000Z";
  r.renew_time = "2026-11-25T00:00:00.000000Z";
  r.transitions = transitions;
  return r;
}

} // namespace

TEST_CASE("a candidate creates a Lease that does not exist, holding it, and leads once that is written") {
  election_core a("a", {});
  auto w = a.attempt(std::nullopt, "T1", t0);
  CHECK(w.what == kind::create);
  CHECK(w.record.holder == "a");
  CHECK(w.record.lease_duration_s == 15);
  CHECK(w.record.acquire_time == "T1");
  CHECK(w.record.renew_time == "T1");
  CHECK(w.record.transitions == 0);
  CHECK_FALSE(a.leading(t0));
  a.written(w, true, t0);
  CHECK(a.leading(t0));
}

TEST_CASE("a candidate whose create lost the race does not lead") {
  election_core a("a", {});
  auto w = a.attempt(std::nullopt, "T1", t0);
  a.written(w, false, t0);
  CHECK_FALSE(a.leading(t0));
}

TEST_CASE("a fresh Lease of another is left alone until it has not changed for leaseDuration") {
  election_core b("b", {});
  auto lease = held_by("a", 3);
  CHECK(b.attempt(lease, "T", t0).what == kind::none);
  CHECK(b.attempt(lease, "T", t0 + 14s).what == kind::none);
  CHECK(b.observed_holder() == "a");
  auto w = b.attempt(lease, "T16", t0 + 15s + 1ms);
  REQUIRE(w.what == kind::update);
  CHECK(w.record.holder == "b");
  CHECK(w.record.acquire_time == "T16");
  CHECK(w.record.transitions == 4);
}

TEST_CASE("expiry is timed from when the candidate saw the record change, not from its renewTime") {
  // A renewTime a day old (another clock, or a standby that just started) does not let a new
  // candidate take the Lease at once: it first waits a whole leaseDuration on its own clock.
  election_core b("b", {});
  auto lease = held_by("a");
  lease.renew_time = "2026-11-24T00:00:00.000000Z";
  CHECK(b.attempt(lease, "T", t0 + 100s).what == kind::none);
  CHECK(b.attempt(lease, "T", t0 + 110s).what == kind::none);
  CHECK(b.attempt(lease, "T", t0 + 116s).what == kind::update);
}

TEST_CASE("a renewal seen by the standby restarts its wait") {
  election_core b("b", {});
  auto lease = held_by("a");
  CHECK(b.attempt(lease, "T", t0).what == kind::none);
  lease.renew_time = "2026-11-25T00:00:10.000000Z"; // the leader renewed
  CHECK(b.attempt(lease, "T", t0 + 10s).what == kind::none);
  CHECK(b.attempt(lease, "T", t0 + 24s).what == kind::none);
  CHECK(b.attempt(lease, "T", t0 + 26s).what == kind::update);
}

TEST_CASE("the leader's renewal keeps acquireTime and leaseTransitions and moves renewTime") {
  election_core a("a", {});
  auto lease = held_by("a", 2);
  auto w = a.attempt(lease, "T9", t0);
  REQUIRE(w.what == kind::update);
  CHECK(w.record.holder == "a");
  CHECK(w.record.acquire_time == lease.acquire_time);
  CHECK(w.record.renew_time == "T9");
  CHECK(w.record.transitions == 2);
}

TEST_CASE("a released Lease (no holder) is taken at the next try") {
  election_core b("b", {});
  lease_record released;
  released.lease_duration_s = 1;
  released.transitions = 5;
  auto w = b.attempt(released, "T", t0);
  REQUIRE(w.what == kind::update);
  CHECK(w.record.transitions == 6);
}

TEST_CASE("a leader that cannot renew for renewDeadline has lost, whatever the Lease says") {
  election_core a("a", {});
  auto w = a.attempt(std::nullopt, "T", t0);
  a.written(w, true, t0);
  CHECK(a.leading(t0 + 10s));
  auto again = a.attempt(held_by("a"), "T", t0 + 2s);
  a.written(again, false, t0 + 2s); // a 409 or a timeout: not a renewal
  CHECK(a.leading(t0 + 9s));
  CHECK_FALSE(a.leading(t0 + 10s + 1ms));
}

TEST_CASE("releasing writes no holder and a one-second lease, keeping the transitions") {
  election_core a("a", {});
  auto w = a.attempt(held_by("a", 7), "T", t0);
  a.written(w, true, t0);
  auto r = a.release_record("TR");
  CHECK(r.holder.empty());
  CHECK(r.lease_duration_s == 1);
  CHECK(r.transitions == 7);
}

TEST_CASE("timings that cannot work are refused with the field's name") {
  election_timing t;
  CHECK_FALSE(check_timing(t));
  t.renew_deadline = 15s;
  CHECK(*check_timing(t) == "leaderElection.leaseDuration: must be greater than renewDeadline");
  t = {};
  t.retry_period = 9s;
  CHECK(check_timing(t)->rfind("leaderElection.renewDeadline:", 0) == 0);
  t = {};
  t.retry_period = 0s;
  CHECK(check_timing(t)->rfind("leaderElection.retryPeriod:", 0) == 0);
}

TEST_CASE("a Lease's spec reads back as it was written") {
  auto r = held_by("x", 4);
  kozmo::json::value lease;
  lease["spec"] = lease_spec_json(r);
  CHECK(lease_record_from(lease) == r);
  CHECK(lease_record_from(kozmo::json::value{}) == lease_record{});
}

TEST_CASE("identities differ between two processes on one host and carry the host or pod name") {
  auto a = default_identity(), b = default_identity();
  CHECK(a != b);
  CHECK(a.find('_') != std::string::npos);
  CHECK(micro_time(std::chrono::system_clock::time_point{}) == "1970-01-01T00:00:00.000000Z");
}
