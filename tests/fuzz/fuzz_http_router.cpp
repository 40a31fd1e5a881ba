// The embedded API server's front door without sockets: Boost.Beast's request parser set up as
// k8s/apiserver/connection.cpp sets it up (body limit 3 MiB, header limit 1 MiB), fed the input
// in two pieces (where it is cut depends on the input's bytes), and every request that parses
// routed through apiserver::router against a fresh in-memory store, as connection.cpp builds
// it. Up to eight pipelined requests per input, so that a create followed by a patch, a get or
// a delete reaches the handlers with state. A seed is a plain HTTP/1.1 request stream.
//
// Properties besides "no crash": the router does not throw (connection.cpp answers a throw
// with 500 "Internal error", a handler bug), every status is an HTTP status, and a JSON answer
// is valid JSON.
#include "k8s/apiserver/beast_request.hpp"
#include "k8s/apiserver/http_types.hpp"
#include "k8s/apiserver/router.hpp"
#include "k8s/apiserver/store.hpp"
#include "k8s/json/value.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>

using namespace kozmo;
namespace http = boost::beast::http;

namespace {

constexpr std::size_t max_body_bytes = 3 * 1024 * 1024; // apiserver::server::options
constexpr std::uint32_t max_header_bytes = 1024 * 1024; // serve::limits
constexpr int max_requests = 8;

// FNV-1a: where the input is cut in two, stable for a given input.
std::size_t cut_of(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ULL;
  return text.empty() ? 0 : static_cast<std::size_t>(h % (text.size() + 1));
}

void check_response(const apiserver::http_response& res) {
  fuzz::require(res.status >= 100 && res.status <= 599, "the router answers an HTTP status");
  std::string type = res.header("Content-Type");
  if (type.rfind("application/json", 0) == 0 && !res.body.empty())
    fuzz::require(json::parse(res.body).has_value(), "a JSON answer is valid JSON", res.body);
}

void route(const apiserver::router& routes, apiserver::http_request req) {
  apiserver::route_result result;
  try {
    result = routes.handle(req);
  } catch (const std::exception& e) {
    fuzz::property_failed("the router does not throw (connection.cpp would answer 500)", e.what());
  }
  auto* res = std::get_if<apiserver::http_response>(&result);
  if (res)
    check_response(*res);
  // KOZMO_FUZZ_VERBOSE=1: what each request got, to see which handlers a seed reaches.
  static const bool verbose = std::getenv("KOZMO_FUZZ_VERBOSE") != nullptr;
  if (verbose)
    std::fprintf(stderr, "%s %s -> %s\n", req.method.c_str(), req.target.c_str(),
                 res ? (std::to_string(res->status) + " " + res->body.substr(0, 160)).c_str() : "stream");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input = fuzz::as_text(data, size);
  std::size_t cut = cut_of(input);
  std::string_view pieces[2] = {input.substr(0, cut), input.substr(cut)};
  int next_piece = 0;

  std::unique_ptr<apiserver::store> st;
  std::optional<apiserver::router> routes;
  boost::beast::flat_buffer buffer;
  auto more = [&]() -> bool { // the next piece "arrives"; false at the end of the stream
    while (next_piece < 2) {
      std::string_view p = pieces[next_piece++];
      if (p.empty())
        continue;
      auto dest = buffer.prepare(p.size());
      std::memcpy(dest.data(), p.data(), p.size());
      buffer.commit(p.size());
      return true;
    }
    return false;
  };
  more();

  for (int n = 0; n < max_requests; ++n) {
    http::request_parser<http::string_body> parser;
    parser.eager(true);
    parser.body_limit(max_body_bytes);
    parser.header_limit(max_header_bytes);
    boost::beast::error_code ec;
    if (buffer.size() == 0 && !more())
      break; // the client closed the connection between requests
    // What http::read does: parse what is buffered, read more when the parser needs it.
    while (!parser.is_done()) {
      if (buffer.size() == 0 || ec == http::error::need_more) {
        ec = {};
        if (!more()) { // the end of the stream; Beast asserts on an EOF before any byte
          if (parser.got_some())
            parser.put_eof(ec);
          else
            ec = http::error::partial_message;
          break;
        }
      }
      std::size_t used = parser.put(buffer.data(), ec);
      buffer.consume(used);
      if (ec && ec != http::error::need_more)
        break;
    }
    // connection.cpp answers 413 to a body over the limit and closes on any other error.
    if (ec || !parser.is_done())
      break;
    if (!st) {
      auto opened = apiserver::store::open(apiserver::store::options{});
      fuzz::require(opened.has_value(), "an in-memory store opens");
      st = std::move(*opened);
      routes.emplace(*st);
    }
    auto& msg = parser.get();
    bool keep_alive = msg.keep_alive();
    route(*routes, apiserver::from_beast(msg));
    if (!keep_alive)
      break;
  }
  return 0;
}
