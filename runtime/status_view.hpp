// What `kozmo status` shows, and how: the snapshot it reads (the GPU scheduler's cell map and the
// cluster's jobs and tasks), read from JSON, and written as aligned tables, JSON or YAML. Pure:
// no I/O, no clock (callers pass `now_unix`), unit-tested (tests/unit/status_view_test.cpp); the
// fetching is status_mode.cpp's.
//
//   cellmap JSON (GET /v1/inspect/cellmap) ─ parse_cellmap ─┐
//   job / TaskExecution objects ───────────── work_item_of ─┴→ status_snapshot
//        status_snapshot ─ render_text (tables) | snapshot_document ─ json::dump / json::dump_yaml
//
// Rules:
//  1. A section that could not be read is empty and its error is in `errors`; the others still
//     show (a cluster without Kozmo's scheduler still lists its jobs).
//  2. Tables are sized to `width` only when `truncate` is set (a terminal): the waiting gangs'
//     REASON is cut with "…" to fit; nothing else is cut. Not a terminal, or -o wide: in full.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::runtime {

struct vc_usage {
  std::string name;
  std::int64_t guaranteed_gpus = 0;
  std::int64_t used_gpus = 0;
  std::int64_t free_gpus = 0;
  std::int64_t borrowed_gpus = 0;
};

struct waiting_gang {
  std::string name; // "<namespace>/<gang>"
  std::string virtual_cluster;
  std::int64_t priority = 0;
  std::int64_t pods = 0;
  std::int64_t gpus = 0;
  std::string reason;
  std::string reason_kind;
  std::int64_t waiting_seconds = 0;
};

struct cellmap_view {
  std::int64_t version = 0;
  std::vector<vc_usage> virtual_clusters;
  std::vector<waiting_gang> waiting_gangs;
  std::int64_t waiting_total = 0; // the scheduler lists at most 500; this counts them all
};

// A training job or a TaskExecution.
struct work_item {
  std::string kind; // "PyTorchJob", "TaskExecution", ...
  std::string ns;
  std::string name;
  std::string phase;
  std::int64_t age_seconds = -1; // -1: no creationTimestamp
};

struct status_snapshot {
  cellmap_view cellmap;
  std::vector<work_item> work;
  std::vector<std::string> errors; // one line each, for stderr
  bool cellmap_read = true;          // false: its sections say so instead of "(none)"
  bool work_read = true;
};

// The cell map from its JSON. Keys the command does not show are ignored; a missing list is
// empty; a value of the wrong type is an error naming the key.
expected<cellmap_view> parse_cellmap(const json::value& doc);

// A job's phase: the type of its last condition whose status is "True" (Created, Running,
// Restarting, Succeeded, Failed); "Pending" before any. A TaskExecution's: status.phase, else
// "Pending".
std::string job_phase(const json::value& job);
std::string task_phase(const json::value& task);
// Succeeded, Failed or Aborted: the work is over.
bool finished_phase(std::string_view phase);

// One row of JOBS AND TASKS from an object of `kind` (its age from metadata.creationTimestamp).
work_item work_item_of(std::string_view kind, const json::value& object, std::int64_t now_unix);

// Seconds since the epoch of an RFC 3339 time ("2026-11-29T16:40:00Z", fractions and offsets
// allowed); nullopt when it is not one.
std::optional<std::int64_t> parse_rfc3339_seconds(std::string_view text);

// A duration as kubectl prints ages: 42s, 3m12s, 45m, 5h10m, 20h, 3d4h, 40d, 2y.
std::string human_duration(std::int64_t seconds);

struct render_options {
  std::size_t width = 80;       // the terminal's columns
  bool truncate = false;        // cut reasons to `width` (a terminal, not -o wide)
  bool wide = false;            // -o wide: the reason's kind too
  bool namespace_column = true; // all namespaces: the jobs' NAMESPACE column
};

// The three sections as aligned tables, each headed by its title; "(none)" for an empty one,
// "(could not be read)" for one whose source failed.
std::string render_text(const status_snapshot& snap, const render_options& opts);

// Aligned columns (three spaces apart, kubectl's look). When `width` > 0 the last column is cut
// with "…" so that each line fits, never below 10 characters of it.
std::string render_table(const std::vector<std::string>& headers,
                         const std::vector<std::vector<std::string>>& rows, std::size_t width);

// The document -o json and -o yaml print: {"virtualClusters": [...], "waitingGangs": [...],
// "jobsAndTasks": [...]} with "errors": [...] when some section could not be read.
json::value snapshot_document(const status_snapshot& snap);

} // namespace kozmo::runtime
