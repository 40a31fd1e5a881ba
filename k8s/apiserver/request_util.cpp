#include "k8s/apiserver/request_util.hpp"

#include "k8s/text.hpp"

#include "k8s/json/value.hpp"
#include "k8s/url.hpp"

#include <algorithm>
#include <cctype>

namespace kozmo::apiserver {
namespace {

using text::lower;
using text::split;

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return std::string(s);
}

constexpr std::string_view b64_std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view b64_url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

} // namespace

bool parsed_target::flag(const std::string& name) const {
  auto it = query.find(name);
  if (it == query.end())
    return false;
  std::string v = lower(it->second);
  return v != "false" && v != "0";
}

parsed_target parse_target(std::string_view target) {
  parsed_target t;
  auto q = target.find('?');
  std::string_view path = target.substr(0, q);
  t.path = url::decode(path, false);
  for (auto seg : split(path, '/'))
    if (!seg.empty())
      t.segments.push_back(url::decode(seg, false));
  if (q != std::string_view::npos) {
    for (auto part : split(target.substr(q + 1), '&')) {
      if (part.empty())
        continue;
      auto eq = part.find('=');
      std::string key = url::decode(part.substr(0, eq), true);
      std::string value = eq == std::string_view::npos ? std::string() : url::decode(part.substr(eq + 1), true);
      t.query[key] = value;
    }
  }
  return t;
}

std::string media_type(std::string_view content_type) {
  return lower(trim(content_type.substr(0, content_type.find(';'))));
}

accept_choice parse_accept(std::string_view accept) {
  // Take the first alternative we can produce; kubectl lists Table first, then JSON.
  for (auto alt : split(accept, ',')) {
    auto params = split(alt, ';');
    std::string type = lower(trim(params[0]));
    std::string as, g, v;
    for (std::size_t i = 1; i < params.size(); ++i) {
      std::string p = trim(params[i]);
      auto eq = p.find('=');
      if (eq == std::string::npos)
        continue;
      std::string k = lower(p.substr(0, eq));
      std::string val = p.substr(eq + 1);
      if (k == "as")
        as = val;
      else if (k == "g")
        g = val;
      else if (k == "v")
        v = val;
    }
    if (as.empty()) {
      if (type == "application/json" || type == "*/*" || type == "application/*" || type.empty() ||
          type == "application/vnd.kubernetes.protobuf" || type == "application/yaml")
        return {};
      continue;
    }
    if (g != "meta.k8s.io" || (v != "v1" && v != "v1beta1"))
      continue;  // e.g. apidiscovery.k8s.io aggregated discovery: fall back to the next one
    if (as == "Table")
      return {accept_choice::table, v};
    if (as == "PartialObjectMetadata" || as == "PartialObjectMetadataList")
      return {accept_choice::partial_metadata, v};
  }
  return {};
}

std::string base64_encode(std::string_view in, bool url) {
  std::string_view table = url ? b64_url : b64_std;
  std::string out;
  std::size_t i = 0;
  while (i + 2 < in.size()) {
    std::uint32_t n = (static_cast<unsigned char>(in[i]) << 16) | (static_cast<unsigned char>(in[i + 1]) << 8) |
                      static_cast<unsigned char>(in[i + 2]);
    out += table[(n >> 18) & 63];
    out += table[(n >> 12) & 63];
    out += table[(n >> 6) & 63];
    out += table[n & 63];
    i += 3;
  }
  std::size_t rest = in.size() - i;
  if (rest) {
    std::uint32_t n = static_cast<unsigned char>(in[i]) << 16;
    if (rest == 2)
      n |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += table[(n >> 18) & 63];
    out += table[(n >> 12) & 63];
    if (rest == 2)
      out += table[(n >> 6) & 63];
    if (!url)
      out += rest == 2 ? "=" : "==";
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view in) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r')
      continue;
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+' || c == '-')
      v = 62;
    else if (c == '/' || c == '_')
      v = 63;
    else
      return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string encode_continue(std::uint64_t rv, const std::string& start_key) {
  std::string body = "{\"v\":\"meta.k8s.io/v1\",\"rv\":" + std::to_string(rv) + ",\"start\":";
  json::write_string(body, start_key);
  body += "}";
  return base64_encode(body, true);
}

expected<continue_token> decode_continue(std::string_view token) {
  auto raw = base64_decode(token);
  if (!raw)
    return error::bad_request("invalid continue token: illegal base64 data");
  auto v = json::parse(*raw);
  if (!v || !v->is_object())
    return error::bad_request("invalid continue token: continue key is not valid: unexpected end of JSON input");
  if (v->get_string("v") != "meta.k8s.io/v1")
    return error::bad_request("invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
  continue_token t;
  t.rv = static_cast<std::uint64_t>(v->get_int("rv"));
  t.start_key = v->get_string("start");
  if (t.start_key.empty())
    return error::bad_request("invalid continue token: continue key is not valid: encoded start key empty");
  return t;
}

std::optional<std::int64_t> parse_int(std::string_view s) {
  if (s.empty() || s.size() > 18)
    return std::nullopt;
  bool neg = s[0] == '-';
  if (neg)
    s.remove_prefix(1);
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  std::int64_t v = 0;
  for (char c : s)
    v = v * 10 + (c - '0');
  return neg ? -v : v;
}

} // namespace kozmo::apiserver
