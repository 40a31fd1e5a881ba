// Who may call the secured endpoints: the TokenReview and SubjectAccessReview bodies and
// answers as the Kubernetes API (v1) writes them, and how long reviews are remembered.
#include "actors/extender/access_review.hpp"
#include "k8s/json/value.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::extender;
using namespace std::chrono_literals;

namespace {

json::value parse(const std::string& text) {
  auto v = json::parse(text);
  REQUIRE(v);
  return *v;
}

reviewed_user prometheus() {
  reviewed_user u;
  u.username = "system:serviceaccount:monitoring:prometheus";
  u.uid = "5f0c";
  u.groups = {"system:serviceaccounts", "system:serviceaccounts:monitoring", "system:authenticated"};
  return u;
}

} // namespace

TEST_CASE("A bearer token is taken from the Authorization header, whatever the scheme's case") {
  CHECK(bearer_token("Bearer abc.def") == "abc.def");
  CHECK(bearer_token("bearer   abc ") == "abc");
  CHECK(bearer_token("Basic dXNlcjpwYXNz").empty());
  CHECK(bearer_token("Bearer").empty());
  CHECK(bearer_token("").empty());
}

TEST_CASE("A TokenReview asks about the token and reads the user the cluster names") {
  auto body = token_review_body("tok");
  CHECK(body.get_string("apiVersion") == "authentication.k8s.io/v1");
  CHECK(body.get_string("kind") == "TokenReview");
  CHECK(body.at_path({"spec", "token"})->as_string() == "tok");

  auto answer = parse(R"({"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1","spec":{"token":"tok"},
    "status":{"authenticated":true,"user":{"username":"system:serviceaccount:kozmo-system:kozmo-controller",
    "uid":"u-1","groups":["system:serviceaccounts","system:authenticated"],
    "extra":{"authentication.kubernetes.io/pod-name":["kozmo-0"]}},"audiences":["https://kubernetes.default.svc"]}})");
  auto user = read_token_review(answer);
  REQUIRE(user);
  REQUIRE(user->has_value());
  CHECK((*user)->username == "system:serviceaccount:kozmo-system:kozmo-controller");
  CHECK((*user)->uid == "u-1");
  CHECK((*user)->groups == std::vector<std::string>{"system:serviceaccounts", "system:authenticated"});
  CHECK((*user)->extra.at("authentication.kubernetes.io/pod-name") == std::vector<std::string>{"kozmo-0"});
}

TEST_CASE("A token the cluster does not know is no user, and a garbled answer is an error") {
  auto unknown = read_token_review(parse(R"({"kind":"TokenReview","status":{"authenticated":false,
    "error":"[invalid bearer token, token lookup failed]"}})"));
  REQUIRE(unknown);
  CHECK_FALSE(unknown->has_value());
  auto no_status = read_token_review(parse(R"({"kind":"TokenReview","spec":{"token":"x"}})"));
  REQUIRE(no_status);
  CHECK_FALSE(no_status->has_value());
  CHECK_FALSE(read_token_review(parse(R"({"kind":"Status","code":403})")));
  CHECK_FALSE(read_token_review(parse(R"({"kind":"TokenReview","status":{"authenticated":true,"user":{}}})")));
}

TEST_CASE("A SubjectAccessReview asks for the user's right to the non-resource URL") {
  auto u = prometheus();
  u.extra["scopes"] = {"a", "b"};
  auto body = access_review_body(u, "get", "/metrics");
  CHECK(body.get_string("apiVersion") == "authorization.k8s.io/v1");
  CHECK(body.get_string("kind") == "SubjectAccessReview");
  const auto& spec = *body.find("spec");
  CHECK(spec.get_string("user") == "system:serviceaccount:monitoring:prometheus");
  CHECK(spec.get_string("uid") == "5f0c");
  CHECK(spec.find("groups")->as_array().size() == 3);
  CHECK(spec.at_path({"extra", "scopes"})->as_array().size() == 2);
  CHECK(spec.at_path({"nonResourceAttributes", "path"})->as_string() == "/metrics");
  CHECK(spec.at_path({"nonResourceAttributes", "verb"})->as_string() == "get");
  CHECK(spec.find("resourceAttributes") == nullptr);
}

