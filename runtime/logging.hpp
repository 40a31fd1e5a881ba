// Logging set-up: spdlog to stderr with key=value fields in messages.
#pragma once

#include "k8s/error.hpp"

#include <string>

namespace kozmo::runtime {

// "trace", "debug", "info", "warn", "error"; anything else is an error naming the choices.
status setup_logging(const std::string& level);

} // namespace kozmo::runtime
