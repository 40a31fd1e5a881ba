// The cell map as the page (/ui/) and `kozmo status` read it, and what changed since a version:
// a watch of the map, so that a page open on 5,000 nodes gets the few nodes that changed, not
// the whole map every time. Pure: the actor publishes the core's map, the journal keeps one
// copy and the version at which each node-level cell last changed.
//
//   GET /v1/inspect/cellmap                 the whole map
//   GET /v1/inspect/cellmap/since/{version} what changed after it; the answer waits (up to a few
//                                           seconds) while nothing did; an unknown version (a
//                                           restart, a new configuration) gets the whole map
//
//   {"version": 1732896000000012, "full": true,
//    "virtualClusters": [{"name": "vc1", "guaranteedGPUs": 16, "usedGPUs": 8, "freeGPUs": 8,
//                         "borrowedGPUs": 0}],
//    "waitingGangs": [{"name": "default/big", "virtualCluster": "vc1", "priority": 0, "pods": 4,
//                      "gpus": 32, "reason": "VC vc1 has 8 of 16 GPUs free; ...",
//                      "reasonKind": "VirtualClusterFull", "since": <ms>, "waitingSeconds": 12}],
//    "waitingTotal": 1,
//    "cells": [{"address": "rack-0", "type": "RACK", "parent": -1},
//              {"address": "rack-0/0", "type": "NODE", "parent": 0, "node": "node-0",
//               "gpus": [["b", 4, "default/a", "vc1"], ["f", 4]]}]}
//
// A delta ("full": false) carries the VCs and waiting gangs whole and, in "cells", only the
// node-level cells that changed: {"index": i, "gpus": [...]} (i indexes the full map's cells).
// A GPU run is [state, count] or [state, count, gang, vc]; the states are gpu_state's letters.
#pragma once

#include "actors/scheduler/scheduler_core.hpp"
#include "k8s/json/value.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kozmo::scheduler {

class cell_map_journal {
public:
  // At most this many waiting gangs are listed (oldest of the highest priority first);
  // waitingTotal counts them all.
  static constexpr std::size_t listed_waiting = 500;

  // `epoch_ms` starts the versions (a wall clock reading): a version from an earlier run is
  // older than any of this one, so a page open across a restart gets the whole map.
  explicit cell_map_journal(std::int64_t epoch_ms = 0);

  // Takes the map as it is now; the version moves when anything a reader sees changed.
  std::uint64_t publish(cell_map map);
  std::uint64_t version() const { return version_; }

  json::value full(std::int64_t now_ms) const;
  // What changed after `since`: nullopt while nothing did; the whole map for a version this
  // journal cannot answer from (older than its cell layout, or newer than it).
  std::optional<json::value> since(std::uint64_t version, std::int64_t now_ms) const;
  // The answer to a reader that waited and saw nothing change: the current version, no cells.
  json::value quiet(std::int64_t now_ms) const;

private:
  json::object head(bool full, std::int64_t now_ms) const;

  cell_map map_;
  std::string summary_;                   // the VCs and waiting gangs, as compared
  std::vector<std::uint64_t> changed_at_; // per cell
  std::uint64_t layout_version_ = 0;      // the cells' addresses changed last at
  std::uint64_t version_ = 0;
};

// "/v1/inspect/cellmap/since/123" -> 123; nullopt for any other path or a bad number.
std::optional<std::uint64_t> parse_since(std::string_view path);

} // namespace kozmo::scheduler
