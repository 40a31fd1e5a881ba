#include "actors/tasks/cache.hpp"

#include "k8s/model/time.hpp"

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
  return cache_key(cache_signature(spec), input_digests);
}

std::string cache_key(const std::string& signature, const std::map<std::string, std::string>& input_digests) {
  std::string text = signature;
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

std::string reservation_owner(const std::string& task_uid) { return "taskexecution/" + task_uid; }

std::string cache_entry_name(const std::string& key) { return "tx-" + key; }

json::value cache_entry_to_json(const cache_entry& e, const std::string& ns) {
  json::value spec = json::object{{"key", e.key}, {"signature", e.signature}};
  if (e.outputs) {
    json::value o = json::object{{"location", e.outputs->location}, {"task", e.outputs->task},
                                 {"taskUID", e.outputs->task_uid}};
    k8s::put_time(o, "storedAt", e.outputs->stored_at);
    spec["outputs"] = std::move(o);
  }
  if (e.reservation) {
    json::value r = json::object{{"owner", e.reservation->owner}};
    k8s::put_time(r, "expiresAt", e.reservation->expires_at);
    spec["reservation"] = std::move(r);
  }
  json::value obj = json::object{{"apiVersion", api_version}, {"kind", cache_entry_kind}};
  obj["metadata"]["name"] = cache_entry_name(e.key);
  obj["metadata"]["namespace"] = ns;
  obj["spec"] = std::move(spec);
  return obj;
}

cache_entry cache_entry_from_json(const json::value& object) {
  cache_entry e;
  const json::value* spec = object.find("spec");
  if (!spec || !spec->is_object())
    return e;
  e.key = spec->get_string("key");
  e.signature = spec->get_string("signature");
  if (const auto* o = spec->find("outputs"); o && o->is_object()) {
    cache_outputs out;
    out.location = o->get_string("location");
    out.task = o->get_string("task");
    out.task_uid = o->get_string("taskUID");
    out.stored_at = k8s::time_member(*o, "storedAt").value_or(time_point{});
    e.outputs = std::move(out);
  }
  if (const auto* r = spec->find("reservation"); r && r->is_object()) {
    auto expires = k8s::time_member(*r, "expiresAt");
    if (expires && !r->get_string("owner").empty())
      e.reservation = cache_reservation{r->get_string("owner"), *expires};
  }
  return e;
}

std::string_view to_string(cache_op op) {
  switch (op) {
  case cache_op::lookup: return "lookup";
  case cache_op::reserve: return "reserve";
  case cache_op::store: return "store";
  case cache_op::release: return "release";
  }
  return "?";
}

cache_change apply_cache_op(const std::optional<cache_entry>& current, const cache_op_args& args) {
  cache_change c;
  c.entry = current;
  auto fresh = [&] {
    cache_entry e;
    e.key = args.key;
    e.signature = args.signature;
    return e;
  };
  switch (args.op) {
  case cache_op::lookup:
    break;
  case cache_op::reserve: {
    if (current && current->outputs && !args.overwrite)
      break; // a hit: nothing to reserve
    auto a = reserve(current ? current->reservation : std::nullopt, args.owner, args.now, args.heartbeat);
    if (!a.changed)
      break;
    cache_entry e = current ? *current : fresh();
    e.reservation = a.reservation;
    c.entry = std::move(e);
    c.write = true;
    break;
  }
  case cache_op::store: {
    cache_entry e = current ? *current : fresh();
    e.outputs = args.outputs;
    if (may_release(e.reservation, args.owner))
      e.reservation.reset();
    c.entry = std::move(e);
    c.write = true;
    c.notify = true;
    break;
  }
  case cache_op::release:
    if (!current || !may_release(current->reservation, args.owner))
      break;
    c.entry = current;
    c.entry->reservation.reset();
    c.write = true;
    c.notify = true;
    break;
  }
  return c;
}

bool holds_reservation(const std::optional<cache_entry>& entry, const std::string& owner, time_point now) {
  return entry && entry->reservation && entry->reservation->owner == owner && entry->reservation->expires_at > now;
}

} // namespace kozmo::tasks
