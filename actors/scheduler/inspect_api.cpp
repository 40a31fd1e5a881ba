#include "actors/scheduler/inspect_api.hpp"

#include "k8s/url.hpp"

namespace kozmo::scheduler {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

inspect_answer error_answer(const error& e) {
  int code = e.code ? e.code : 500;
  return {code, json::dump(json::object{{"code", code}, {"message", e.message}})};
}

inspect_answer json_answer(const expected<json::value>& v) {
  return v ? inspect_answer{200, json::dump(*v)} : error_answer(v.err());
}

} // namespace

std::optional<inspect_query> parse_inspect_path(std::string_view target) {
  auto path = target.substr(0, target.find('?'));
  constexpr std::string_view groups = "/v1/inspect/affinitygroups";
  constexpr std::string_view status = "/v1/inspect/clusterstatus";
  constexpr std::string_view physical = "/v1/inspect/clusterstatus/physicalcluster";
  constexpr std::string_view vcs = "/v1/inspect/clusterstatus/virtualclusters";
  auto is = [&](std::string_view p) { return path == p || (path.size() == p.size() + 1 && starts_with(path, p) && path.back() == '/'); };
  auto name_after = [&](std::string_view p) { return url::decode(path.substr(p.size() + 1)); };
  if (is("/v1/inspect/cellmap"))
    return inspect_query{inspect_kind::cell_map, ""};
  if (auto v = parse_since(path))
    return inspect_query{inspect_kind::cell_map_since, std::to_string(*v)};
  if (is(groups))
    return inspect_query{inspect_kind::affinity_groups, ""};
  // Group names may hold a slash (the default group of a pod is "<ns>/<pod>"): the rest is the name.
  if (starts_with(path, std::string(groups) + "/"))
    return inspect_query{inspect_kind::affinity_group, name_after(groups)};
  if (is(status))
    return inspect_query{inspect_kind::cluster_status, ""};
  if (is(physical))
    return inspect_query{inspect_kind::physical_cluster, ""};
  if (is(vcs))
    return inspect_query{inspect_kind::virtual_clusters, ""};
  if (starts_with(path, std::string(vcs) + "/")) {
    auto name = path.substr(vcs.size() + 1);
    if (!name.empty() && name.back() == '/')
      name.remove_suffix(1);
    if (name.find('/') == std::string_view::npos)
      return inspect_query{inspect_kind::virtual_cluster, url::decode(name)};
  }
  return std::nullopt;
}

inspect_answer answer_inspect(const scheduler_core& core, std::string_view path, cell_map_journal* journal,
                              std::int64_t now_ms) {
  auto q = parse_inspect_path(path);
  if (!q)
    return error_answer(error::not_found("no inspect API at " + std::string(path.substr(0, path.find('?')))));
  switch (q->kind) {
  case inspect_kind::affinity_groups:
    return json_answer(json::value(json::object{{"items", core.inspect_groups()}}));
  case inspect_kind::affinity_group:
    return json_answer(core.inspect_group(q->name));
  case inspect_kind::cluster_status:
    return json_answer(json::value(json::object{{"physicalCluster", core.inspect_physical_cluster()},
                                                {"virtualClusters", core.inspect_virtual_clusters()}}));
  case inspect_kind::physical_cluster:
    return json_answer(core.inspect_physical_cluster());
  case inspect_kind::virtual_clusters:
    return json_answer(core.inspect_virtual_clusters());
  case inspect_kind::virtual_cluster:
    return json_answer(core.inspect_virtual_cluster(q->name));
  case inspect_kind::cell_map:
  case inspect_kind::cell_map_since: {
    cell_map_journal own(now_ms);
    cell_map_journal& j = journal ? *journal : own;
    j.publish(core.map());
    if (q->kind == inspect_kind::cell_map_since)
      if (auto delta = j.since(std::stoull(q->name), now_ms)) return json_answer(*delta);
    return json_answer(j.full(now_ms));
  }
  }
  return error_answer(error::not_found("unknown inspect view"));
}

} // namespace kozmo::scheduler
