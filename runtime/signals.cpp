#include "runtime/signals.hpp"

#include <pthread.h>

namespace kozmo::runtime {

shutdown_signals::shutdown_signals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int shutdown_signals::wait() const {
  int sig = 0;
  sigwait(&set_, &sig);
  return sig;
}

} // namespace kozmo::runtime
