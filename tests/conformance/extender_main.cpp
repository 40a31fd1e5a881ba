// Test-only stand-in for `kozmo extender` until runtime/main.cpp hooks run_extender up:
//   kozmo_extender_test --config FILE [--kubeconfig KC] [--listen HOST:PORT]
// Prints "listening PORT" on stdout once the server is up; logs go to stderr.
#include "actors/extender/run_extender.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  kozmo::extender::extender_options opts;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto take = [&](const std::string& name, std::string& into) {
      if (arg == name && i + 1 < argc) {
        into = argv[++i];
        return true;
      }
      if (arg.rfind(name + "=", 0) == 0) {
        into = arg.substr(name.size() + 1);
        return true;
      }
      return false;
    };
    if (take("--config", opts.config_path) || take("--kubeconfig", opts.kubeconfig) || take("--listen", opts.listen))
      continue;
    std::fprintf(stderr, "usage: %s --config FILE [--kubeconfig KC] [--listen HOST:PORT]\n", argv[0]);
    return 2;
  }
  spdlog::set_default_logger(spdlog::stderr_color_mt("kozmo-extender"));
  opts.on_listening = [](unsigned short port) {
    std::printf("listening %u\n", static_cast<unsigned>(port));
    std::fflush(stdout);
  };
  return kozmo::extender::run_extender(opts);
}
