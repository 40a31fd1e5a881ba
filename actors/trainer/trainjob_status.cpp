#include "actors/trainer/trainjob_status.hpp"

#include <algorithm>

namespace kozmo::trainer {

train_status status_from_json(const json::value* status) {
  train_status s;
  if (status == nullptr || !status->is_object())
    return s;
  if (const auto* list = status->find("conditions"); list && list->is_array()) {
    for (const auto& c : list->as_array()) {
      if (!c.is_object() || c.get_string("type").empty())
        continue;
      train_condition tc{c.get_string("type"), c.get_string("status"), c.get_string("reason"), c.get_string("message"),
                         std::nullopt};
      if (auto t = k8s::parse_time(c.get_string("lastTransitionTime")))
        tc.last_transition_time = *t;
      s.conditions.push_back(std::move(tc));
    }
  }
  if (const auto* list = status->find("jobsStatus"); list && list->is_array()) {
    for (const auto& j : list->as_array()) {
      if (!j.is_object())
        continue;
      auto count = [&](const char* key) { return static_cast<int>(std::clamp<std::int64_t>(j.get_int(key), 0, 1 << 20)); };
      s.jobs.push_back({j.get_string("name"), count("ready"), count("succeeded"), count("failed"), count("active"),
                        count("suspended")});
    }
  }
  return s;
}

json::value to_json(const train_status& s) {
  json::array conditions;
  for (const auto& c : s.conditions) {
    json::value v = json::object{{"type", c.type}, {"status", c.status}, {"reason", c.reason}, {"message", c.message}};
    if (c.last_transition_time)
      v["lastTransitionTime"] = k8s::format_time(*c.last_transition_time);
    conditions.push_back(std::move(v));
  }
  json::array jobs;
  for (const auto& j : s.jobs)
    jobs.push_back(json::object{{"name", j.name},
                                {"ready", j.ready},
                                {"succeeded", j.succeeded},
                                {"failed", j.failed},
                                {"active", j.active},
                                {"suspended", j.suspended}});
  return json::object{{"conditions", std::move(conditions)}, {"jobsStatus", std::move(jobs)}};
}

const train_condition* find_condition(const train_status& s, std::string_view type) {
  auto it = std::find_if(s.conditions.begin(), s.conditions.end(), [&](const auto& c) { return c.type == type; });
  return it == s.conditions.end() ? nullptr : &*it;
}

bool has_true(const train_status& s, std::string_view type) {
  const auto* c = find_condition(s, type);
  return c != nullptr && c->status == "True";
}

bool set_condition(train_status& s, std::string_view type, bool status, std::string reason, std::string message,
                   time_point now) {
  const std::string st = status ? "True" : "False";
  auto it = std::find_if(s.conditions.begin(), s.conditions.end(), [&](const auto& c) { return c.type == type; });
  if (it == s.conditions.end()) {
    s.conditions.push_back({std::string(type), st, std::move(reason), std::move(message), now});
  } else {
    if (it->status == st && it->reason == reason && it->message == message)
      return false;
    const bool now_holds = it->status != st && status;
    if (it->status != st)
      it->last_transition_time = now;
    it->status = st;
    it->reason = std::move(reason);
    it->message = std::move(message);
    if (now_holds) { // the newest that holds goes last
      auto c = std::move(*it);
      s.conditions.erase(it);
      s.conditions.push_back(std::move(c));
    }
  }
  // False conditions first: the last one, `kubectl get`'s STATE, is always one that holds.
  std::stable_partition(s.conditions.begin(), s.conditions.end(), [](const auto& c) { return c.status != "True"; });
  return true;
}

std::string_view phase(const train_status& s) {
  if (has_true(s, condition::failed))
    return "Failed";
  if (has_true(s, condition::complete))
    return "Complete";
  if (has_true(s, condition::suspended))
    return "Suspended";
  if (has_true(s, condition::running))
    return "Running";
  if (find_condition(s, condition::running))
    return "Pending";
  return "Created";
}

} // namespace kozmo::trainer
