// Command and args templates: "{{ .Inputs.train }}", "{{ .OutputPrefix }}" and the other
// variables the peer renders in a task's command line, filled in per attempt.
//
// A variable is "{{", optional spaces, "." or "$", a name, optional spaces, "}}". Names are
// matched without regard to case ("{{.outputprefix}}" works). A variable this table does not
// know is an error that names it and lists the known ones, so a typo fails the task at once
// instead of reaching the program as literal braces. Text that is not a variable ("{{ x }}",
// a lone "{{") is left as written.
#pragma once

#include "k8s/error.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::tasks {

struct template_values {
  std::string input;                     // {{ .Input }}
  std::string input_prefix;              // {{ .InputPrefix }}
  std::string output_prefix;             // {{ .OutputPrefix }}
  std::string raw_output_data_prefix;    // {{ .RawOutputDataPrefix }}
  std::string checkpoint_output_prefix;  // {{ .CheckpointOutputPrefix }}
  std::string prev_checkpoint_prefix;    // {{ .PrevCheckpointPrefix }}: "" renders as `""`
  std::string per_retry_unique_key;      // {{ .PerRetryUniqueKey }}, as an identifier ("t-1" → "t_1")
  std::string task_template_path;        // {{ .TaskTemplatePath }}
  std::string namespace_;                // {{ .Namespace }}
  std::map<std::string, std::string> inputs; // {{ .Inputs.<name> }}
};

// Renders one string.
expected<std::string> render_template(std::string_view text, const template_values& values);

// Renders every string of a list; errors name the element ("args[2]: ...").
expected<std::vector<std::string>> render_all(const std::vector<std::string>& list, const template_values& values,
                                              std::string_view field);

} // namespace kozmo::tasks
