// Kozmo's configuration file: one YAML document for every part (`kozmo local --config FILE`;
// the standalone controller reads the same file). Sections:
//   tasks:   the task platform (actors/tasks/platform_config.hpp; README "Task platform
//            configuration" lists every key with its default)
// An unknown section, an unknown key or a bad value is an error that names it, reported
// before anything starts.
#pragma once

#include "actors/tasks/platform_config.hpp"
#include "k8s/error.hpp"

#include <string>

namespace kozmo::runtime {

struct kozmo_config {
  tasks::platform_config tasks;
};

// The file's text parsed ("" gives the defaults). Errors start with `where` (the file name).
expected<kozmo_config> parse_config(const std::string& text, const std::string& where);
// The file read and parsed; "" (no file) gives the defaults.
expected<kozmo_config> load_config_file(const std::string& path);

} // namespace kozmo::runtime
