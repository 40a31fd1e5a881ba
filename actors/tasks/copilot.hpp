// Data in and out of a container task (the peer's co-pilot): the task names its inputs (name →
// URI) and an output prefix; Kozmo adds to the attempt's pod an init container that downloads
// the inputs into a shared volume before the task's container starts, and a sidecar that, once
// the task's container has ended, uploads what it wrote. Pure: no CAF, no I/O, no clock.
//
//   spec.dataLoading {enabled, inputPath, outputPath}        decode_data_loading
//   the pod additions                                          add_copilot
//   the copilot containers' arguments                          download_args / upload_args
//   how a failed copilot container reads as the task's end    copilot_verdict
//
// The pod, for a task with inputs {text: file:///in/text.txt} and outputPrefix file:///out/:
//   volumes            kozmo-inputs, kozmo-outputs: emptyDir, sizeLimit = the primary's
//                      ephemeral-storage limit, else its request, else none (the peer's
//                      CalculateStorageSize / DataVolume)
//   initContainers[+]  kozmo-copilot-downloader: `kozmo copilot download --input-path P
//                      --input text=file:///in/text.txt ...`, kozmo-inputs mounted at P
//   containers[primary] kozmo-inputs at inputPath, kozmo-outputs at outputPath; its command
//                      wrapped by /bin/sh so that its exit code lands in <outputPath>/_EXIT
//                      (written to _EXIT.tmp, then renamed) before it exits with that code
//   containers[+]      kozmo-copilot-uploader: `kozmo copilot upload --output-path P
//                      --output-prefix URI --timeout 1h ...`, kozmo-outputs mounted at P; it
//                      waits for _EXIT, then uploads (or reports _ERROR)
// Store credentials reach the copilot containers only as env from a Secret (secretKeyRef):
// never in arguments, never in the pod spec as values.
#pragma once

#include "actors/demystify/demystify.hpp"
#include "actors/tasks/platform_config.hpp"
#include "actors/tasks/task_spec.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/pod.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::tasks {

inline constexpr const char* copilot_downloader = "kozmo-copilot-downloader";
inline constexpr const char* copilot_uploader = "kozmo-copilot-uploader";
inline constexpr const char* inputs_volume = "kozmo-inputs";
inline constexpr const char* outputs_volume = "kozmo-outputs";
// Files the copilot and the wrapped command share on the volumes.
inline constexpr const char* exit_marker = "_EXIT";     // <outputPath>/_EXIT: the primary's exit code
inline constexpr const char* error_file = "_ERROR";     // <outputPath>/_ERROR: written by the user's program
inline constexpr const char* inputs_metadata = "_inputs.json";   // <inputPath>/_inputs.json
inline constexpr const char* outputs_metadata = "_outputs.json"; // <outputPrefix>/_outputs.json
// Failure codes: the first word of a copilot container's termination message, and the
// task's status reason.
inline constexpr const char* input_download_failed = "InputDownloadFailed";
inline constexpr const char* output_upload_failed = "OutputUploadFailed";
inline constexpr const char* user_error = "UserError";
// The most of _ERROR a task reports; the kubelet keeps 4096 bytes of a termination message,
// so the uploader also stores the whole text next to the outputs.
inline constexpr std::size_t max_error_file_bytes = 1024 * 1024;

// spec.dataLoading into spec.data_loading (left empty when the block is absent or disabled).
// Only type container takes it; it needs spec.container.command (the wrapper runs it), input
// names that are file names, and file:// or s3:// URIs. Errors name the field.
status decode_data_loading(const json::value* block, task_spec& out);

// The peer's CalculateStorageSize: the ephemeral-storage limit of `resources`, else its
// request, else none.
std::optional<std::string> data_volume_size(const json::value& resources);

// The arguments of the two copilot containers. Never a secret: credentials travel as env.
std::vector<std::string> download_args(const task_spec& spec, const copilot_config& cfg);
std::vector<std::string> upload_args(const task_spec& spec, const copilot_config& cfg);
// The primary's command, wrapped: [/bin/sh, -c, script, kozmo-wrapped, <command...>, <args...>]
// (the original words are positional parameters: nothing is re-quoted).
std::vector<std::string> wrapped_command(const std::vector<std::string>& command_and_args, const std::string& output_path);

// Adds the volumes, mounts, wrapper and copilot containers to a pod spec whose container
// `primary` is the task's. Call after the pod is otherwise complete (its resources settled).
// An error when the primary is missing or has no command.
status add_copilot(json::value& pod_spec, const task_spec& spec, const copilot_config& cfg);

// A termination message as the copilot writes it: "<code>[ (user error)]: <message>".
struct copilot_failure {
  std::string code;
  bool user = false;
  std::string message;
};
std::string format_failure(const copilot_failure& f);
copilot_failure parse_failure(std::string_view termination_message, std::string_view fallback_code);

// The text of a user's _ERROR file as a task reports it: at most `limit` bytes, cut on a UTF-8
// boundary, with a note saying how much was left out and where the whole text is.
std::string error_file_message(std::string_view text, std::size_t total_size, std::size_t limit,
                               const std::string& whole_at);

// How the copilot containers' ends read for a pod of a task with data loading, before
// demystify's generic reading (which would only say "Error"):
//   1. the downloader failed: InputDownloadFailed. A retryable system failure (the store or
//      the network failed: the peer retries download failures too, and a system failure does
//      not use up the user's retries), unless the downloader says the input is the user's
//      fault (it does not exist, it is over the size cap): then a permanent user failure, as
//      retrying cannot make it appear.
//   2. the uploader failed: its code. UserError (the program wrote _ERROR): a retryable user
//      failure whose message is the _ERROR text. OutputUploadFailed: a retryable system
//      failure.
//   3. the primary container ended with a failure while the pod still runs: the primary's
//      own verdict (with clean-up, so the pod does not linger), once the uploader has ended or
//      `uploader_grace` has passed since the primary finished (the uploader reads _ERROR
//      within a second; a primary killed before its wrapper wrote _EXIT leaves the uploader
//      waiting for its timeout otherwise).
// nullopt: nothing copilot-specific to say; demystify's reading stands.
inline constexpr std::chrono::seconds uploader_grace{30};
std::optional<demystify::verdict> copilot_verdict(const k8s::pod& pod, std::string_view primary,
                                                  demystify::time_point now);

} // namespace kozmo::tasks
