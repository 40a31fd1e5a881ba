#include "actors/extender/http_api.hpp"
#include "ui/ui_assets.hpp"

#include "k8s/metrics/registry.hpp"

#include <spdlog/spdlog.h>

#include <charconv>

namespace kozmo::extender {

route route_of(std::string_view method, std::string_view target) {
  auto path = target.substr(0, target.find('?'));
  route r;
  auto want = [&](route_kind kind, std::string_view verb) {
    r.kind = method == verb ? kind : route_kind::method_not_allowed;
    return r;
  };
  if (path == "/v1/extender/filter")
    return want(route_kind::filter, "POST");
  if (path == "/v1/extender/preempt")
    return want(route_kind::preempt, "POST");
  if (path == "/v1/extender/bind")
    return want(route_kind::bind, "POST");
  if (path == "/healthz")
    return want(route_kind::healthz, "GET");
  if (path == "/readyz")
    return want(route_kind::readyz, "GET");
  if (path == "/metrics")
    return want(route_kind::metrics, "GET");
  if (path.substr(0, 4) == "/ui/") {
    r.kind = route_kind::ui; // ui::serve answers 404 and 405 itself
    return r;
  }
  if (auto q = scheduler::parse_inspect_path(path)) {
    r.query = std::move(*q);
    return want(route_kind::inspect, "GET");
  }
  r.kind = route_kind::not_found;
  return r;
}

http_answer error_answer(const error& e) {
  unsigned code = e.code >= 400 && e.code < 600 ? static_cast<unsigned>(e.code) : 500u;
  return {code, encode_error(static_cast<int>(code), e.message)};
}

namespace {

template <class Decode, class Call>
void call_backend(const std::function<void(http_answer)>& answer, const std::string& body, Decode decode, Call call) {
  auto args = decode(body);
  if (!args)
    return answer(error_answer(args.err()));
  call(std::move(*args), [answer](auto result) {
    if (!result)
      return answer(error_answer(result.err()));
    answer(http_answer{200, encode(*result)});
  });
}

} // namespace

void serve_request(extender_backend& backend, std::string_view method, std::string_view target,
                   const std::string& body, std::function<void(http_answer)> done) {
  auto r = route_of(method, target);
  try {
    switch (r.kind) {
    case route_kind::healthz:
      return done({200, "ok", "text/plain; charset=utf-8"});
    case route_kind::readyz: {
      auto why = backend.not_ready();
      if (why.empty())
        return done({200, "ok", "text/plain; charset=utf-8"});
      return done({503, why + "\n", "text/plain; charset=utf-8"});
    }
    case route_kind::metrics:
      return done({200, metrics::render(), metrics::content_type});
    case route_kind::ui: {
      auto a = ui::serve(method, target.substr(0, target.find('?')));
      return done({static_cast<unsigned>(a.status), std::string(a.body), a.content_type.data()});
    }
    case route_kind::not_found:
      return done({404, encode_error(404, "no such path: " + std::string(target))});
    case route_kind::method_not_allowed:
      return done({405, encode_error(405, std::string(method) + " is not allowed on " + std::string(target))});
    case route_kind::filter:
      return call_backend(done, body, decode_filter_args,
                          [&](filter_args a, auto reply) { backend.filter(std::move(a), std::move(reply)); });
    case route_kind::preempt:
      return call_backend(done, body, decode_preempt_args,
                          [&](preempt_args a, auto reply) { backend.preempt(std::move(a), std::move(reply)); });
    case route_kind::bind:
      return call_backend(done, body, decode_bind_args,
                          [&](bind_args a, auto reply) { backend.bind(std::move(a), std::move(reply)); });
    case route_kind::inspect:
      return backend.inspect(std::string(target.substr(0, target.find('?'))), [done](scheduler::inspect_answer a) {
        done({static_cast<unsigned>(a.status), std::move(a.body)});
      });
    }
  } catch (const std::exception& e) {
    // A backend must not throw; if one does, the request fails and the server lives on.
    spdlog::error("HTTP backend threw: {}", e.what());
    return done(error_answer(error::internal(std::string("internal error: ") + e.what())));
  }
}

expected<std::pair<std::string, unsigned short>> parse_listen(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return error{"listen address '" + std::string(text) + "' is not host:port"};
  auto host = std::string(text.substr(0, colon));
  auto port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535 || port_text.empty())
    return error{"listen address '" + std::string(text) + "' has no valid port"};
  return std::make_pair(host.empty() ? std::string("0.0.0.0") : host, static_cast<unsigned short>(port));
}

bool is_loopback(std::string_view host) {
  return host.substr(0, 4) == "127." || host == "::1" || host == "localhost";
}

} // namespace kozmo::extender
