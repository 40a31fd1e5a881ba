// `kozmo status` (and `kubectl kozmo status`): reads the GPU scheduler's cell map and the
// cluster's jobs and tasks, prints them (runtime/status_view.hpp), once or every --interval.
#pragma once

#include "runtime/status_cli.hpp"

namespace kozmo::runtime {

// 0 when every section was read; 1 (each error one line on stderr) otherwise.
int run_status(const status_options& opts);

} // namespace kozmo::runtime
