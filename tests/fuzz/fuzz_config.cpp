// The files a user hands Kozmo at start: the configuration file (runtime/config_file.hpp
// parse_config: tasks, scheduler, client, leaderElection), the simulated cluster's shape
// (actors/kubelet/cluster_shape.hpp parse_cluster_yaml) and a kubeconfig
// (k8s/client/config.hpp load_kubeconfig, read from a file, with base64_decode for its *-data
// fields). The first byte picks the parser: '0' configuration, '1' cluster shape, '2'
// kubeconfig (the byte modulo 3).
#include "actors/kubelet/cluster_shape.hpp"
#include "k8s/client/config.hpp"
#include "runtime/config_file.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

using namespace kozmo;

namespace {

// load_kubeconfig reads a path: the input goes to one file per process, rewritten each run.
const std::string& kubeconfig_path() {
  static const std::string path = [] {
    std::string p = "/tmp/kozmo-fuzz-kubeconfig-" + std::to_string(::getpid()) + ".yaml";
    std::atexit([] { std::remove(kubeconfig_path().c_str()); });
    return p;
  }();
  return path;
}

void check_kubeconfig(std::string_view text) {
  const std::string& path = kubeconfig_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr)
    return;
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  (void)client::load_kubeconfig(path);
  (void)client::load_kubeconfig(path, "fuzz");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  std::string text(fuzz::as_text(data + 1, size - 1));
  switch (data[0] % 3) {
  case 0:
    // A base directory that does not exist: a relative scheduler.configFile is not found.
    (void)runtime::parse_config(text, "fuzz.yaml", "/nonexistent-kozmo-fuzz");
    break;
  case 1:
    if (auto shape = kubelet::parse_cluster_yaml(text))
      for (std::size_t i = 0; i < shape->nodes.size() && i < 4; ++i)
        (void)kubelet::node_object(shape->nodes[i], "2024-01-01T00:00:00Z");
    break;
  default:
    check_kubeconfig(text);
    (void)client::base64_decode(text);
    break;
  }
  return 0;
}
