#include "actors/extender/delegated_auth.hpp"

#include "k8s/client/client.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace kozmo::extender {

namespace {

using done_fn = std::function<void(access_verdict)>;
using clock = access_cache::clock;

struct reviewer : std::enable_shared_from_this<reviewer> {
  std::shared_ptr<client::client> cli;
  std::mutex mu;
  access_cache cache;

  reviewer(std::shared_ptr<client::client> c, access_ttls t) : cli(std::move(c)), cache(t) {}

  void check(access_request req, done_fn done) {
    if (req.client_certificate)
      return done({});
    auto token = bearer_token(req.authorization);
    if (token.empty())
      return done({401, "Unauthorized: send a bearer token the cluster accepts (Authorization: Bearer TOKEN)"});
    std::string verb = req.method;
    std::transform(verb.begin(), verb.end(), verb.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string path = access_path(req.target);
    std::optional<std::optional<reviewed_user>> known;
    {
      std::lock_guard lock(mu);
      known = cache.user(token, clock::now());
    }
    if (known)
      return authorize(std::move(*known), std::move(verb), std::move(path), std::move(done));
    auto self = shared_from_this();
    cli->create({"authentication.k8s.io", "v1", "tokenreviews", "", "", ""}, token_review_body(token),
                [self, token, verb, path, done](expected<json::value> answer) mutable {
                  if (!answer)
                    return done({503, "cannot review the caller's token (TokenReview): " + answer.err().message});
                  auto user = read_token_review(*answer);
                  if (!user)
                    return done({503, "cannot review the caller's token: " + user.err().message});
                  {
                    std::lock_guard lock(self->mu);
                    self->cache.remember_user(token, *user, clock::now());
                  }
                  self->authorize(std::move(*user), std::move(verb), std::move(path), std::move(done));
                });
  }

  void authorize(std::optional<reviewed_user> user, std::string verb, std::string path, done_fn done) {
    if (!user)
      return done({401, "Unauthorized: the cluster does not accept this token (TokenReview)"});
    std::optional<review_verdict> known;
    {
      std::lock_guard lock(mu);
      known = cache.verdict(*user, verb, path, clock::now());
    }
    if (known)
      return done(answer(*user, verb, path, *known));
    auto self = shared_from_this();
    auto body = access_review_body(*user, verb, path); // before the callback takes the user
    cli->create({"authorization.k8s.io", "v1", "subjectaccessreviews", "", "", ""}, body,
                [self, user = std::move(*user), verb, path, done](expected<json::value> reply) {
                  if (!reply)
                    return done({503, "cannot review the caller's access (SubjectAccessReview): " +
                                          reply.err().message});
                  auto verdict = read_access_review(*reply);
                  if (!verdict)
                    return done({503, "cannot review the caller's access: " + verdict.err().message});
                  {
                    std::lock_guard lock(self->mu);
                    self->cache.remember_verdict(user, verb, path, *verdict, clock::now());
                  }
                  done(answer(user, verb, path, *verdict));
                });
  }

  static access_verdict answer(const reviewed_user& user, const std::string& verb, const std::string& path,
                               const review_verdict& v) {
    if (v.allowed)
      return {};
    std::string msg = "Forbidden: user \"" + user.username + "\" may not " + verb + " " + path;
    if (!v.reason.empty())
      msg += " (" + v.reason + ")";
    spdlog::debug("http: {}", msg);
    return {403, std::move(msg)};
  }
};

} // namespace

access_check delegated_access(std::shared_ptr<client::client> cli, access_ttls ttls) {
  auto r = std::make_shared<reviewer>(std::move(cli), ttls);
  return [r](access_request req, done_fn done) { r->check(std::move(req), std::move(done)); };
}

} // namespace kozmo::extender
