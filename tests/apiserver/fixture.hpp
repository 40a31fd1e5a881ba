// A started embedded API server plus a client, for tests over real sockets.
#pragma once

#include "k8s/apiserver/server.hpp"
#include "k8s/json/value.hpp"
#include "tests/support/http_client.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace kozmo::test {

struct running_server {
  explicit running_server(apiserver::server::options opts = {}) : srv(std::move(opts)) {
    auto port = srv.start();
    REQUIRE(port.has_value());
    http = std::make_unique<http_client>("127.0.0.1", *port);
  }

  std::unique_ptr<watch_reader> watch(const std::string& target, const header_list& headers = {}) {
    return std::make_unique<watch_reader>("127.0.0.1", srv.port(), target, headers);
  }

  apiserver::server srv;
  std::unique_ptr<http_client> http;
};

inline std::string pod(const std::string& name, const std::string& extra_metadata = {},
                       const std::string& extra_spec = {}) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + "\"" +
         (extra_metadata.empty() ? "" : "," + extra_metadata) +
         R"(},"spec":{"containers":[{"name":"c","image":"busybox:1.36"}])" +
         (extra_spec.empty() ? "" : "," + extra_spec) + "}}";
}

inline std::string configmap(const std::string& name, const std::string& extra_metadata = {}) {
  return R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + "\"" +
         (extra_metadata.empty() ? "" : "," + extra_metadata) + R"(},"data":{"k":"v"}})";
}

inline const std::string pods = "/api/v1/namespaces/default/pods";
inline const std::string configmaps = "/api/v1/namespaces/default/configmaps";

inline std::string str(const json::value& v, std::initializer_list<std::string_view> path) {
  const json::value* p = v.at_path(path);
  return p && p->is_string() ? p->as_string() : std::string();
}

} // namespace kozmo::test