TEST_CASE("A SubjectAccessReview's verdict: allowed, or not with the authorizer's reason") {
  auto yes = read_access_review(parse(R"({"kind":"SubjectAccessReview","status":{"allowed":true,
    "reason":"RBAC: allowed by ClusterRoleBinding \"kozmo-metrics-reader\""}})"));
  REQUIRE(yes);
  CHECK(yes->allowed);
  auto no = read_access_review(parse(R"({"kind":"SubjectAccessReview","status":{"allowed":false}})"));
  REQUIRE(no);
  CHECK_FALSE(no->allowed);
  auto denied = read_access_review(parse(R"({"kind":"SubjectAccessReview","status":{"allowed":true,"denied":true,
    "reason":"blocked"}})"));
  REQUIRE(denied);
  CHECK_FALSE(denied->allowed);
  CHECK(denied->reason == "blocked");
  auto broken = read_access_review(parse(R"({"kind":"SubjectAccessReview","status":{"allowed":false,
    "evaluationError":"webhook down"}})"));
  REQUIRE(broken);
  CHECK(broken->reason == "webhook down");
  CHECK_FALSE(read_access_review(parse(R"({"kind":"Status","code":403,"message":"forbidden"})")));
}

TEST_CASE("The URL checked is the request's path without its query") {
  CHECK(access_path("/metrics") == "/metrics");
  CHECK(access_path("/v1/inspect/clusterstatus?pretty=1") == "/v1/inspect/clusterstatus");
  CHECK(access_path("/metrics#x") == "/metrics");
}

TEST_CASE("Reviews are remembered as the API server's delegating authenticator and authorizer do") {
  access_cache cache;
  auto t0 = access_cache::clock::time_point{} + 1h;
  auto u = prometheus();
  CHECK_FALSE(cache.user("tok", t0));
  cache.remember_user("tok", u, t0);
  cache.remember_user("bad", std::nullopt, t0);
  REQUIRE(cache.user("tok", t0 + 119s));
  CHECK(cache.user("tok", t0 + 119s)->value().username == u.username);
  CHECK_FALSE(cache.user("tok", t0 + 120s)); // an accepted token: 2 minutes
  REQUIRE(cache.user("bad", t0 + 9s));
  CHECK_FALSE(cache.user("bad", t0 + 9s)->has_value());
  CHECK_FALSE(cache.user("bad", t0 + 10s)); // a refused one: 10 seconds

  cache.remember_verdict(u, "get", "/metrics", {true, ""}, t0);
  cache.remember_verdict(u, "get", "/v1/inspect/clusterstatus", {false, "no"}, t0);
  CHECK(cache.verdict(u, "get", "/metrics", t0 + 299s)->allowed);
  CHECK_FALSE(cache.verdict(u, "get", "/metrics", t0 + 300s)); // allowed: 5 minutes
  CHECK_FALSE(cache.verdict(u, "get", "/v1/inspect/clusterstatus", t0 + 29s)->allowed);
  CHECK_FALSE(cache.verdict(u, "get", "/v1/inspect/clusterstatus", t0 + 30s)); // denied: 30 seconds
  CHECK_FALSE(cache.verdict(u, "post", "/metrics", t0)); // another verb is another question
  auto other = u;
  other.groups.push_back("admins");
  CHECK_FALSE(cache.verdict(other, "get", "/metrics", t0)); // other groups, another question
}

TEST_CASE("The review cache stays bounded") {
  access_cache cache({}, 8);
  auto t0 = access_cache::clock::time_point{} + 1h;
  for (int i = 0; i < 100; ++i)
    cache.remember_user("tok-" + std::to_string(i), prometheus(), t0);
  int kept = 0;
  for (int i = 0; i < 100; ++i)
    kept += cache.user("tok-" + std::to_string(i), t0).has_value();
  CHECK(kept <= 8);
  CHECK(cache.user("tok-99", t0)); // the newest is there
}
