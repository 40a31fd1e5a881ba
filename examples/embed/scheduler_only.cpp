// A host program that runs only Kozmo's GPU scheduler against a cluster: pods with
// `schedulerName: kozmo` are placed in gangs and bound with HiveD's bind-info. Every few seconds it
// asks the scheduler for its cluster status (engine::inspect, a future) and prints one line.
// Built against an installed libkozmo:
//   c++ scheduler_only.cpp $(pkg-config --cflags --libs kozmo) -o scheduler_only
//   ./scheduler_only [KUBECONFIG] [SECONDS]     (default: ~/.kube/config or in-cluster; run until killed)
#include <kozmo/engine.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

namespace {

volatile std::sig_atomic_t stop = 0;

// "/v1/inspect/clusterstatus" as one line: its status and size.
std::string cluster_status(const kozmo::engine& e) {
  auto answer = e.inspect("/v1/inspect/clusterstatus");
  if (answer.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
    return "no answer";
  auto a = answer.get();
  return "HTTP " + std::to_string(a.status) + ", " + std::to_string(a.body.size()) + " bytes";
}

} // namespace

int main(int argc, char** argv) {
  std::signal(SIGTERM, [](int) { stop = 1; });
  std::signal(SIGINT, [](int) { stop = 1; });
  kozmo::engine_options o;
  o.api.kubeconfig = argc > 1 ? argv[1] : "";
  o.parts.scheduler_from_nodes = true; // one VC "default" over the cluster's GPU nodes
  o.parts.scheduler_name = "kozmo";
  kozmo::engine e(o);
  if (auto st = e.start(); !st) {
    std::cerr << "scheduler_only: " << st.err().message << "\n";
    return 1;
  }
  std::cout << "scheduler_only: scheduling pods with schedulerName kozmo on " << e.url() << std::endl;
  int seconds = argc > 2 ? std::atoi(argv[2]) : -1;
  for (int i = 0; !stop && (seconds < 0 || i < seconds); ++i) {
    if (i % 2 == 0)
      std::cout << "scheduler_only: cluster status: " << cluster_status(e) << std::endl;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  e.stop();
  return 0;
}
