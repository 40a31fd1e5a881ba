#include "actors/training/job_status.hpp"

namespace kozmo::training {
namespace {

int int_member(const json::value& v, std::string_view key) {
  const json::value* m = v.find(key);
  return m != nullptr && m->is_int() ? static_cast<int>(m->as_int()) : 0;
}

} // namespace

job_status status_from_json(const json::value& status) {
  job_status s;
  if (!status.is_object())
    return s;
  if (const json::value* conds = status.find("conditions"); conds != nullptr && conds->is_array()) {
    for (const json::value& c : conds->as_array()) {
      if (!c.is_object())
        continue;
      job_condition jc;
      jc.type = c.get_string("type");
      jc.status = c.get_string("status");
      jc.reason = c.get_string("reason");
      jc.message = c.get_string("message");
      jc.last_update_time = k8s::time_member(c, "lastUpdateTime");
      jc.last_transition_time = k8s::time_member(c, "lastTransitionTime");
      if (!jc.type.empty())
        s.conditions.push_back(std::move(jc));
    }
  }
  if (const json::value* rs = status.find("replicaStatuses"); rs != nullptr && rs->is_object()) {
    for (const auto& [type, v] : rs->as_object()) {
      if (!v.is_object())
        continue;
      replica_status r;
      r.active = int_member(v, "active");
      r.succeeded = int_member(v, "succeeded");
      r.failed = int_member(v, "failed");
      r.selector = v.get_string("selector");
      s.replica_statuses[type] = r;
    }
  }
  s.start_time = k8s::time_member(status, "startTime");
  s.completion_time = k8s::time_member(status, "completionTime");
  s.last_reconcile_time = k8s::time_member(status, "lastReconcileTime");
  s.recreated_pods = int_member(status, "recreatedPods");
  return s;
}

json::value to_json(const job_status& s) {
  json::value out = json::object{};
  json::array conds;
  for (const auto& c : s.conditions) {
    json::value j = json::object{};
    j["type"] = c.type;
    j["status"] = c.status;
    if (!c.reason.empty())
      j["reason"] = c.reason;
    if (!c.message.empty())
      j["message"] = c.message;
    k8s::put_time(j, "lastUpdateTime", c.last_update_time);
    k8s::put_time(j, "lastTransitionTime", c.last_transition_time);
    conds.push_back(std::move(j));
  }
  out["conditions"] = std::move(conds);
  json::value rs = json::object{};
  for (const auto& [type, r] : s.replica_statuses) {
    json::value j = json::object{};
    // Zeros are written (the peer omits them) so that a merge patch resets a count.
    j["active"] = r.active;
    j["succeeded"] = r.succeeded;
    j["failed"] = r.failed;
    if (!r.selector.empty())
      j["selector"] = r.selector;
    rs[type] = std::move(j);
  }
  out["replicaStatuses"] = std::move(rs);
  k8s::put_time(out, "startTime", s.start_time);
  k8s::put_time(out, "completionTime", s.completion_time);
  k8s::put_time(out, "lastReconcileTime", s.last_reconcile_time);
  return out;
}

json::value status_patch(const job_status& before, const job_status& after) {
  json::value out = to_json(after);
  // RFC 7386: a member the patch does not mention is kept, so cleared fields must be null.
  auto clear = [&](std::string_view key, bool was) {
    if (was && out.find(key) == nullptr)
      out[key] = nullptr;
  };
  clear("startTime", before.start_time.has_value());
  clear("completionTime", before.completion_time.has_value());
  clear("lastReconcileTime", before.last_reconcile_time.has_value());
  for (const auto& [type, rs] : before.replica_statuses)
    if (after.replica_statuses.count(type) == 0)
      out["replicaStatuses"][type] = nullptr;
  return out;
}

const job_condition* find_condition(const job_status& s, std::string_view type) {
  for (const auto& c : s.conditions)
    if (c.type == type)
      return &c;
  return nullptr;
}

bool has_true(const job_status& s, std::string_view type) {
  const job_condition* c = find_condition(s, type);
  return c != nullptr && c->status == "True";
}

std::string_view job_phase(const job_status& s) {
  for (auto type : {condition_type::failed, condition_type::succeeded, condition_type::suspended,
                    condition_type::restarting, condition_type::running})
    if (has_true(s, type))
      return type;
  return condition_type::created;
}

bool clear_condition(job_status& s, std::string_view type) {
  if (is_failed(s))
    return false;
  return std::erase_if(s.conditions, [&](const job_condition& c) { return c.type == type; }) > 0;
}

bool set_condition(job_status& s, std::string_view type, bool status, std::string reason, std::string message,
                   time_point now) {
  if (is_failed(s))
    return false;
  const std::string status_text = status ? "True" : "False";
  job_condition next{std::string(type), status_text, std::move(reason), std::move(message), now, now};
  if (const job_condition* current = find_condition(s, type)) {
    if (current->status == next.status && current->reason == next.reason)
      return false;
    if (current->status == next.status)
      next.last_transition_time = current->last_transition_time;
  }
  std::vector<job_condition> kept;
  for (auto c : s.conditions) {
    if (c.type == type)
      continue;
    if ((type == condition_type::restarting && c.type == condition_type::running) ||
        (type == condition_type::running && c.type == condition_type::restarting))
      continue;
    if ((type == condition_type::failed || type == condition_type::succeeded) && c.type == condition_type::running &&
        c.status != "False") {
      c.status = "False";
      c.last_update_time = now;
      c.last_transition_time = now;
    }
    kept.push_back(std::move(c));
  }
  kept.push_back(std::move(next));
  s.conditions = std::move(kept);
  return true;
}

} // namespace kozmo::training
