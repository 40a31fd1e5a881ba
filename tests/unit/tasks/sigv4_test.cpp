// AWS Signature Version 4 against AWS's published vectors: the Signature V4 test suite
// (credentials AKIDEXAMPLE, 20150830T123600Z, us-east-1, service "service") and the S3 API
// reference's "Signature Calculations for the Authorization Header" examples (examplebucket,
// 20130524T000000Z). Each expected canonical request, string to sign and signature is AWS's.
#include "actors/tasks/sigv4.hpp"

#include <catch2/catch.hpp>

using namespace kozmo::sigv4;

namespace {

const credentials suite_keys{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", ""};
const scope suite_scope{"20150830T123600Z", "us-east-1", "service"};
const credentials s3_keys{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""};
const scope s3_scope{"20130524T000000Z", "us-east-1", "s3"};

request suite_request(std::string method, std::string path) {
  request r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  r.payload_hash = empty_payload_sha256;
  return r;
}

std::string signature_of(const credentials& c, const scope& s, const request& r) {
  return signature(c, s, string_to_sign(canonical_request(r), s));
}

} // namespace

TEST_CASE("sigv4 suite get-vanilla: canonical request, string to sign, signature, Authorization") {
  auto r = suite_request("GET", "/");
  std::string creq = canonical_request(r);
  CHECK(creq == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(string_to_sign(creq, suite_scope) == "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
                                             "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  CHECK(authorization(suite_keys, suite_scope, r) ==
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, "
        "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST_CASE("sigv4 suite get-vanilla-query-order-key-case: the query is sorted") {
  auto r = suite_request("GET", "/");
  r.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  CHECK(canonical_request(r) == "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\n"
                                "x-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
                                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(signature_of(suite_keys, suite_scope, r) == "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

TEST_CASE("sigv4 suite get-utf8: a non-ASCII path is percent-encoded once, as UTF-8") {
  auto r = suite_request("GET", "/\xe1\x88\xb4");
  std::string creq = canonical_request(r);
  CHECK(creq == "GET\n/%E1%88%B4\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n"
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(string_to_sign(creq, suite_scope) == "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
                                             "2a0a97d02205e45ce2e994789806b19270cfbbb0921b278ccf58f5249ac42102");
  CHECK(signature_of(suite_keys, suite_scope, r) == "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85");
}

TEST_CASE("sigv4 suite post-vanilla and post-x-www-form-urlencoded: the body's hash and content-type are signed") {
  CHECK(signature_of(suite_keys, suite_scope, suite_request("POST", "/")) ==
        "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b");

  auto r = suite_request("POST", "/");
  r.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  r.payload_hash = sha256_hex("Param1=value1");
  CHECK(r.payload_hash == "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  std::string creq = canonical_request(r);
  CHECK(creq == "POST\n/\n\ncontent-type:application/x-www-form-urlencoded\nhost:example.amazonaws.com\n"
                "x-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n"
                "9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e");
  CHECK(string_to_sign(creq, suite_scope) == "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
                                             "42a5e5bb34198acb3e84da4f085bb7927f2bc277ca766e6d19c73c2154021281");
  CHECK(authorization(suite_keys, suite_scope, r) ==
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date, "
        "Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a");
}

TEST_CASE("sigv4 header values are trimmed and inner spaces folded before signing") {
  auto r = suite_request("GET", "/");
  r.headers.emplace_back("My-Header1", "  a   b   c  ");
  CHECK(canonical_request(r).find("\nmy-header1:a b c\n") != std::string::npos);
  CHECK(signed_headers(r) == "host;my-header1;x-amz-date");
}

TEST_CASE("sigv4 S3 example GET object with Range: what sign_s3 adds is what S3 checks") {
  request r;
  r.method = "GET";
  r.path = "/test.txt";
  r.headers = {{"Range", "bytes=0-9"}};
  r.payload_hash = empty_payload_sha256;
  auto added = sign_s3(s3_keys, s3_scope, "examplebucket.s3.amazonaws.com", r);
  REQUIRE(added.size() == 3);
  CHECK(added[0] == std::pair<std::string, std::string>{"x-amz-date", "20130524T000000Z"});
  CHECK(added[1] == std::pair<std::string, std::string>{"x-amz-content-sha256", empty_payload_sha256});
  CHECK(added[2].first == "Authorization");
  CHECK(added[2].second == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                           "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                           "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");

  // The intermediate steps, as the S3 reference prints them.
  r.headers = {{"Host", "examplebucket.s3.amazonaws.com"}, {"Range", "bytes=0-9"},
               {"x-amz-content-sha256", empty_payload_sha256}, {"x-amz-date", "20130524T000000Z"}};
  std::string creq = canonical_request(r);
  CHECK(creq == "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
                "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"
                "x-amz-date:20130524T000000Z\n\nhost;range;x-amz-content-sha256;x-amz-date\n"
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(string_to_sign(creq, s3_scope) == "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
                                          "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
}

TEST_CASE("sigv4 S3 examples PUT object (a '$' in the key) and ListObjects (a sorted query)") {
  request put;
  put.method = "PUT";
  put.path = "/test$file.text";
  put.headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}};
  put.payload_hash = sha256_hex("Welcome to Amazon S3.");
  CHECK(put.payload_hash == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  auto added = sign_s3(s3_keys, s3_scope, "examplebucket.s3.amazonaws.com", put);
  CHECK(added.back().second ==
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
        "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");

  request list;
  list.method = "GET";
  list.path = "/";
  list.query = {{"prefix", "J"}, {"max-keys", "2"}};
  list.payload_hash = empty_payload_sha256;
  CHECK(canonical_query(list.query) == "max-keys=2&prefix=J");
  CHECK(sign_s3(s3_keys, s3_scope, "examplebucket.s3.amazonaws.com", list).back().second ==
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
        "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
}

TEST_CASE("sigv4 S3 keys: spaces, '+' and UTF-8 encoded once, '/' kept, UNSIGNED-PAYLOAD signed as given") {
  CHECK(uri_encode("/b/a b+c~d/é", true) == "/b/a%20b%2Bc~d/%C3%A9");
  CHECK(uri_encode("a/b", false) == "a%2Fb");
  CHECK(canonical_query({{"list-type", "2"}, {"continuation-token", "1/x=="}, {"prefix", ""}}) ==
        "continuation-token=1%2Fx%3D%3D&list-type=2&prefix=");
  request r;
  r.method = "PUT";
  r.path = "/bucket/big.bin";
  r.payload_hash = unsigned_payload;
  auto added = sign_s3(s3_keys, s3_scope, "127.0.0.1:4569", r);
  CHECK(added[1].second == "UNSIGNED-PAYLOAD");
  r.headers = {{"host", "127.0.0.1:4569"}, {"x-amz-date", "20130524T000000Z"}, {"x-amz-content-sha256", "UNSIGNED-PAYLOAD"}};
  CHECK(canonical_request(r).substr(canonical_request(r).size() - 17) == "\nUNSIGNED-PAYLOAD");
  CHECK(added.back().second == authorization(s3_keys, s3_scope, r));
}

TEST_CASE("sigv4 a session token is sent and signed") {
  credentials c = s3_keys;
  c.session_token = "tok";
  request r;
  r.method = "GET";
  r.path = "/b/k";
  r.payload_hash = empty_payload_sha256;
  auto added = sign_s3(c, s3_scope, "h", r);
  REQUIRE(added.size() == 4);
  CHECK(added[2] == std::pair<std::string, std::string>{"x-amz-security-token", "tok"});
  CHECK(added[3].second.find("SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") !=
        std::string::npos);
}
