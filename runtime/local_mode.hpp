// `kozmo local`: the embedded API server, simulated GPU nodes and the controller in one
// process, on loopback. `kozmo kubelet`: only the simulated nodes, against any API server.
#pragma once

#include "runtime/cli.hpp"

namespace kozmo::runtime {

// Runs until SIGINT/SIGTERM; returns the process exit code.
int run_local(const local_options& opts);
int run_kubelet(const kubelet_options& opts);
int run_apiserver(const apiserver_options& opts);
// `kozmo extender`: kube-scheduler's extender in its own process (extender_mode.cpp).
int run_extender(const extender_cli_options& opts);
// `kozmo crds`: prints Kozmo's CRDs (crds_mode.cpp).
int run_crds(const crds_options& opts);
// `kozmo controller`: runtime/controller_mode.cpp.
int run_controller(const controller_options& opts);

} // namespace kozmo::runtime
