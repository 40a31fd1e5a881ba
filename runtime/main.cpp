// The `kozmo` binary: one executable, several sub-commands (see `kozmo help`). Installed also as
// `kubectl-kozmo`, a kubectl plugin: `kubectl kozmo status` runs it with the same arguments.
#include "runtime/cli.hpp"
#include "runtime/copilot_mode.hpp"
#include "runtime/local_mode.hpp"
#include "runtime/status_mode.hpp"
#include "runtime/version.hpp"

#include <iostream>
#include <string_view>

int main(int argc, char** argv) {
  std::string_view self = argc > 0 ? argv[0] : "kozmo";
  if (auto slash = self.rfind('/'); slash != std::string_view::npos)
    self.remove_prefix(slash + 1);
  // The name the user typed, for messages: kubectl runs its plugin as kubectl-kozmo.
  const std::string name = self == "kubectl-kozmo" ? "kubectl kozmo" : "kozmo";
  std::vector<std::string> args(argv + 1, argv + argc);
  auto cmd = kozmo::runtime::parse_command_line(args);
  if (!cmd) {
    std::cerr << name << ": " << cmd.err().message << "\n";
    return 2;
  }
  using kind = kozmo::runtime::command::kind;
  switch (cmd->what) {
  case kind::help:
    if (name != "kozmo")
      std::cout << "(run as a kubectl plugin: `kubectl kozmo COMMAND` is `kozmo COMMAND`)\n\n";
    std::cout << kozmo::runtime::usage();
    return 0;
  case kind::version:
    std::cout << "kozmo " << kozmo::runtime::version << "\n";
    return 0;
  case kind::local:
    return kozmo::runtime::run_local(cmd->local);
  case kind::kubelet:
    return kozmo::runtime::run_kubelet(cmd->kubelet);
  case kind::apiserver:
    return kozmo::runtime::run_apiserver(cmd->apiserver);
  case kind::extender:
    return kozmo::runtime::run_extender(cmd->extender);
  case kind::controller:
    return kozmo::runtime::run_controller(cmd->controller);
  case kind::crds:
    return kozmo::runtime::run_crds(cmd->crds);
  case kind::copilot:
    return kozmo::runtime::run_copilot(cmd->copilot);
  case kind::status:
    return kozmo::runtime::run_status(cmd->status);
  }
  return 2;
}
