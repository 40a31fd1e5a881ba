// Leader election over real sockets to the embedded API server: of two candidates one leads
// and the Lease says so; when the leader dies without a word the other takes over once the
// Lease has not moved for leaseDuration; a released Lease is taken at the next try; a leader
// that cannot reach the API server gives up after renewDeadline. Short timings (lease 1.5 s,
// renew deadline 1 s, retry 0.2 s) keep it quick.
#include "actors/controller/leader_elector_actor.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "messages/atoms.hpp"
#include "tests/actors/controller/served_system.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

using namespace kozmo;
using namespace kozmo::controller;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

struct candidate {
  std::atomic<bool> leads{false};
  std::atomic<bool> lost{false};
  std::atomic<long long> led_at_ms{0};
  caf::actor actor;
};

struct fixture : test::served_system {
  steady::time_point t0 = steady::now();

  fixture() : served_system(500ms) {}

  void run(candidate& c, const std::string& id) {
    elector_config ec;
    ec.lease_namespace = "default";
    ec.lease_name = "test-lease";
    ec.identity = id;
    ec.timing = {1500ms, 1000ms, 200ms};
    ec.started_leading = [&c, this] {
      c.led_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0).count();
      c.leads = true;
    };
    ec.stopped_leading = [&c] {
      c.leads = false;
      c.lost = true;
    };
    c.actor = spawn_leader_elector(*sys, cli, ec);
  }

  // `a` leads, then `b` stands by for `settle`.
  void leader_then_standby(candidate& a, candidate& b, std::chrono::milliseconds settle);

  std::string holder() {
    auto lease = cli->get({"coordination.k8s.io", "v1", "leases", "default", "test-lease", ""});
    return lease ? lease->at_path({"spec", "holderIdentity"})->as_string() : std::string("<none>");
  }
};

bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto deadline = steady::now() + timeout;
  while (steady::now() < deadline) {
    if (pred())
      return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

void fixture::leader_then_standby(candidate& a, candidate& b, std::chrono::milliseconds settle) {
  run(a, "a");
  REQUIRE(wait_for([&] { return a.leads.load(); }, 5s));
  run(b, "b");
  std::this_thread::sleep_for(settle);
}

std::chrono::milliseconds since(steady::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t);
}

} // namespace

TEST_CASE("of two candidates one leads, the Lease names it, and the other waits") {
  fixture f;
  candidate a, b;
  f.run(a, "a");
  f.run(b, "b");
  REQUIRE(wait_for([&] { return a.leads || b.leads; }, 5s));
  std::this_thread::sleep_for(2s); // several lease durations of renewals
  CHECK(a.leads != b.leads);
  CHECK(f.holder() == (a.leads ? "a" : "b"));
  CHECK_FALSE(a.lost);
  CHECK_FALSE(b.lost);
  for (auto* c : {&a, &b})
    caf::anon_send_exit(c->actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("when the leader dies silently, the other leads after the Lease has not moved for leaseDuration") {
  fixture f;
  candidate a, b;
  f.leader_then_standby(a, b, 1s);
  CHECK_FALSE(b.leads);
  auto killed = steady::now();
  caf::anon_send_exit(a.actor, caf::exit_reason::kill); // no release: as a kill -9
  REQUIRE(wait_for([&] { return b.leads.load(); }, 6s));
  auto took = since(killed);
  CHECK(took >= 1300ms); // not before the lease could have expired (less the last renewal's age)
  CHECK(f.holder() == "b");
  auto lease = f.cli->get({"coordination.k8s.io", "v1", "leases", "default", "test-lease", ""});
  CHECK(lease->at_path({"spec", "leaseTransitions"})->as_int() == 1);
  caf::anon_send_exit(b.actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("a released Lease is taken at the standby's next try, well before leaseDuration") {
  fixture f;
  candidate a, b;
  f.leader_then_standby(a, b, 500ms);
  auto released = steady::now();
  {
    caf::scoped_actor self{*f.sys};
    self->request(a.actor, 5s, atoms::release_atom::value).receive([](caf::unit_t) {}, [](caf::error&) {});
  }
  CHECK(f.holder() != "a");
  REQUIRE(wait_for([&] { return b.leads.load(); }, 3s));
  CHECK(since(released) < 1200ms);
  CHECK_FALSE(a.lost); // a release is not a loss
  caf::anon_send_exit(b.actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("a leader that cannot reach the API server stops leading after renewDeadline") {
  fixture f;
  candidate a;
  f.run(a, "a");
  REQUIRE(wait_for([&] { return a.leads.load(); }, 5s));
  auto cut = steady::now();
  f.server.stop();
  REQUIRE(wait_for([&] { return a.lost.load(); }, 5s));
  CHECK(since(cut) <= 1600ms); // the deadline, plus at most a retry period to notice
  CHECK_FALSE(a.leads);
}
