#include "runtime/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

namespace kozmo::runtime {

status setup_logging(const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    return error::bad_request("--log-level: \"" + level + "\" is not one of trace, debug, info, warn, error, off");
  auto logger = spdlog::stderr_color_mt("kozmo");
  logger->set_pattern("%H:%M:%S.%e %^%-5l%$ %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(lvl);
  return ok;
}

bool start_logging(const std::string& level) {
  if (auto st = setup_logging(level); !st) {
    std::cerr << "kozmo: " << st.err().message << "\n";
    return false;
  }
  return true;
}

} // namespace kozmo::runtime
