// A host program that runs only Kozmo's GPU scheduler against a cluster: pods with
// `schedulerName: kozmo` are placed in gangs and bound with HiveD's bind-info. Every few seconds it
// asks the scheduler for its cluster status (the inspect API, through a message) and prints one
// line. Built against an installed libkozmo:
//   g++ scheduler_only.cpp $(pkg-config --cflags --libs kozmo) -o scheduler_only
//   ./scheduler_only [KUBECONFIG] [SECONDS]     (default: $KUBECONFIG or ~/.kube/config; run until killed)
#include <messages/scheduler_messages.hpp>
#include <runtime/engine.hpp>

#include <caf/send.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <future>
#include <iostream>
#include <string>
#include <thread>

namespace {

volatile std::sig_atomic_t stop = 0;

// "/v1/inspect/clusterstatus" as one line: how many nodes and GPUs the scheduler sees.
std::string cluster_status(caf::actor scheduler) {
  auto answer = std::make_shared<std::promise<kozmo::inspect_reply>>();
  auto got = answer->get_future();
  caf::anon_send(scheduler, kozmo::inspect_callback{"/v1/inspect/clusterstatus",
                                                    [answer](kozmo::inspect_reply r) { answer->set_value(r); }});
  if (got.wait_for(std::chrono::seconds(5)) != std::future_status::ready)
    return "no answer";
  auto r = got.get();
  return "HTTP " + std::to_string(r.status) + ", " + std::to_string(r.body.size()) + " bytes";
}

} // namespace

int main(int argc, char** argv) {
  std::signal(SIGTERM, [](int) { stop = 1; });
  std::signal(SIGINT, [](int) { stop = 1; });
  kozmo::engine_options o;
  o.kubeconfig = argc > 1 ? argv[1] : "";
  o.scheduler_from_nodes = true; // one VC "default" over the cluster's GPU nodes
  o.scheduler_name = "kozmo";
  kozmo::engine e(o);
  if (auto st = e.start(); !st) {
    std::cerr << "scheduler_only: " << st.err().message << "\n";
    return 1;
  }
  std::cout << "scheduler_only: scheduling pods with schedulerName kozmo on " << e.url() << std::endl;
  int seconds = argc > 2 ? std::atoi(argv[2]) : -1;
  for (int i = 0; !stop && (seconds < 0 || i < seconds); ++i) {
    if (i % 2 == 0)
      std::cout << "scheduler_only: cluster status: " << cluster_status(e.scheduler()) << std::endl;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  e.stop();
  return 0;
}
