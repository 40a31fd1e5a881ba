// Shutdown on SIGINT / SIGTERM for every long-running sub-command (`kozmo local`, `kubelet`,
// `apiserver`, `extender`): the signals are blocked before any thread starts, so every thread
// inherits the mask and the main thread's wait() is the one place that receives them.
#pragma once

#include <csignal>

namespace kozmo::runtime {

class shutdown_signals {
public:
  // Blocks SIGINT and SIGTERM in the calling thread (and the threads it starts from now on).
  shutdown_signals();
  // Waits for one of them; returns its number.
  int wait() const;

private:
  sigset_t set_;
};

} // namespace kozmo::runtime
