// A request Beast parsed, as the router takes it (http_types.hpp). Beast stays out of
// http_types.hpp: only the connection and the HTTP fuzz target include this.
#pragma once

#include "k8s/apiserver/http_types.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>
#include <utility>

namespace kozmo::apiserver {

// Moves the body out of `msg`.
inline http_request from_beast(boost::beast::http::request<boost::beast::http::string_body>& msg) {
  http_request req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  for (const auto& field : msg)
    req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  req.body = std::move(msg.body());
  return req;
}

} // namespace kozmo::apiserver
