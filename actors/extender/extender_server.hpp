// The extender's HTTP/1.1 server (Beast, hidden behind a pimpl): it carries Kozmo's HTTP API
// (http_api.hpp: kube-scheduler's extender verbs, HiveD's inspect views, /healthz, /metrics),
// answered by an extender_backend. Connections are kept alive; 413 for a body over the limit,
// 504 when the backend does not answer in time.
//
// Threading: one io thread. Backend calls are made on it; their answers may come from any
// thread at any time (they are posted back to the io thread). Answers that arrive after stop()
// are dropped. The backend must outlive the server.
#pragma once

#include "actors/extender/extender_backend.hpp"
#include "actors/extender/http_api.hpp"
#include "k8s/error.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::extender {

struct server_options {
  std::string address = "127.0.0.1"; // "0.0.0.0" for every interface
  unsigned short port = 0;            // 0: a free port (see extender_server::port())
  std::size_t body_limit = 16 * 1024 * 1024; // a filter request with a NodeList can be large
  std::chrono::milliseconds backend_timeout{30000};
  // Idle keep-alive connections are closed after this long. Long on purpose: kube-scheduler's
  // HTTP client does not retry a POST that raced with a server-side close.
  std::chrono::milliseconds idle_timeout{600000};
  // The routes this server answers (http_api.hpp); others get 404. Empty: every route.
  std::vector<route_kind> routes;
};

class extender_server {
public:
  extender_server(std::shared_ptr<extender_backend> backend, server_options opts);
  ~extender_server(); // stop()
  extender_server(const extender_server&) = delete;
  extender_server& operator=(const extender_server&) = delete;

  // Binds and starts serving; the port actually bound.
  expected<unsigned short> start();
  // Stops accepting, drops open connections and pending answers, joins the io thread. Idempotent.
  void stop();
  unsigned short port() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace kozmo::extender
