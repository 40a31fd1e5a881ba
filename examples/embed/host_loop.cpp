// A host with an event loop of its own beside Kozmo's threads: Kozmo runs an embedded API server,
// two simulated GPU nodes, the binder and the GPU scheduler; the host's loop (one thread, a queue
// of timed tasks) keeps its own work going and, on each tick, asks the scheduler for its cluster
// status through engine::inspect and polls the future without ever blocking the loop. Once the
// answer shows both nodes, it says so and stops.
//   c++ host_loop.cpp $(pkg-config --cflags --libs kozmo) -o host_loop
//   ./host_loop [TICKS]       (default 100 ticks of 100 ms; exit 0 once the status shows both nodes)
#include <kozmo/engine.hpp>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <queue>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

// The host's loop: tasks due at a time, run in order on this thread.
class event_loop {
public:
  void at(clock_type::time_point when, std::function<void()> task) { tasks_.push({when, seq_++, std::move(task)}); }
  void after(std::chrono::milliseconds delay, std::function<void()> task) { at(clock_type::now() + delay, std::move(task)); }
  void quit() { running_ = false; }
  void run() {
    while (running_ && !tasks_.empty()) {
      auto next = tasks_.top();
      tasks_.pop();
      std::this_thread::sleep_until(next.when);
      next.task();
    }
  }

private:
  struct timed {
    clock_type::time_point when;
    unsigned long seq;
    std::function<void()> task;
    bool operator>(const timed& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  std::priority_queue<timed, std::vector<timed>, std::greater<>> tasks_;
  unsigned long seq_ = 0;
  bool running_ = true;
};

} // namespace

int main(int argc, char** argv) {
  const int ticks = argc > 1 ? std::atoi(argv[1]) : 100;
  kozmo::engine_options o;
  o.api.embedded = true;
  o.parts.nodes = kozmo::uniform_nodes(2, 8);
  o.parts.binder = true;
  o.parts.scheduler_from_nodes = true;
  kozmo::engine e(o);
  if (auto st = e.start(); !st) {
    std::cerr << "host_loop: " << st.err().message << "\n";
    return 1;
  }
  std::cout << "host_loop: Kozmo serves " << e.url() << "; the host's loop runs beside it" << std::endl;

  event_loop loop;
  int tick = 0;
  int rc = 1;
  std::optional<std::future<kozmo::inspect_answer>> pending; // at most one question out at a time
  std::function<void()> on_tick = [&] {
    ++tick; // the host's own work would go here
    if (pending && pending->wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      kozmo::inspect_answer a = pending->get();
      pending.reset();
      std::cout << "host_loop: tick " << tick << ": cluster status HTTP " << a.status << ", " << a.body.size()
                << " bytes" << std::endl;
      // The configuration is derived from the GPU nodes once they have registered: then the
      // physical cluster's cells name both.
      if (a.status == 200 && a.body.find("node-0") != std::string::npos && a.body.find("node-1") != std::string::npos) {
        std::cout << "host_loop: the scheduler sees its cluster; stopping" << std::endl;
        rc = 0;
        return loop.quit();
      }
    }
    if (!pending)
      pending = e.inspect("/v1/inspect/clusterstatus");
    if (tick >= ticks) {
      std::cout << "host_loop: no cluster status after " << tick << " ticks" << std::endl;
      return loop.quit();
    }
    loop.after(std::chrono::milliseconds(100), on_tick);
  };
  loop.after(std::chrono::milliseconds(0), on_tick);
  loop.run();
  e.stop();
  return rc;
}
