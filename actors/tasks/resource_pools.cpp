#include "actors/tasks/resource_pools.hpp"

#include <algorithm>

namespace kozmo::tasks {
namespace {

int count_where(const std::map<std::string, pool_request>& held, const std::string pool_request::*field,
                const std::string& value) {
  int n = 0;
  for (const auto& [_, r] : held)
    n += r.*field == value;
  return n;
}

} // namespace

bool pool_book::fits(const pool_state& p, const pool_request& r) const {
  if (!p.limits)
    return false;
  if (static_cast<int>(p.held.size()) >= p.limits->quota)
    return false;
  if (p.limits->per_namespace && count_where(p.held, &pool_request::ns, r.ns) >= *p.limits->per_namespace)
    return false;
  if (p.limits->per_project && count_where(p.held, &pool_request::project, r.project) >= *p.limits->per_project)
    return false;
  return true;
}

std::string pool_book::why_not(const std::string& pool, const pool_state& p, const pool_request& r) const {
  if (!p.limits)
    return "ResourcePool \"" + pool + "\" does not exist: create it (kubectl get resourcepools lists the pools) or "
           "remove spec.resourcePool; the task starts as soon as it can take a token";
  std::string where = "ResourcePool \"" + pool + "\" ";
  int in_use = static_cast<int>(p.held.size());
  std::string queue = p.waiting.empty() ? "" : "; " + std::to_string(p.waiting.size()) + " task(s) waiting";
  if (in_use >= p.limits->quota)
    return where + "has all " + std::to_string(p.limits->quota) + " tokens in use" + queue +
           "; the task starts when one is released";
  if (p.limits->per_namespace && count_where(p.held, &pool_request::ns, r.ns) >= *p.limits->per_namespace)
    return where + "allows " + std::to_string(*p.limits->per_namespace) + " token(s) per namespace and namespace \"" +
           r.ns + "\" holds them all" + queue;
  return where + "allows " + std::to_string(p.limits->per_project.value_or(0)) + " token(s) per project and project \"" +
         r.project + "\" holds them all" + queue;
}

std::vector<pool_request> pool_book::serve(pool_state& p) {
  std::vector<pool_request> granted;
  for (auto it = p.waiting.begin(); it != p.waiting.end();) {
    if (!fits(p, *it)) {
      ++it;
      continue;
    }
    p.held[it->token] = *it;
    granted.push_back(*it);
    it = p.waiting.erase(it);
  }
  return granted;
}

std::vector<pool_request> pool_book::set_pool(const std::string& pool, pool_limits limits) {
  auto& p = pools_[pool];
  p.limits = limits;
  return serve(p);
}

void pool_book::remove_pool(const std::string& pool) {
  auto it = pools_.find(pool);
  if (it == pools_.end())
    return;
  it->second.limits.reset();
  if (it->second.held.empty() && it->second.waiting.empty())
    pools_.erase(it);
}

allocation_answer pool_book::allocate(const std::string& pool, const pool_request& request) {
  auto& p = pools_[pool];
  if (p.held.count(request.token))
    return {allocation::granted, ""};
  auto waiting = std::find_if(p.waiting.begin(), p.waiting.end(),
                              [&](const pool_request& w) { return w.token == request.token; });
  if (waiting == p.waiting.end() && fits(p, request)) {
    p.held[request.token] = request;
    return {allocation::granted, ""};
  }
  if (waiting == p.waiting.end()) {
    // Keep the queue ordered by when each task first asked (rule 3): a task that asks again
    // after a restart keeps its place.
    auto at = std::upper_bound(p.waiting.begin(), p.waiting.end(), request,
                               [](const pool_request& a, const pool_request& b) { return a.since_ms < b.since_ms; });
    p.waiting.insert(at, request);
  }
  return {p.limits ? allocation::exhausted : allocation::no_pool, why_not(pool, p, request)};
}

std::vector<pool_request> pool_book::release(const std::string& pool, const std::string& token) {
  auto it = pools_.find(pool);
  if (it == pools_.end())
    return {};
  auto& p = it->second;
  p.waiting.erase(std::remove_if(p.waiting.begin(), p.waiting.end(),
                                 [&](const pool_request& w) { return w.token == token; }),
                  p.waiting.end());
  if (p.held.erase(token) == 0)
    return {};
  auto granted = serve(p);
  if (!p.limits && p.held.empty() && p.waiting.empty())
    pools_.erase(it);
  return granted;
}

void pool_book::restore(const std::string& pool, const pool_request& request) { pools_[pool].held[request.token] = request; }

pool_usage pool_book::usage(const std::string& pool) const {
  auto it = pools_.find(pool);
  if (it == pools_.end())
    return {};
  const auto& p = it->second;
  return {p.limits ? p.limits->quota : 0, static_cast<int>(p.held.size()), static_cast<int>(p.waiting.size()),
          p.limits.has_value()};
}

bool pool_book::holds(const std::string& pool, const std::string& token) const {
  auto it = pools_.find(pool);
  return it != pools_.end() && it->second.held.count(token);
}

std::vector<std::string> pool_book::pools() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : pools_)
    out.push_back(name);
  return out;
}

std::vector<std::string> pool_book::holders(const std::string& pool) const {
  std::vector<std::string> out;
  auto it = pools_.find(pool);
  if (it == pools_.end())
    return out;
  for (const auto& [_, r] : it->second.held)
    out.push_back(r.task);
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace kozmo::tasks
