// The access check of Kozmo's secured endpoints (extender_server's server_options::authorize):
// the caller's bearer token is reviewed by the cluster (TokenReview), then its user's right to
// the URL (SubjectAccessReview on the non-resource path, verb = the HTTP method in lower case),
// with the reviews cached (access_review.hpp). A caller that presented a client certificate the
// server's client CA signed (mutual TLS) is let through without a token: the CA vouches for it.
//
//   GET /metrics, no token                      -> 401
//   a token the cluster does not know           -> 401
//   a known user without "get" on /metrics      -> 403, naming the user and the URL
//   the reviews cannot be made (API unreachable, or Kozmo lacks "create" on tokenreviews /
//   subjectaccessreviews)                       -> 503, saying which
//
// The reviewer needs, in Kozmo's ClusterRole: create on authentication.k8s.io tokenreviews and
// on authorization.k8s.io subjectaccessreviews.
#pragma once

#include "actors/extender/access_review.hpp"
#include "actors/extender/extender_server.hpp"

#include <memory>

namespace kozmo::client {
class client;
}

namespace kozmo::extender {

access_check delegated_access(std::shared_ptr<client::client> cli, access_ttls ttls = {});

} // namespace kozmo::extender
