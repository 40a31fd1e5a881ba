// Event correlation (actors/controller/event_correlator.hpp): what a user sees in `kubectl
// describe` when a controller reports the same thing again and again.
#include "actors/controller/event_correlator.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::controller;
using namespace std::chrono_literals;

namespace {

using clock_t_ = std::chrono::system_clock;

event_note note(const std::string& pod, const std::string& reason, const std::string& message,
                const std::string& component = "kozmo-scheduler") {
  return pod_note("team", pod, pod + "-uid", {component, ""}, "Warning", reason, message);
}

const clock_t_::time_point t0 = clock_t_::time_point(std::chrono::seconds(1'800'000'000));

} // namespace

TEST_CASE("a repeated note counts on the Event already written: same name, count 2, new lastTimestamp",
          "[controller][events]") {
  event_correlator c;
  auto first = c.observe(note("p", "FailedScheduling", "no room"), t0);
  REQUIRE(first.what == event_write::kind::create);
  CHECK(first.ns == "team");
  CHECK(first.body.get_int("count") == 1);
  CHECK(first.body.at_path({"involvedObject"})->get_string("name") == "p");
  CHECK(first.body.at_path({"metadata"})->get_string("name").rfind("p.", 0) == 0);

  auto again = c.observe(note("p", "FailedScheduling", "no room"), t0 + 30s);
  REQUIRE(again.what == event_write::kind::update);
  CHECK(again.name == first.name);
  CHECK(again.body.get_int("count") == 2);
  CHECK(again.body.get_string("lastTimestamp") == "2027-01-15T08:00:30Z");
  CHECK(again.body.get_string("message") == "no room");
}

TEST_CASE("notes about another object, reason, message or source are Events of their own",
          "[controller][events]") {
  event_correlator c;
  auto base = c.observe(note("p", "FailedScheduling", "no room"), t0);
  for (const auto& other : {note("q", "FailedScheduling", "no room"), note("p", "Preempted", "no room"),
                            note("p", "FailedScheduling", "still no room"),
                            note("p", "FailedScheduling", "no room", "default-scheduler")}) {
    auto w = c.observe(other, t0 + 1s);
    CHECK(w.what == event_write::kind::create);
    CHECK(w.name != base.name);
  }
}

TEST_CASE("from the 10th distinct message of one reason on, the messages are combined into one Event",
          "[controller][events]") {
  event_correlator c;
  std::string combined_name;
  for (int i = 1; i <= 12; ++i) {
    auto w = c.observe(note("p", "FailedScheduling", "reason number " + std::to_string(i)), t0 + i * 1s);
    INFO("message " << i);
    if (i < 10) {
      CHECK(w.what == event_write::kind::create);
      CHECK(w.body.get_string("message") == "reason number " + std::to_string(i));
      continue;
    }
    if (i == 10) {
      REQUIRE(w.what == event_write::kind::create);
      CHECK(w.body.get_string("message") == "(combined from similar events): reason number 10");
      combined_name = w.name;
      continue;
    }
    REQUIRE(w.what == event_write::kind::update);
    CHECK(w.name == combined_name);
    CHECK(w.body.get_string("message") == "(combined from similar events): reason number " + std::to_string(i));
    CHECK(w.body.get_int("count") == i - 9);
  }
  // Ten minutes later the similar messages start over.
  auto later = c.observe(note("p", "FailedScheduling", "reason number 13"), t0 + 20min);
  CHECK(later.body.get_string("message") == "reason number 13");
}

TEST_CASE("a source gets 25 Events about one object at once, then one every 5 minutes", "[controller][events]") {
  event_correlator c;
  int written = 0;
  for (int i = 0; i < 40; ++i)
    written += c.observe(note("p", "BackOff", "restarting " + std::to_string(i % 5)), t0).what !=
               event_write::kind::drop;
  CHECK(written == 25);
  CHECK(c.observe(note("p", "BackOff", "restarting 0"), t0 + 1min).what == event_write::kind::drop);
  CHECK(c.observe(note("p", "BackOff", "restarting 0"), t0 + 5min).what != event_write::kind::drop);
  // Another object, or another source, has a bucket of its own.
  CHECK(c.observe(note("q", "BackOff", "restarting 0"), t0).what == event_write::kind::create);
  CHECK(c.observe(note("p", "BackOff", "restarting 0", "kubelet"), t0).what == event_write::kind::create);
}

TEST_CASE("an Event that expired is written again under a new name, with its count", "[controller][events]") {
  event_correlator c;
  auto first = c.observe(note("p", "FailedScheduling", "no room"), t0);
  auto second = c.observe(note("p", "FailedScheduling", "no room"), t0 + 1s);
  REQUIRE(second.what == event_write::kind::update);
  auto again = c.recreate(second.key, t0 + 2h);
  REQUIRE(again.what == event_write::kind::create);
  CHECK(again.name != first.name);
  CHECK(again.body.at_path({"metadata"})->get_string("name") == again.name);
  CHECK(again.body.get_int("count") == 2);
  CHECK(c.recreate("no such key", t0).what == event_write::kind::drop);
}

TEST_CASE("the caches are bounded", "[controller][events]") {
  correlator_options small;
  small.cache_size = 16;
  event_correlator c(small);
  for (int i = 0; i < 100; ++i)
    c.observe(note("p" + std::to_string(i), "FailedScheduling", "no room"), t0);
  CHECK(c.size() == 16);
}
