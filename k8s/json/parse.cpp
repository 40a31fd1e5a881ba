// simdjson DOM → json::value. simdjson stays inside this file.
#include "k8s/json/value.hpp"

#include <simdjson.h>

#include <algorithm>

namespace kozmo::json {
namespace {

value convert(simdjson::dom::element e) {
  using simdjson::dom::element_type;
  switch (e.type()) {
  case element_type::OBJECT: {
    json::object obj;
    for (auto field : simdjson::dom::object(e))
      obj.set(field.key, convert(field.value));
    return obj;
  }
  case element_type::ARRAY: {
    json::array arr;
    auto a = simdjson::dom::array(e);
    arr.reserve(a.size());
    for (auto item : a)
      arr.push_back(convert(item));
    return arr;
  }
  case element_type::STRING:
    return std::string_view(e);
  case element_type::INT64:
    return static_cast<long long>(std::int64_t(e));
  case element_type::UINT64: {
    auto u = std::uint64_t(e);
    return u <= static_cast<std::uint64_t>(INT64_MAX) ? value(static_cast<long long>(u))
                                                     : value(static_cast<double>(u));
  }
  case element_type::DOUBLE:
    return double(e);
  case element_type::BOOL:
    return bool(e);
  case element_type::NULL_VALUE:
    return nullptr;
  }
  return nullptr;
}

// simdjson reports errors without a position; give the user a hint of where the text stops
// making sense by reporting the error kind plus the start of the text.
std::string describe(simdjson::error_code code, std::string_view text) {
  std::string msg = simdjson::error_message(code);
  std::string_view head = text.substr(0, std::min<std::size_t>(text.size(), 40));
  msg += " (";
  msg += head;
  if (head.size() < text.size())
    msg += " ...";
  msg += ")";
  return msg;
}

} // namespace

expected<value> parse(std::string_view text) {
  // One parser per thread (simdjson parsers are not thread-safe and are costly to create).
  thread_local simdjson::dom::parser parser;
  if (std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }))
    return error::bad_request("json parse error: unexpected end of JSON input");
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  auto err = parser.parse(padded).get(root);
  if (err)
    return error::bad_request("json parse error: " + describe(err, text));
  return convert(root);
}

} // namespace kozmo::json
