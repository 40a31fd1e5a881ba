// Parsing the parts of a request the handlers look at: path segments, query parameters,
// media types, and the continue tokens of paged lists.
#pragma once

#include "k8s/error.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::apiserver {

struct parsed_target {
  std::string path;                            // decoded path, no query
  std::vector<std::string> segments;           // path split on '/', empty ones dropped
  std::map<std::string, std::string> query;    // last value wins

  std::string param(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  }
  bool has(const std::string& name) const { return query.count(name) != 0; }
  // "true" / "1" (and any value but "false"/"0" present) count as true.
  bool flag(const std::string& name) const;
};

parsed_target parse_target(std::string_view target);

// The media type of a Content-Type header, lower-cased, without parameters.
std::string media_type(std::string_view content_type);

// What the client accepts for a GET: plain JSON, a meta.k8s.io Table, or metadata only.
struct accept_choice {
  enum kind { json, table, partial_metadata } what = json;
  std::string meta_version = "v1";  // meta.k8s.io version asked for (Table / PartialObjectMetadata)
};
accept_choice parse_accept(std::string_view accept);

// Continue tokens: base64url of {"v":"meta.k8s.io/v1","rv":N,"start":"<key>"}.
std::string encode_continue(std::uint64_t rv, const std::string& start_key);
struct continue_token {
  std::uint64_t rv = 0;
  std::string start_key;
};
expected<continue_token> decode_continue(std::string_view token);

std::string base64_encode(std::string_view in, bool url = false);
std::optional<std::string> base64_decode(std::string_view in);

// Strict non-negative integer parse ("12"); nullopt otherwise.
std::optional<std::int64_t> parse_int(std::string_view s);

} // namespace kozmo::apiserver
