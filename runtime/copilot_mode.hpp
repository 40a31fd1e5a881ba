// `kozmo copilot download|upload`: the two halves of a task's data loading, run by the copilot
// containers Kozmo adds to a task's pod (actors/tasks/copilot.hpp), or by hand.
//
//   download  each --input NAME=URI: one object into <input-path>/NAME, or every object under a
//             prefix (a directory) into <input-path>/NAME/...; then <input-path>/_inputs.json
//             (name → uri, kind, size, sha256, files). The inputs' total is checked against
//             --max-dataset-size before anything is fetched.
//   upload    waits for <output-path>/_EXIT (the task's command, wrapped, writes its exit code
//             there), then: _ERROR present → report it (a user error); the command failed →
//             upload nothing (its exit decides the task); else every file under output-path
//             goes to <output-prefix>/<relative path>, then <output-prefix>/_outputs.json.
//
// A failure is written to the termination log as "<Code>[ (user error)]: <message>" (what
// copilot_verdict reads back) and the process exits 1.
#pragma once

#include "runtime/cli.hpp"

namespace kozmo::runtime {

int run_copilot(const copilot_options& opts);

} // namespace kozmo::runtime
