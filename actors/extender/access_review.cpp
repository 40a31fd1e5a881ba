#include "actors/extender/access_review.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

namespace kozmo::extender {

namespace {

// The cache keeps a token's SHA-256, so that a heap dump does not hand out live tokens.
std::string token_key(const std::string& token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

std::string verdict_key(const reviewed_user& u, const std::string& verb, const std::string& path) {
  std::string key = u.username + '\n' + u.uid + '\n' + verb + '\n' + path;
  for (const auto& g : u.groups)
    key += '\n' + g;
  for (const auto& [k, vs] : u.extra) {
    key += "\n" + k + "=";
    for (const auto& v : vs)
      key += v + ",";
  }
  return key;
}

json::array strings(const std::vector<std::string>& v) {
  json::array out;
  for (const auto& s : v)
    out.emplace_back(s);
  return out;
}

} // namespace

std::string bearer_token(std::string_view authorization) {
  constexpr std::string_view scheme = "bearer";
  if (authorization.size() <= scheme.size())
    return {};
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i])
      return {};
  if (authorization[scheme.size()] != ' ')
    return {};
  auto token = authorization.substr(scheme.size() + 1);
  while (!token.empty() && token.front() == ' ')
    token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\r'))
    token.remove_suffix(1);
  return std::string(token);
}

json::value token_review_body(const std::string& token) {
  json::value body;
  body["apiVersion"] = "authentication.k8s.io/v1";
  body["kind"] = "TokenReview";
  body["spec"]["token"] = token;
  return body;
}

expected<std::optional<reviewed_user>> read_token_review(const json::value& answer) {
  const json::value* status = answer.find("status");
  if (!answer.is_object() || answer.get_string("kind") != "TokenReview")
    return error::bad_request("the TokenReview answer is not a TokenReview");
  if (!status || !status->get_bool("authenticated"))
    return std::optional<reviewed_user>{};
  const json::value* user = status->find("user");
  if (!user || user->get_string("username").empty())
    return error::bad_request("the TokenReview authenticated a token but named no user");
  reviewed_user u;
  u.username = user->get_string("username");
  u.uid = user->get_string("uid");
  u.groups = json::strings_of(user->find("groups"));
  if (const json::value* extra = user->find("extra"); extra && extra->is_object())
    for (const auto& [k, v] : extra->as_object())
      u.extra[k] = json::strings_of(&v);
  return std::optional<reviewed_user>(std::move(u));
}

json::value access_review_body(const reviewed_user& user, const std::string& verb, const std::string& path) {
  json::value body;
  body["apiVersion"] = "authorization.k8s.io/v1";
  body["kind"] = "SubjectAccessReview";
  auto& spec = body["spec"];
  spec["user"] = user.username;
  if (!user.uid.empty())
    spec["uid"] = user.uid;
  if (!user.groups.empty())
    spec["groups"] = strings(user.groups);
  if (!user.extra.empty()) {
    json::object extra;
    for (const auto& [k, vs] : user.extra)
      extra.set(k, strings(vs));
    spec["extra"] = std::move(extra);
  }
  spec["nonResourceAttributes"]["path"] = path;
  spec["nonResourceAttributes"]["verb"] = verb;
  return body;
}

expected<review_verdict> read_access_review(const json::value& answer) {
  if (!answer.is_object() || answer.get_string("kind") != "SubjectAccessReview")
    return error::bad_request("the SubjectAccessReview answer is not a SubjectAccessReview");
  review_verdict v;
  const json::value* status = answer.find("status");
  if (!status)
    return v;
  v.allowed = status->get_bool("allowed") && !status->get_bool("denied");
  v.reason = status->get_string("reason");
  if (v.reason.empty())
    v.reason = status->get_string("evaluationError");
  return v;
}

std::string access_path(std::string_view target) {
  auto q = target.find_first_of("?#");
  return std::string(q == std::string_view::npos ? target : target.substr(0, q));
}

template <class Map>
void access_cache::make_room(Map& m, clock::time_point now) {
  if (m.size() < max_)
    return;
  std::erase_if(m, [now](const auto& kv) { return kv.second.expires <= now; });
  if (m.size() >= max_) // all alive: forget the lot rather than grow without bound
    m.clear();
}

std::optional<std::optional<reviewed_user>> access_cache::user(const std::string& token,
                                                                 clock::time_point now) const {
  auto it = users_.find(token_key(token));
  if (it == users_.end() || it->second.expires <= now)
    return std::nullopt;
  return it->second.value;
}

void access_cache::remember_user(const std::string& token, std::optional<reviewed_user> u, clock::time_point now) {
  make_room(users_, now);
  auto ttl = u ? ttl_.authenticated : ttl_.unauthenticated;
  users_[token_key(token)] = {std::move(u), now + ttl};
}

std::optional<review_verdict> access_cache::verdict(const reviewed_user& u, const std::string& verb,
                                                    const std::string& path, clock::time_point now) const {
  auto it = verdicts_.find(verdict_key(u, verb, path));
  if (it == verdicts_.end() || it->second.expires <= now)
    return std::nullopt;
  return it->second.value;
}

void access_cache::remember_verdict(const reviewed_user& u, const std::string& verb, const std::string& path,
                                    review_verdict v, clock::time_point now) {
  make_room(verdicts_, now);
  auto ttl = v.allowed ? ttl_.allowed : ttl_.denied;
  verdicts_[verdict_key(u, verb, path)] = {std::move(v), now + ttl};
}

} // namespace kozmo::extender
