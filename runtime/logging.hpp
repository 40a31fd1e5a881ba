// Logging set-up: spdlog to stderr with key=value fields in messages.
#pragma once

#include "k8s/error.hpp"

#include <string>

namespace kozmo::runtime {

// "trace", "debug", "info", "warn", "error"; anything else is an error naming the choices.
status setup_logging(const std::string& level);

// setup_logging for a sub-command: a bad --log-level is printed to stderr ("kozmo: ...") and
// false returned (the caller exits 2).
bool start_logging(const std::string& level);

} // namespace kozmo::runtime
