// What in-tree code (the CLI's modes, tests, bench) reaches of an engine beyond its public face:
// the pieces a host never needs. Not installed.
#pragma once

#include "runtime/engine.hpp"

namespace kozmo {

namespace apiserver {
class server;
}

struct engine_internal {
  // The embedded API server (null when the API is elsewhere or before start()).
  static apiserver::server* embedded_server(engine& e);
};

} // namespace kozmo
