// When a controller actor runs its pass (actors/controller/pass_control.hpp): events batched
// into one pass, nothing while a plan is out, wake-ups that a newer one makes stale.
#include "actors/controller/pass_control.hpp"

#include <catch2/catch.hpp>

using namespace kozmo::controller;
using namespace std::chrono_literals;

TEST_CASE("a burst of events asks for one pass") {
  pass_control pc;
  CHECK(pc.request());       // the first: send the pass message
  CHECK_FALSE(pc.request()); // the next ones ride on it
  CHECK_FALSE(pc.request());
  CHECK(pc.begin());
  CHECK_FALSE(pc.begin()); // a second pass message finds nothing new
}

TEST_CASE("no pass runs while a plan is out; what changed meanwhile runs once it is back") {
  pass_control pc;
  REQUIRE(pc.request());
  REQUIRE(pc.begin());
  pc.plan_sent();
  CHECK(pc.running());
  CHECK_FALSE(pc.request()); // no message while the plan is out
  CHECK(pc.plan_done());     // ... but one as soon as it is back
  CHECK(pc.begin());
  pc.plan_sent();
  CHECK_FALSE(pc.plan_done()); // nothing changed meanwhile
}

TEST_CASE("a wake-up is armed once per time, and an older timer is stale") {
  pass_control pc;
  auto t = std::chrono::system_clock::now();
  auto first = pc.wake(t + 10s);
  REQUIRE(first.has_value());
  CHECK_FALSE(pc.wake(t + 10s).has_value()); // the same time: the timer already runs
  auto second = pc.wake(t + 5s);
  REQUIRE(second.has_value());
  CHECK_FALSE(pc.woke(*first)); // the first timer was replaced
  CHECK(pc.woke(*second));
  CHECK_FALSE(pc.woke(*second)); // spent
  CHECK_FALSE(pc.wake(std::nullopt).has_value());
}

TEST_CASE("a wake-up comes a little after its mark, never before now") {
  auto t = std::chrono::system_clock::now();
  CHECK(pass_control::delay_to(t + 1s, t) == 1020ms);
  CHECK(pass_control::delay_to(t - 1s, t) == 20ms);
}
