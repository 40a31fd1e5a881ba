// The output cache in the machinery's rounds (rule 9): what a user of spec.cache notices - a hit
// without a pod, identical serializable tasks computing once, a failed holder handing over, the
// overwrite annotation, a store that cannot be read.
#include "fixture.hpp"

using namespace tasks_test;

namespace {

std::string cached_spec(bool serializable = false, const std::string& image = "busybox:1.36") {
  return R"({"type":"container","container":{"image":")" + image +
         R"(","command":["sh","-c","tr a-z A-Z"]},"inputs":{"text":"file:///data/in.txt"},"outputPrefix":"file:///data/out/",)" +
         R"("cache":{"enabled":true,"version":"1","serializable":)" + (serializable ? "true" : "false") + "}}";
}

bool has_event(const fake_cluster& c, const std::string& reason, const std::string& text = "") {
  for (const auto& e : c.events)
    if (e.reason == reason && e.message.find(text) != std::string::npos)
      return true;
  return false;
}

void run_to_success(fake_cluster& c) {
  c.round();
  auto& pod = c.pod_of_attempt(c.status().attempt);
  set_running(pod);
  c.round();
  set_finished(pod, 0);
  c.round();
}

} // namespace

TEST_CASE("a second identical cached task completes as CacheHit without a pod") {
  fake_cluster first(make_task("first", cached_spec()));
  run_to_success(first);
  CHECK(first.phase() == "Succeeded");
  CHECK(first.status().cache.result == "Populated");
  CHECK(first.status().outputs == "file:///data/out/");
  REQUIRE(first.cache_book->size() == 1);
  CHECK(first.cache_book->begin()->second.outputs->task == "ml/first");

  fake_cluster second(make_task("second", cached_spec()));
  second.cache_book = first.cache_book;
  second.round();
  CHECK(second.phase() == "Succeeded");
  CHECK(second.status().reason == "CacheHit");
  CHECK(second.status().cache.result == "Hit");
  CHECK(second.status().cache.source == "ml/first");
  CHECK(second.status().outputs == "file:///data/out/");
  CHECK(second.status().message.find("the outputs of ml/first are reused") != std::string::npos);
  CHECK(second.created.empty());
  CHECK(second.status().attempts.empty());
  CHECK_FALSE(second.has_finalizer()); // nothing was held: a delete needs no controller
  CHECK(has_event(second, "CacheHit"));
  // Nothing more to decide.
  auto r = second.round();
  CHECK_FALSE(r.status);
  CHECK(r.cache.empty());

  // Another image is another key: it computes.
  fake_cluster third(make_task("third", cached_spec(false, "busybox:1.37")));
  third.cache_book = first.cache_book;
  third.round();
  CHECK(third.phase() == "Queued");
  CHECK(third.created.size() == 1);
  CHECK(third.status().cache.result == "Miss");
}

TEST_CASE("a failed cached task stores nothing: the next identical one computes") {
  fake_cluster first(make_task("first", cached_spec()));
  first.round();
  set_finished(first.pod_of_attempt(0), 1, "Error");
  first.round();
  CHECK(first.phase() == "Failed");
  CHECK(first.cache_book->empty()); // not serializable: nothing was written at all
  fake_cluster second(make_task("second", cached_spec()));
  second.cache_book = first.cache_book;
  second.round();
  CHECK(second.created.size() == 1);
}

TEST_CASE("two identical serializable tasks: one computes, the other waits and reuses its outputs") {
  fake_cluster a(make_task("a", cached_spec(true)));
  fake_cluster b(make_task("b", cached_spec(true)));
  b.cache_book = a.cache_book;
  a.round();
  b.round();
  CHECK(a.created.size() == 1);
  CHECK(a.status().cache.reserved);
  CHECK(b.created.empty());
  CHECK(b.phase() == "WaitingForCache");
  CHECK(b.status().reason == "WaitingForCache");
  CHECK(b.status().message.find("the task with uid uid-a is computing the same outputs") != std::string::npos);
  CHECK(b.has_finalizer());
  // b looks again at the next heartbeat (and when the store tells it the entry changed).
  REQUIRE(b.wake_at);
  CHECK(*b.wake_at == t0() + 10s);

  // a heartbeats while it runs.
  auto& pod = a.pod_of_attempt(0);
  set_running(pod);
  a.advance(10s);
  a.round();
  CHECK(a.cache_book->begin()->second.reservation->expires_at == t0() + 40s);

  // b, at its wake-up, still waits.
  b.advance(10s);
  b.round();
  CHECK(b.phase() == "WaitingForCache");
  CHECK(b.created.empty());

  set_finished(pod, 0);
  a.round();
  CHECK(a.phase() == "Succeeded");
  CHECK_FALSE(a.cache_book->begin()->second.reservation);
  // Told the entry changed (the actor forgets the answer and asks again).
  b.cache.known = false;
  b.round();
  CHECK(b.phase() == "Succeeded");
  CHECK(b.status().reason == "CacheHit");
  CHECK(b.created.empty());
  CHECK_FALSE(b.has_finalizer());
}

