// HiveD's inspect API (GET /v1/inspect/...): which view a path asks for and the answer, the
// one copy that `kozmo local` (direct mode) and the extender both serve, byte for byte. Pure.
//
//   /v1/inspect/affinitygroups/                 {"items": [group, ...]}  (HiveD's AffinityGroupList)
//   /v1/inspect/affinitygroups/{name}           one group; a name may hold a slash ("<ns>/<pod>")
//   /v1/inspect/clusterstatus                   {"physicalCluster": ..., "virtualClusters": ...}
//   /v1/inspect/clusterstatus/physicalcluster
//   /v1/inspect/clusterstatus/virtualclusters/  {vc: [cell, ...], ...}
//   /v1/inspect/clusterstatus/virtualclusters/{vc}
//   /v1/inspect/cellmap                         Kozmo's own: the cell map (cell_map.hpp)
//   /v1/inspect/cellmap/since/{version}         what changed after `version` (cell_map.hpp)
//
// Names are percent-decoded; a trailing slash and a query string are ignored. Errors are
// HiveD's {"code": N, "message": "..."}: 404 for an unknown group, VC or path.
#pragma once

#include "actors/scheduler/cell_map.hpp"
#include "actors/scheduler/scheduler_core.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace kozmo::scheduler {

enum class inspect_kind { affinity_groups, affinity_group, cluster_status, physical_cluster, virtual_clusters,
                          virtual_cluster, cell_map, cell_map_since };

struct inspect_query {
  inspect_kind kind = inspect_kind::cluster_status;
  std::string name; // group or VC name for the single-item views; the version for cell_map_since
  friend bool operator==(const inspect_query&, const inspect_query&) = default;
};

// The view `path` asks for; nullopt when it is not an inspect path.
std::optional<inspect_query> parse_inspect_path(std::string_view path);

struct inspect_answer {
  int status = 200;
  std::string body; // JSON
};

// The answer to GET `path` (query string allowed). The cell map views publish the core's map
// to `journal` first; without one (the extender) they answer from a journal of their own, so
// that "since" always gets the whole map at once. `now_ms`: the wall clock (waiting ages).
inspect_answer answer_inspect(const scheduler_core& core, std::string_view path, cell_map_journal* journal = nullptr,
                              std::int64_t now_ms = 0);

} // namespace kozmo::scheduler
