// Plain HTTP request and response values exchanged between the Beast layer (server.cpp) and
// the pure request handlers (router.hpp), so that handlers are testable without sockets.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::apiserver {

using header_list = std::vector<std::pair<std::string, std::string>>;

struct http_request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, as sent ("/api/v1/pods?limit=500")
  header_list headers;
  std::string body;

  // The value of header `name` (case-insensitive), or "" when absent.
  std::string header(std::string_view name) const;
};

struct http_response {
  int status = 200;
  header_list headers;  // Content-Type and extra headers; the server adds Cache-Control & co.
  std::string body;

  void set_header(std::string name, std::string value);
  std::string header(std::string_view name) const;
};

bool iequals(std::string_view a, std::string_view b);

} // namespace kozmo::apiserver
