#include "actors/tasks/sigv4.hpp"

#include "k8s/text.hpp"
#include "k8s/url.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace kozmo::sigv4 {
namespace {

using text::lower;

// Leading and trailing spaces removed, inner runs of spaces folded to one (SigV4's "Trimall").
std::string trim_all(std::string_view v) {
  std::string out;
  bool space = false;
  for (char c : v) {
    if (c == ' ' || c == '\t') {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// name → values in the order given: a repeated header signs as its values joined by ','.
std::map<std::string, std::string> canonical_headers_map(const request& r) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : r.headers) {
    auto [it, fresh] = out.try_emplace(lower(name), trim_all(value));
    if (!fresh)
      it->second += "," + trim_all(value);
  }
  return out;
}

} // namespace

std::string uri_encode(std::string_view s, bool keep_slash) {
  if (!keep_slash)
    return url::encode(s);
  // S3 object keys keep their slashes: each segment on its own.
  std::string out;
  out.reserve(s.size());
  std::size_t from = 0;
  for (;;) {
    auto slash = s.find('/', from);
    out += url::encode(s.substr(from, slash == std::string_view::npos ? std::string_view::npos : slash - from));
    if (slash == std::string_view::npos)
      return out;
    out += '/';
    from = slash + 1;
  }
}

std::string canonical_query(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(query.size());
  for (const auto& [k, v] : query)
    encoded.emplace_back(uri_encode(k, false), uri_encode(v, false));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [k, v] : encoded)
    out += (out.empty() ? "" : "&") + k + "=" + v;
  return out;
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), md, &len);
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string signed_headers(const request& r) {
  std::string out;
  for (const auto& [name, _] : canonical_headers_map(r))
    out += (out.empty() ? "" : ";") + name;
  return out;
}

std::string canonical_request(const request& r) {
  std::string out = r.method + "\n";
  out += uri_encode(r.path.empty() ? "/" : r.path, true) + "\n";
  out += canonical_query(r.query) + "\n";
  for (const auto& [name, value] : canonical_headers_map(r))
    out += name + ":" + value + "\n";
  out += "\n" + signed_headers(r) + "\n";
  out += r.payload_hash;
  return out;
}

std::string string_to_sign(const std::string& canonical, const scope& s) {
  return "AWS4-HMAC-SHA256\n" + s.amz_date + "\n" + s.text() + "\n" + sha256_hex(canonical);
}

std::string signing_key(const std::string& secret, const scope& s) {
  std::string k = hmac_sha256("AWS4" + secret, s.date());
  k = hmac_sha256(k, s.region);
  k = hmac_sha256(k, s.service);
  return hmac_sha256(k, "aws4_request");
}

std::string signature(const credentials& c, const scope& s, const std::string& sts) {
  return hex(hmac_sha256(signing_key(c.secret_access_key, s), sts));
}

std::string authorization(const credentials& c, const scope& s, const request& r) {
  std::string sts = string_to_sign(canonical_request(r), s);
  return "AWS4-HMAC-SHA256 Credential=" + c.access_key_id + "/" + s.text() + ", SignedHeaders=" + signed_headers(r) +
         ", Signature=" + signature(c, s, sts);
}

std::vector<std::pair<std::string, std::string>> sign_s3(const credentials& c, const scope& s, const std::string& host,
                                                         request r) {
  std::vector<std::pair<std::string, std::string>> added = {
      {"x-amz-date", s.amz_date},
      {"x-amz-content-sha256", r.payload_hash},
  };
  if (!c.session_token.empty())
    added.emplace_back("x-amz-security-token", c.session_token);
  r.headers.emplace_back("host", host);
  for (const auto& h : added)
    r.headers.push_back(h);
  added.emplace_back("Authorization", authorization(c, s, r));
  return added;
}

} // namespace kozmo::sigv4
