// `kozmo status`'s flags (kubectl's short forms too: -n, -A, -o, -w). Pure, unit-tested in
// tests/unit/cli_test.cpp; status_mode.cpp runs the command.
#pragma once

#include "k8s/error.hpp"

#include <string>
#include <vector>

namespace kozmo::runtime {

struct status_options {
  std::string kubeconfig;          // "" = $KUBECONFIG, ~/.kube/config, in-cluster (as kubectl)
  std::string context;             // "" = the kubeconfig's current-context
  std::string inspect_url;         // the scheduler's inspect address; "" = through the API server
  std::string inspect_ca_file;     // its CA ("" = the kubeconfig's cluster CA)
  bool insecure_skip_tls_verify = false; // no certificate check (API server and inspect address)
  std::string ns;                  // -n: jobs and tasks of this namespace only
  bool all_namespaces = true;      // the default: a cluster overview
  std::string output;              // "" (tables), "wide", "json", "yaml"
  bool watch = false;
  double interval_seconds = 2;     // --watch's period, 0.2..3600
  bool finished = false;           // also Succeeded / Failed / Aborted jobs and tasks
};

// Parses the arguments after `status`.
expected<status_options> parse_status_options(const std::vector<std::string>& args);

} // namespace kozmo::runtime
