// What the controller kit's actor tests start from: the embedded API server, a client of it over
// a real socket, and an actor system (destroyed first, so no actor outlives the client it uses).
#pragma once

#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>

namespace kozmo::test {

struct served_system {
  apiserver::server server;
  std::shared_ptr<client::client> cli;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  // `request_timeout`: the client's, when a test wants a shorter one than the default.
  explicit served_system(std::chrono::milliseconds request_timeout = client::config{}.request_timeout) {
    REQUIRE(server.start().has_value());
    client::config cc;
    cc.server = server.url();
    cc.request_timeout = request_timeout;
    cli = std::make_shared<client::client>(cc);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
  ~served_system() { sys.reset(); }
};

} // namespace kozmo::test
