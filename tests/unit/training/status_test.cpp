// The peer's condition transition rules.
#include "fixtures.hpp"

using namespace training_test;

TEST_CASE("the same condition status and reason again changes nothing") {
  job_status s;
  CHECK(set_condition(s, "Running", true, "PyTorchJobRunning", "running", t0()));
  CHECK_FALSE(set_condition(s, "Running", true, "PyTorchJobRunning", "still running", t0() + seconds(5)));
  CHECK(s.conditions.at(0).message == "running");
}

TEST_CASE("lastTransitionTime moves only when the status changes") {
  job_status s;
  set_condition(s, "Stuck", true, "JobImagePullBackOff", "a", t0());
  set_condition(s, "Stuck", true, "JobUnschedulable", "b", t0() + seconds(30));
  CHECK(find_condition(s, "Stuck")->last_transition_time == t0());
  CHECK(find_condition(s, "Stuck")->last_update_time == t0() + seconds(30));
  set_condition(s, "Stuck", false, "JobPodsStarted", "c", t0() + seconds(60));
  CHECK(find_condition(s, "Stuck")->last_transition_time == t0() + seconds(60));
}

TEST_CASE("running and restarting replace each other") {
  job_status s;
  set_condition(s, "Running", true, "R", "", t0());
  set_condition(s, "Restarting", true, "X", "", t0());
  CHECK(find_condition(s, "Running") == nullptr);
  set_condition(s, "Running", true, "R", "", t0());
  CHECK(find_condition(s, "Restarting") == nullptr);
}

TEST_CASE("succeeding or failing flips running to false") {
  job_status s;
  set_condition(s, "Running", true, "R", "", t0());
  set_condition(s, "Succeeded", true, "S", "", t0() + seconds(1));
  CHECK(find_condition(s, "Running")->status == "False");
  CHECK(is_succeeded(s));
}

TEST_CASE("once failed, no condition changes any more") {
  job_status s;
  set_condition(s, "Failed", true, "F", "", t0());
  CHECK_FALSE(set_condition(s, "Running", true, "R", "", t0()));
  CHECK_FALSE(set_condition(s, "Succeeded", true, "S", "", t0()));
  CHECK(s.conditions.size() == 1);
}

TEST_CASE("a status survives its JSON round trip") {
  job_status s;
  set_condition(s, "Created", true, "TFJobCreated", "created", t0());
  s.replica_statuses["Worker"] = replica_status{2, 1, 0, "a=b"};
  s.start_time = t0();
  auto back = status_from_json(to_json(s));
  CHECK(back == s);
}
