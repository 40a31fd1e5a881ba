// The TFJob status cases as a table: replica specs, pod phases, and the condition expected.
// Phases: R running, S succeeded, F failed (exit 1), P pending, - no pod yet.
#include "fixtures.hpp"

using namespace training_test;

namespace {

struct status_case {
  const char* name;
  int chiefs, workers, ps;
  const char* restart;       // replica restartPolicy for every type
  const char* success_policy; // "" or "AllWorkers"
  const char* chief_phase;    // "R", "S", "F" (one chief at most)
  const char* worker_phases;  // one letter per worker
  const char* ps_phases;
  const char* expect;         // "Succeeded", "Failed", "Restarting", "Running", "Created"
};

const status_case cases[] = {
    {"no chief, all workers running", 0, 4, 2, "OnFailure", "", "", "RRRR", "RR", "Running"},
    {"no chief, some workers pending", 0, 4, 2, "OnFailure", "", "", "RRPP", "RR", "Created"},
    {"no chief, worker-0 succeeded, 3 workers active", 0, 4, 2, "OnFailure", "", "", "SRRR", "RR", "Succeeded"},
    {"AllWorkers, worker-0 succeeded, 3 workers active", 0, 4, 2, "OnFailure", "AllWorkers", "", "SRRR", "RR", "Running"},
    {"AllWorkers, all workers succeeded", 0, 4, 2, "OnFailure", "AllWorkers", "", "SSSS", "RR", "Succeeded"},
    {"no chief, worker-1 succeeded only", 0, 4, 0, "OnFailure", "", "", "RSRR", "", "Running"},
    {"no chief, a worker failed under Never", 0, 4, 2, "Never", "", "", "RRFR", "RR", "Failed"},
    {"no chief, a worker failed under OnFailure", 0, 4, 2, "OnFailure", "", "", "RRFR", "RR", "Restarting"},
    {"a PS failed under Never", 0, 2, 1, "Never", "", "", "RR", "F", "Failed"},
    {"chief running, workers running", 1, 2, 1, "OnFailure", "", "R", "RR", "R", "Running"},
    {"chief succeeded, workers running", 1, 2, 1, "OnFailure", "", "S", "RR", "R", "Succeeded"},
    {"chief running, all workers succeeded", 1, 2, 0, "OnFailure", "", "R", "SS", "", "Running"},
    {"chief failed and restarting", 1, 2, 1, "OnFailure", "", "F", "RR", "R", "Restarting"},
    {"chief failed under Never", 1, 2, 1, "Never", "", "F", "RR", "R", "Failed"},
    {"chief failed with exit 1 under ExitCode", 1, 2, 0, "ExitCode", "", "F", "RR", "", "Failed"},
    {"worker-0 failed under Never while worker-1 succeeded", 0, 2, 0, "Never", "", "", "FS", "", "Failed"},
};

void set_phases(cluster& c, const std::string& type, const std::string& phases) {
  for (std::size_t i = 0; i < phases.size(); ++i) {
    std::string name = "job-" + type + "-" + std::to_string(i);
    switch (phases[i]) {
    case 'R': c.set_phase(name, "Running"); break;
    case 'S': c.exit_with(name, "tensorflow", 0); break;
    case 'F': c.exit_with(name, "tensorflow", 1); break;
    case 'P': c.set_phase(name, "Pending"); break;
    default: break;
    }
  }
}

} // namespace

TEST_CASE("TFJob conditions follow the table of pod states") {
  for (const status_case& t : cases) {
    INFO(t.name);
    std::string specs = "{";
    auto add = [&](const char* type, int n) {
      if (n == 0)
        return;
      specs += std::string(specs.size() > 1 ? "," : "") + "\"" + type + "\":" + replica("tensorflow", n, t.restart);
    };
    add("Chief", t.chiefs);
    add("PS", t.ps);
    add("Worker", t.workers);
    specs += "}";
    std::string extra = *t.success_policy ? std::string(R"("successPolicy":")") + t.success_policy + "\"" : "";
    cluster c(job_doc("TFJob", "tfReplicaSpecs", specs, extra));
    c.step();
    set_phases(c, "chief", t.chief_phase);
    set_phases(c, "worker", t.worker_phases);
    set_phases(c, "ps", t.ps_phases);
    c.step();
    std::string expect = t.expect;
    for (const char* type : {"Running", "Restarting", "Succeeded", "Failed"})
      CHECK(c.condition(type) == (expect == type));
    CHECK(c.condition("Created"));
  }
}
