// The `kozmo` binary: one executable, several sub-commands (see `kozmo help`).
#include "runtime/cli.hpp"
#include "runtime/copilot_mode.hpp"
#include "runtime/local_mode.hpp"
#include "runtime/version.hpp"

#include <iostream>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto cmd = kozmo::runtime::parse_command_line(args);
  if (!cmd) {
    std::cerr << "kozmo: " << cmd.err().message << "\n";
    return 2;
  }
  using kind = kozmo::runtime::command::kind;
  switch (cmd->what) {
  case kind::help:
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
  }
  return 2;
}
