// The listener, the io threads, the server's lifecycle and its in-process API.
#include "k8s/apiserver/server_impl.hpp"

#include "k8s/apiserver/status.hpp"

#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <future>
#include <mutex>
#include <thread>

namespace kozmo::apiserver {
namespace {

// TLS 1.2 or newer with the serving certificate; client certificates are asked for and checked
// against the client CA, but not required (a caller may bring a bearer token instead).
expected<net::ssl::context> tls_context(const server::security& sec) {
  net::ssl::context ctx(net::ssl::context::tls_server);
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  ctx.set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                  net::ssl::context::no_sslv3 | net::ssl::context::single_dh_use);
  beast::error_code ec;
  ctx.use_certificate_chain(net::buffer(sec.cert_pem), ec);
  if (ec)
    return error::internal("TLS: cannot use the serving certificate: " + ec.message());
  ctx.use_private_key(net::buffer(sec.key_pem), net::ssl::context::pem, ec);
  if (ec)
    return error::internal("TLS: cannot use the serving key: " + ec.message());
  if (!sec.client_ca_pem.empty()) {
    ctx.add_certificate_authority(net::buffer(sec.client_ca_pem), ec);
    if (ec)
      return error::internal("TLS: cannot use the client CA: " + ec.message());
    ctx.set_verify_mode(net::ssl::verify_peer);
    ctx.set_verify_callback([](bool, net::ssl::verify_context&) { return true; });
  }
  // Browsers resume TLS sessions on their next connections; with client certificates asked
  // for, OpenSSL refuses a resumption (the handshake fails) unless the session belongs to a
  // named context.
  static constexpr unsigned char session_context[] = "kozmo-apiserver";
  SSL_CTX_set_session_id_context(ctx.native_handle(), session_context, sizeof session_context - 1);
  return ctx;
}

} // namespace

struct server::impl {
  // Declared first so it is destroyed last: connections (owned by pending handlers of the
  // io_context) unregister their watches from the store when they go.
  server_state state;
  std::unique_ptr<net::io_context> ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::shared_ptr<serve::listener> listener;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  bool started = false;
  bool stopped = false;
  std::mutex lifecycle_mu;
};

server::server() : server(options{}) {}

server::server(options opts) : impl_(std::make_unique<impl>()) { impl_->state.opts = std::move(opts); }

server::~server() {
  stop();
  // Connections still queued in the io_context go before the store (member order).
  impl_->listener.reset();
  impl_->ioc.reset();
}

expected<std::uint16_t> server::start() {
  std::lock_guard lock(impl_->lifecycle_mu);
  if (impl_->started)
    return impl_->port;
  auto& st = impl_->state;
  auto opened = store::open(store::options{st.opts.data_dir, st.opts.watch_history, st.opts.event_ttl});
  if (!opened)
    return opened.err();
  st.st = std::move(*opened);
  st.routes = std::make_unique<router>(*st.st, st.opts.pod_logs_dir);

  if (st.opts.secure) {
    auto ctx = tls_context(*st.opts.secure);
    if (!ctx)
      return ctx.err();
    st.tls.emplace(std::move(*ctx));
  }
  impl_->ioc = std::make_unique<net::io_context>(static_cast<int>(std::max(1u, st.opts.threads)));
  auto listening = serve::listener::open(*impl_->ioc, st.opts.address, st.opts.port, st.opts.limits, "apiserver",
                                         [&st](tcp::socket socket, serve::slot held) {
                                           std::make_shared<connection>(std::move(socket), st, std::move(held))
                                               ->start();
                                         });
  if (!listening)
    return listening.err();
  impl_->listener = std::move(*listening);
  impl_->port = impl_->listener->port();
  st.port = impl_->port;

  st.faults.set_drop_hook([this] {
    for (auto& c : impl_->state.snapshot())
      c->drop_watch();
  });
  impl_->work.emplace(impl_->ioc->get_executor());
  impl_->listener->start();
  for (unsigned i = 0; i < std::max(1u, st.opts.threads); ++i)
    impl_->threads.emplace_back([this] { impl_->ioc->run(); });
  impl_->started = true;
  return impl_->port;
}

