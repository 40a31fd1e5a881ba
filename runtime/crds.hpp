// Kozmo's CRDs (deploy/crds/*.yaml: the training job kinds, Trainer v2's kinds, TaskExecution,
// ResourcePool) and the built-in ClusterTrainingRuntimes (deploy/runtimes/*.yaml),
// embedded in the binary at build time so that `kozmo local` can install them before its
// controllers start, wherever it runs from.
#pragma once

#include <string_view>
#include <vector>

namespace kozmo {

struct embedded_file {
  std::string_view name; // "pytorchjobs.yaml"
  std::string_view text; // the YAML as written (may hold several documents)
};

// Empty when the build found no deploy/crds/*.yaml.
const std::vector<embedded_file>& embedded_crds();

// The built-in ClusterTrainingRuntimes (deploy/runtimes/*.yaml), which `kozmo local` creates at
// start when none of that name exists; empty when the build found none.
const std::vector<embedded_file>& embedded_training_runtimes();

} // namespace kozmo
