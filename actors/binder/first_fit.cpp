#include "actors/binder/first_fit.hpp"

#include <charconv>

#include <algorithm>

namespace kozmo::binder {
namespace {

bool tolerates(const std::vector<toleration>& tolerations, const taint& t) {
  return std::any_of(tolerations.begin(), tolerations.end(), [&](const toleration& tol) {
    if (!tol.effect.empty() && tol.effect != t.effect)
      return false;
    if (tol.op == "Exists")
      return tol.key.empty() || tol.key == t.key;
    return tol.key == t.key && tol.value == t.value;
  });
}

} // namespace

bool matches_term(const node_selector_term& term, const std::map<std::string, std::string>& labels) {
  auto number = [](const std::string& s, long long& out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size();
  };
  for (const auto& r : term) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    bool ok = false;
    if (r.op == "In")
      ok = in;
    else if (r.op == "NotIn")
      ok = !in;
    else if (r.op == "Exists")
      ok = has;
    else if (r.op == "DoesNotExist")
      ok = !has;
    else if ((r.op == "Gt" || r.op == "Lt") && has && r.values.size() == 1) {
      long long a = 0, b = 0;
      ok = number(it->second, a) && number(r.values[0], b) && (r.op == "Gt" ? a > b : a < b);
    }
    if (!ok)
      return false;
  }
  return true;
}

expected<std::string> choose_node(const pod_need& pod, const std::vector<node_room>& nodes) {
  // Reasons are counted per kind, in kube-scheduler's wording.
  std::map<std::string, int> refusals;
  for (const auto& n : nodes) {
    if (!n.ready) {
      ++refusals["node(s) were not ready"];
      continue;
    }
    if (n.unschedulable) {
      ++refusals["node(s) were unschedulable"];
      continue;
    }
    bool selector_ok = std::all_of(pod.node_selector.begin(), pod.node_selector.end(), [&](const auto& kv) {
      auto it = n.labels.find(kv.first);
      return it != n.labels.end() && it->second == kv.second;
    });
    bool affinity_ok = pod.required_terms.empty() ||
                       std::any_of(pod.required_terms.begin(), pod.required_terms.end(),
                                   [&](const node_selector_term& t) { return matches_term(t, n.labels); });
    if (!selector_ok || !affinity_ok) {
      ++refusals["node(s) didn't match Pod's node affinity/selector"];
      continue;
    }
    auto untolerated = std::find_if(n.taints.begin(), n.taints.end(), [&](const taint& t) {
      return (t.effect == "NoSchedule" || t.effect == "NoExecute") && !tolerates(pod.tolerations, t);
    });
    if (untolerated != n.taints.end()) {
      ++refusals["node(s) had untolerated taint {" + untolerated->key + ": " + untolerated->value + "}"];
      continue;
    }
    bool fits = true;
    if (pod.gpus > n.gpus) {
      ++refusals["Insufficient nvidia.com/gpu"];
      fits = false;
    }
    if (pod.milli_cpu > n.milli_cpu) {
      ++refusals["Insufficient cpu"];
      fits = false;
    }
    if (pod.memory_bytes > n.memory_bytes) {
      ++refusals["Insufficient memory"];
      fits = false;
    }
    if (pod.pods > n.pods) {
      ++refusals["Too many pods"];
      fits = false;
    }
    if (fits)
      return n.name;
  }
  std::string msg = "0/" + std::to_string(nodes.size()) + " nodes are available";
  if (refusals.empty()) {
    msg += ": no nodes registered.";
    return error{msg, 0, "Unschedulable"};
  }
  bool first = true;
  for (const auto& [reason, count] : refusals) {
    msg += first ? ": " : ", ";
    first = false;
    msg += std::to_string(count) + " " + reason;
  }
  msg += ".";
  return error{msg, 0, "Unschedulable"};
}

} // namespace kozmo::binder