void server::stop() {
  std::lock_guard lock(impl_->lifecycle_mu);
  if (!impl_->started || impl_->stopped)
    return;
  impl_->stopped = true;
  impl_->state.faults.set_drop_hook({});
  {
    std::lock_guard gate(impl_->state.gate->mu);
    impl_->state.gate->open = false;
  }
  impl_->listener->close();
  for (auto& c : impl_->state.snapshot())
    c->close();
  impl_->work.reset();
  // Give the connections' close handlers a moment to run, then stop whatever remains (idle
  // keep-alive reads would otherwise keep run() busy for minutes).
  for (int i = 0; i < 50 && !impl_->ioc->stopped(); ++i) {
    if (impl_->state.snapshot().empty())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  impl_->ioc->stop();
  for (auto& t : impl_->threads)
    t.join();
  impl_->threads.clear();
}

std::string server::url() const {
  return (impl_->state.opts.secure ? "https://" : "http://") + impl_->state.opts.address + ":" +
         std::to_string(impl_->port);
}

std::uint16_t server::port() const { return impl_->port; }

std::size_t server::open_connections() const {
  return impl_->listener ? impl_->listener->counters().open.load() : 0;
}

fault_injector& server::faults() { return impl_->state.faults; }

store& server::object_store() { return *impl_->state.st; }

void server::add_route(std::string prefix, route r) {
  auto& st = impl_->state;
  std::lock_guard lock(st.extra_mu);
  auto& routes = st.extra_routes;
  routes.erase(std::remove_if(routes.begin(), routes.end(), [&](const auto& e) { return e.first == prefix; }),
               routes.end());
  if (r.handler)
    routes.emplace_back(std::move(prefix), std::move(r));
}

std::optional<server::route> server_state::extra_route(const std::string& path) {
  std::lock_guard lock(extra_mu);
  for (const auto& [prefix, r] : extra_routes)
    if (path.rfind(prefix, 0) == 0)
      return r;
  return std::nullopt;
}

http_response server::handle(const http_request& req) {
  std::string path = req.target.substr(0, req.target.find('?'));
  if (auto r = impl_->state.extra_route(path)) { // in process: this caller's thread may wait
    auto answered = std::make_shared<std::promise<route_reply>>();
    auto once = std::make_shared<std::once_flag>();
    auto future = answered->get_future();
    r->handler(req.method, path, req.body, [answered, once](route_reply reply) {
      std::call_once(*once, [&] { answered->set_value(std::move(reply)); });
    });
    route_reply reply = future.wait_for(r->deadline) == std::future_status::ready ? future.get() : r->late;
    http_response res;
    res.status = reply.status;
    res.body = std::move(reply.body);
    res.set_header("Content-Type", reply.content_type);
    return res;
  }
  if (!impl_->state.routes)
    return status_response(api_error{503, "ServiceUnavailable", "the server is not started", nullptr});
  auto result = impl_->state.routes->handle(req);
  if (auto* res = std::get_if<http_response>(&result))
    return *res;
  if (auto* logs = std::get_if<std::shared_ptr<log_stream>>(&result)) // in process: what is there now
    return http_response{200, {{"Content-Type", "text/plain"}}, (*logs)->take_initial()};
  return status_response(bad_request("watch requests are served over HTTP only"));
}

expected<json::value> server::apply_object(const json::value& obj) {
  if (!impl_->state.st)
    return error::internal("the server is not started");
  std::string api_version = obj.get_string("apiVersion");
  std::string kind = obj.get_string("kind");
  const json::value* meta = obj.find("metadata");
  std::string name = meta ? meta->get_string("name") : std::string();
  if (api_version.empty() || kind.empty() || name.empty())
    return error::bad_request("apply_object needs apiVersion, kind and metadata.name");
  auto slash = api_version.find('/');
  std::string group = slash == std::string::npos ? std::string() : api_version.substr(0, slash);
  std::string version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  auto rt = impl_->state.st->resolve_kind(group, kind);
  if (!rt || !rt->serves(version))
    return error::not_found("no matches for kind " + go_quote(kind) + " in version " + go_quote(api_version));
  std::string ns = meta->get_string("namespace", "default");
  std::string path = (group.empty() ? "/api/" + version : "/apis/" + group + "/" + version) +
                     (rt->namespaced ? "/namespaces/" + ns : std::string()) + "/" + rt->plural + "/" + name +
                     "?fieldManager=kozmo&fieldValidation=Strict";
  http_request req{"PATCH", path, {{"Content-Type", "application/apply-patch+yaml"}}, json::dump(obj)};
  http_response res = handle(req);
  auto body = json::parse(res.body);
  if (res.status == 200 || res.status == 201) {
    if (!body)
      return error::internal("unreadable response: " + body.err().message);
    return std::move(*body);
  }
  error e{body ? body->get_string("message", res.body) : res.body, res.status,
          body ? body->get_string("reason") : std::string()};
  return e;
}

} // namespace kozmo::apiserver
