// AWS Signature Version 4, as S3 (and S3-compatible stores) check it. Pure: no CAF, no I/O, no
// clock (callers pass the time as "YYYYMMDDTHHMMSSZ"). OpenSSL does the SHA-256 and HMAC.
//
// The steps, each a function so that a test can compare it with AWS's published vectors:
//   1. canonical_request: METHOD \n URI \n QUERY \n HEADERS \n SIGNED-HEADERS \n PAYLOAD-HASH
//      - the URI is each path segment URI-encoded once (S3 does not normalize "." / ".." or
//        double slashes, and keys are encoded exactly once; the generic services the test
//        suite names "service" encode the same way for the paths Kozmo sends);
//      - the query is sorted by encoded name then value, each encoded with the unreserved set
//        A-Z a-z 0-9 - _ . ~ ("name=" for a name without value);
//      - header names lower case, values trimmed with inner runs of spaces folded to one,
//        sorted by name; signed headers are those names joined by ';'.
//   2. string_to_sign: "AWS4-HMAC-SHA256" \n DATE \n SCOPE \n hex(sha256(canonical request))
//      with SCOPE = YYYYMMDD/region/service/aws4_request.
//   3. signing_key = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, YYYYMMDD), region), service),
//      "aws4_request"); signature = hex(HMAC(signing key, string to sign)).
//   4. Authorization: "AWS4-HMAC-SHA256 Credential=<id>/<scope>, SignedHeaders=<...>,
//      Signature=<hex>".
//
// For S3 the payload hash is also sent as x-amz-content-sha256; `unsigned_payload` is the
// literal "UNSIGNED-PAYLOAD" S3 accepts instead (over TLS), which lets a large upload start
// before its hash is known.
#pragma once

#include "actors/tasks/sha256.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::sigv4 {

inline constexpr const char* unsigned_payload = "UNSIGNED-PAYLOAD";
inline constexpr const char* empty_payload_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token; // "" when none; else sent and signed as x-amz-security-token
};

// What is signed. `path` is the raw (not yet encoded) absolute path ("/bucket/a b.txt");
// `query` the raw name/value pairs, in any order; `headers` every header that is signed
// (Host and x-amz-date included: sign_request adds them).
struct request {
  std::string method;
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload_hash; // hex sha256 of the body, or unsigned_payload
};

struct scope {
  std::string amz_date; // "20150830T123600Z"
  std::string region;   // "us-east-1"
  std::string service;  // "s3"
  std::string date() const { return amz_date.substr(0, 8); }
  std::string text() const { return date() + "/" + region + "/" + service + "/aws4_request"; }
};

// URI-encoding with the unreserved set; '/' kept when `keep_slash` (paths).
std::string uri_encode(std::string_view s, bool keep_slash);
// The query as it goes on the wire and into the canonical request: sorted, encoded, '&'-joined.
std::string canonical_query(const std::vector<std::pair<std::string, std::string>>& query);

using tasks::hex;
using tasks::sha256_hex;
std::string hmac_sha256(std::string_view key, std::string_view data); // raw 32 bytes

std::string canonical_request(const request& r);
std::string signed_headers(const request& r);
std::string string_to_sign(const std::string& canonical, const scope& s);
std::string signing_key(const std::string& secret, const scope& s); // raw 32 bytes
std::string signature(const credentials& c, const scope& s, const std::string& string_to_sign);
std::string authorization(const credentials& c, const scope& s, const request& r);

// The headers to add to an S3 request: x-amz-date, x-amz-content-sha256 (the payload hash),
// x-amz-security-token when a session token is set, and Authorization. `host` is the Host
// header as sent ("bucket.s3.amazonaws.com", "127.0.0.1:4569"); `r.headers` may hold more
// headers to sign (Range, Content-Type); they must also be sent as given.
std::vector<std::pair<std::string, std::string>> sign_s3(const credentials& c, const scope& s, const std::string& host,
                                                         request r);

} // namespace kozmo::sigv4
