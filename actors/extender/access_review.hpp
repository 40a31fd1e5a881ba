// Who may call Kozmo's HTTP endpoints, decided the way kube-rbac-proxy and controller-runtime's
// secure metrics decide it: the caller's bearer token is checked with the cluster's TokenReview
// (authentication.k8s.io/v1), and the user it names with a SubjectAccessReview
// (authorization.k8s.io/v1) on the non-resource URL (the request's path, the HTTP method in
// lower case as the verb: "get" for GET /metrics). No token or a token the cluster does not
// know: 401. A known user without the right: 403. Answers are cached as the apiserver's
// delegating authenticator and authorizer cache them (a token 2 min; allowed 5 min, denied
// 30 s), so a scrape every few seconds costs no review.
//
// Pure: request bodies, answers, and the cache; the calls themselves are made by
// delegated_auth.hpp.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::extender {

// The token of an "Authorization: Bearer TOKEN" header ("" when there is none).
std::string bearer_token(std::string_view authorization);

// A user as TokenReview reports it.
struct reviewed_user {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// POST /apis/authentication.k8s.io/v1/tokenreviews
json::value token_review_body(const std::string& token);
// The user when status.authenticated is true; nullopt when the cluster does not know the token;
// an error when the answer cannot be read.
expected<std::optional<reviewed_user>> read_token_review(const json::value& answer);

// POST /apis/authorization.k8s.io/v1/subjectaccessreviews: may `user` `verb` the URL `path`?
json::value access_review_body(const reviewed_user& user, const std::string& verb, const std::string& path);
struct review_verdict {
  bool allowed = false;
  std::string reason; // status.reason (or evaluationError), for the 403's message
};
expected<review_verdict> read_access_review(const json::value& answer);

// The non-resource URL a request is checked against: the target's path without the query.
std::string access_path(std::string_view target);

// How long reviews are remembered (kube-apiserver's delegating defaults).
struct access_ttls {
  std::chrono::seconds authenticated{120};
  std::chrono::seconds unauthenticated{10};
  std::chrono::seconds allowed{300};
  std::chrono::seconds denied{30};
};

// Remembers reviews for their time to live. Keys are the token (authentication) and
// user + verb + path (authorization); a token is kept as a hash, never as written.
class access_cache {
public:
  using clock = std::chrono::steady_clock;
  explicit access_cache(access_ttls t = {}, std::size_t max_entries = 4096) : ttl_(t), max_(max_entries) {}

  // nullopt: not cached. Inside: nullopt user = the token is not authenticated.
  std::optional<std::optional<reviewed_user>> user(const std::string& token, clock::time_point now) const;
  void remember_user(const std::string& token, std::optional<reviewed_user> u, clock::time_point now);

  std::optional<review_verdict> verdict(const reviewed_user& u, const std::string& verb, const std::string& path,
                                        clock::time_point now) const;
  void remember_verdict(const reviewed_user& u, const std::string& verb, const std::string& path,
                        review_verdict v, clock::time_point now);

private:
  template <class T>
  struct entry {
    T value;
    clock::time_point expires;
  };
  template <class Map>
  void make_room(Map& m, clock::time_point now);
  access_ttls ttl_;
  std::size_t max_;
  std::map<std::string, entry<std::optional<reviewed_user>>> users_;
  std::map<std::string, entry<review_verdict>> verdicts_;
};

} // namespace kozmo::extender