TEST_CASE("when the computing task fails, the reservation passes to the waiting one") {
  fake_cluster a(make_task("a", cached_spec(true)));
  fake_cluster b(make_task("b", cached_spec(true)));
  b.cache_book = a.cache_book;
  a.round();
  b.round();
  CHECK(b.phase() == "WaitingForCache");
  set_finished(a.pod_of_attempt(0), 2, "Error");
  a.round();
  CHECK(a.phase() == "Failed");
  CHECK_FALSE(a.cache_book->begin()->second.reservation); // released
  b.cache.known = false;
  b.round();
  CHECK(b.created.size() == 1);
  CHECK(b.status().cache.reserved);
  CHECK(b.status().cache.result == "Miss");
}

TEST_CASE("a holder that stops heartbeating loses its reservation when it expires") {
  fake_cluster a(make_task("a", cached_spec(true)));
  fake_cluster b(make_task("b", cached_spec(true)));
  b.cache_book = a.cache_book;
  a.round();
  b.round();
  for (int i = 0; i < 2; ++i) {
    b.advance(10s);
    b.round();
    CHECK(b.phase() == "WaitingForCache");
  }
  b.advance(10s); // 30 s: heartbeat x 3 since a's last
  b.round();
  CHECK(b.created.size() == 1);
  CHECK(b.status().cache.reserved);
}

TEST_CASE("a retried attempt keeps the task's reservation") {
  std::string spec = cached_spec(true);
  spec.insert(spec.size() - 1, R"(,"retries":1)");
  fake_cluster a(make_task("a", spec));
  a.round();
  set_finished(a.pod_of_attempt(0), 1, "Error");
  a.round();
  CHECK(a.status().attempt == 1);
  CHECK(a.pods.count("a-1") == 1);
  CHECK(a.status().cache.reserved);
  CHECK(a.cache_book->begin()->second.reservation->owner == "taskexecution/uid-a");
}

TEST_CASE("deleting a task that holds the reservation gives it back") {
  fake_cluster a(make_task("a", cached_spec(true)));
  a.round();
  CHECK(a.status().cache.reserved);
  a.deleting();
  a.round();
  CHECK(a.phase() == "Aborted");
  CHECK_FALSE(a.cache_book->begin()->second.reservation);
}

TEST_CASE("kozmo.io/cache-overwrite=true recomputes a CacheHit task and replaces the stored outputs") {
  fake_cluster first(make_task("first", cached_spec()));
  run_to_success(first);
  fake_cluster second(make_task("second", cached_spec()));
  second.cache_book = first.cache_book;
  second.round();
  CHECK(second.status().reason == "CacheHit");

  second.task.metadata.annotations[keys::cache_overwrite] = "true";
  second.round();
  CHECK(second.phase() == "Queued");
  CHECK(second.created.size() == 1);
  CHECK(has_event(second, "CacheOverwrite"));
  CHECK(second.status().cache.result == "Overwrite");
  CHECK_FALSE(second.status().completion_time);
  run_to_success(second);
  CHECK(second.phase() == "Succeeded");
  CHECK(second.status().reason.empty());
  CHECK(second.cache_book->begin()->second.outputs->task == "ml/second");
  // The annotation is honoured once: later rounds do not run it again.
  second.round();
  CHECK(second.created.size() == 1);
  // Removed and set again, it recomputes again; a retry count starts from the new run.
  second.task.metadata.annotations.erase(keys::cache_overwrite);
  second.round();
  second.task.metadata.annotations[keys::cache_overwrite] = "true";
  second.round();
  CHECK(second.created.size() == 2);
  CHECK(second.status().attempt == 1);
  CHECK(second.status().first_attempt == 1);
  set_finished(second.pod_of_attempt(1), 1, "Error");
  second.round();
  CHECK(second.phase() == "Failed");
  CHECK(second.status().message.find("no retries") != std::string::npos);
}

TEST_CASE("a cache store that cannot be read is a miss with a Warning, never a failure") {
  fake_cluster c(make_task("c", cached_spec(true)));
  c.cache_down = true;
  c.round();
  CHECK(c.created.size() == 1);
  CHECK(has_event(c, "CacheUnavailable", "connection refused"));
  CHECK(c.status().cache.result == "Miss");
}

TEST_CASE("while a question to the cache store is out, a round asks nothing more: the answer brings the next one") {
  fake_cluster c(make_task("asking", cached_spec()));
  task_world w;
  w.task = &c.task;
  w.config = &c.config;
  w.plugins = &c.plugins;
  w.now = c.now;
  auto first = run_round(w);
  REQUIRE(first.cache.size() == 1); // the lookup
  CHECK(first.cache[0].op == cache_op::lookup);
  CHECK(first.creates.empty());     // nothing runs before the store has answered

  w.cache_asking = true;
  auto meanwhile = run_round(w);
  CHECK(meanwhile.cache.empty());
  CHECK(meanwhile.creates.empty());
}
