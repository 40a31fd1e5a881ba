// The embedded API server with Kozmo's CRDs installed (as `kozmo local` installs them) and a
// client of it over a real socket: what the actor tests that run controllers alone start from.
#pragma once

#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "k8s/json/yaml.hpp"
#include "runtime/crds.hpp"

#include <catch2/catch.hpp>

#include <memory>

namespace kozmo::test {

struct server_with_crds {
  apiserver::server server;
  std::shared_ptr<client::client> cli;

  server_with_crds() {
    REQUIRE(server.start().has_value());
    for (const auto& file : embedded_crds()) {
      auto docs = json::parse_yaml_documents(file.text);
      REQUIRE(docs.has_value());
      for (const auto& d : *docs)
        REQUIRE(server.apply_object(d).has_value());
    }
    client::config cc;
    cc.server = server.url();
    cli = std::make_shared<client::client>(cc);
  }
};

} // namespace kozmo::test
