// Kozmo in a host program: the engine starts the parts the host chooses (options.hpp) on
// threads of its own and stops them. The host keeps its own threads and event loop; nothing here
// blocks but start() and stop().
//
//   #include <kozmo/engine.hpp>
//
//   kozmo::engine_options o;
//   o.api.embedded = true;                          // or o.api.kubeconfig = "/path/to/kubeconfig"
//   o.parts.nodes = kozmo::uniform_nodes(4, 8);     // four simulated nodes of 8 GPUs
//   o.parts.binder = true;
//   o.parts.scheduler_from_nodes = true;            // Kozmo's GPU scheduler for schedulerName: kozmo
//   kozmo::engine e(o);
//   if (auto st = e.start(); !st)
//     return fail(st.err().message);
//   auto status = e.inspect("/v1/inspect/clusterstatus"); // a std::future<kozmo::inspect_answer>
//   ... e.url(), e.kubeconfig() ...
//   e.stop();                                       // also done by the destructor
//
// Build: c++ -std=c++20 host.cpp $(pkg-config --cflags --libs kozmo). `kozmo local`, `kozmo
// controller` and `kozmo apiserver` are thin wrappers around it.
//
// Threading: start() and stop() from one thread; the other members are thread-safe.
#pragma once

#include <kozmo/inspect.hpp>
#include <kozmo/options.hpp>
#include <kozmo/status.hpp>

#include <cstdint>
#include <future>
#include <memory>
#include <string>

namespace kozmo {

class engine {
public:
  explicit engine(engine_options opts);
  ~engine();
  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  // Starts the server (if embedded), the actor system and the chosen parts. An error names the
  // option at fault; nothing runs then.
  status start();
  // Stops the parts, then the server (which lets go of its data dir). Idempotent.
  void stop();

  // The API server's URL.
  std::string url() const;
  // Embedded secure server: a kubeconfig (YAML) that reaches it as its admin, and the bearer
  // token it also accepts ("" otherwise).
  std::string kubeconfig() const;
  std::string bearer_token() const;
  // The ports the HTTP endpoints listen on (0 when not served): for an address ending in :0.
  std::uint16_t metrics_port() const;
  std::uint16_t probe_port() const;
  std::uint16_t extender_port() const; // 0 without extender_options::address

  // The GPU scheduler's inspect API in process (inspect.hpp): the answer arrives on one of
  // Kozmo's threads once the scheduler has it (after it has recovered the cluster's placements
  // at start); 503 at once when no scheduler runs. Wait with a timeout of the host's choosing. A
  // question still open when the engine stops is never answered: its future's get() throws
  // std::future_error (broken_promise).
  std::future<inspect_answer> inspect(const std::string& path) const;

private:
  friend struct engine_internal; // in-tree code (runtime/engine_internal.hpp, not installed)
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kozmo
