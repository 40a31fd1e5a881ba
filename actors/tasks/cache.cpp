#include "actors/tasks/cache.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <vector>

namespace kozmo::tasks {
namespace {

// JSON with every object's keys sorted: the same value written in another key order (YAML maps
// have none) gives the same text.
std::string canonical(const json::value& v) {
  if (v.is_object()) {
    std::vector<const json::object::member*> members;
    for (const auto& m : v.as_object())
      members.push_back(&m);
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    std::string out = "{";
    for (const auto* m : members) {
      if (out.size() > 1)
        out += ",";
      out += json::dump(json::value(m->first)) + ":" + canonical(m->second);
    }
    return out + "}";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (const auto& item : v.as_array()) {
      if (out.size() > 1)
        out += ",";
      out += canonical(item);
    }
    return out + "]";
  }
  return json::dump(v);
}

std::string member_text(const json::value& container, const char* key) {
  const json::value* v = container.find(key);
  return v ? canonical(*v) : "null";
}

// Image, command and args of each container, in order, init containers first.
void containers_into(std::string& out, const json::value& pod_spec) {
  for (const char* list_key : {"initContainers", "containers"}) {
    const json::value* list = pod_spec.find(list_key);
    if (!list || !list->is_array())
      continue;
    for (const auto& c : list->as_array())
      out += std::string(list_key) + " " + c.get_string("name") + ": image=" + c.get_string("image") +
             " command=" + member_text(c, "command") + " args=" + member_text(c, "args") + "\n";
  }
}

} // namespace

std::string sha256_hex(const std::string& text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * sizeof digest);
  for (unsigned char b : digest) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

std::string cache_signature(const task_spec& spec) {
  std::string out = "type=" + spec.type + "\nversion=" + (spec.cache ? spec.cache->version : std::string()) + "\n";
  if (spec.type == "container") {
    json::value pod = json::object{{"containers", json::array{spec.container}}};
    containers_into(out, pod);
  } else if (spec.type == "pod") {
    containers_into(out, spec.pod_spec);
  } else {
    out += "job=" + canonical(spec.job) + "\n";
  }
  return out;
}

std::string cache_key(const task_spec& spec, const std::map<std::string, std::string>& input_digests) {
  std::string text = cache_signature(spec);
  for (const auto& [name, digest] : input_digests) // a std::map: sorted by name
    text += "input " + name + "=" + digest + "\n";
  return sha256_hex(text);
}

reserve_answer reserve(const std::optional<cache_reservation>& current, const std::string& owner, time_point now,
                       std::chrono::milliseconds heartbeat) {
  reserve_answer a;
  cache_reservation mine{owner, now + heartbeat * reservation_grace_multiplier};
  if (!current || current->expires_at <= now || current->owner == owner) {
    a.held = true;
    a.reservation = mine;
    a.changed = true;
    return a;
  }
  a.reservation = *current; // another owner's, alive: wait for it
  return a;
}

bool may_release(const std::optional<cache_reservation>& current, const std::string& owner) {
  return current && current->owner == owner;
}

std::string reservation_owner(const std::string& task_uid, int attempt) {
  return task_uid + "-" + std::to_string(attempt);
}

} // namespace kozmo::tasks
