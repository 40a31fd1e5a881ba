// simdjson DOM → json::value. simdjson stays inside this file.
#include "k8s/json/value.hpp"
#include "k8s/json/big_integers.hpp"

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

// Whether an integer literal (an optional '-' and digits) lies outside int64 and uint64.
bool beyond_64_bits(std::string_view literal) {
  bool negative = !literal.empty() && literal[0] == '-';
  std::string_view digits = literal.substr(negative ? 1 : 0);
  std::string_view limit = negative ? "9223372036854775808" : "18446744073709551615";
  return digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit);
}

} // namespace

std::string widen_big_integers(std::string_view text) {
  std::string out;
  bool found = false, in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    char c = text[i];
    if (in_string) {
      out += c;
      ++i;
      if (c == '\\' && i < text.size())
        out += text[i++];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      ++i;
      continue;
    }
    if (c != '-' && (c < '0' || c > '9')) {
      out += c;
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < text.size() && std::string_view("0123456789.eE+-").find(text[end]) != std::string_view::npos)
      ++end;
    std::string_view token = text.substr(i, end - i);
    out += token;
    if (token.find_first_of(".eE+", 1) == std::string_view::npos && token.find('-', 1) == std::string_view::npos &&
        beyond_64_bits(token)) {
      out += ".0";
      found = true;
    }
    i = end;
  }
  return found ? out : std::string();
}

expected<value> parse(std::string_view text) {
  // One parser per thread (simdjson parsers are not thread-safe and are costly to create).
  thread_local simdjson::dom::parser parser;
  if (std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }))
    return error::bad_request("json parse error: unexpected end of JSON input");
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  auto err = parser.parse(padded).get(root);
  if (err == simdjson::NUMBER_ERROR) {
    if (std::string widened = widen_big_integers(text); !widened.empty()) {
      simdjson::padded_string again(widened);
      if (!parser.parse(again).get(root))
        return convert(root);
    }
  }
  if (err)
    return error::bad_request("json parse error: " + describe(err, text));
  return convert(root);
}

} // namespace kozmo::json
