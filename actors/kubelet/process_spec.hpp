// What the process runtime runs for a pod, decided from the pod's JSON: pure, no I/O.
//
// The typed pod model skips volumes, mounts and termination-message fields (k8s/model/pod.hpp),
// so the process runtime reads the pod as the API server stores it. Three steps:
//   1. parse_run_spec(pod)          → containers (command, args, env sources, mounts, ...) and
//                                     volumes; a container with no `command` is blocked with
//                                     CreateContainerError (there is no image to read an
//                                     entrypoint from)
//   2. referenced_objects(spec)     → the Secrets, ConfigMaps and claims to fetch from the API
//                                     server (and, for each Bound claim, its volume)
//   3. resolve_env / volume_files   → the environment and the files of each volume, given what
//                                     was fetched; a missing non-optional reference is an error
//                                     worded as a kubelet words it; host_directory for a
//                                     persistentVolumeClaim (its Bound volume's hostPath) or
//                                     hostPath volume
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kozmo::kubelet {

struct env_source {
  enum class kind { value, secret_key, config_map_key, field } what = kind::value;
  std::string value;     // kind::value: the literal (may hold $(VAR) references)
  std::string object;    // secret / config map name
  std::string key;       // its key, or the field path for kind::field
  bool optional = false;
};

struct env_entry {
  std::string name;
  env_source source;
};

// envFrom: every key of a Secret or ConfigMap as a variable (prefix + key), before `env`.
struct env_from_spec {
  bool secret = false; // else a ConfigMap
  std::string object;
  std::string prefix;
  bool optional = false;
};

struct volume_mount_spec {
  std::string volume;
  std::string mount_path;
  std::string sub_path;
  bool read_only = false;
};

struct container_run_spec {
  std::string name;
  std::string image;
  bool init = false;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<env_entry> env;
  std::vector<env_from_spec> env_from;
  std::string working_dir;
  std::vector<volume_mount_spec> mounts;
  std::string termination_message_path = "/dev/termination-log";
  bool fallback_to_logs_on_error = false; // terminationMessagePolicy: FallbackToLogsOnError
  // CreateContainerError and why, when the container can never be created.
  std::string blocked_reason;
  std::string blocked_message;
};

struct volume_item {
  std::string key;
  std::string path;
  std::optional<int> mode;
};

struct volume_spec {
  enum class kind { empty_dir, secret, config_map, claim, host_path, unsupported } what = kind::unsupported;
  std::string name;
  std::string object;              // secret / config map / claim name; hostPath's path
  std::vector<volume_item> items;  // empty: every key as a file of its name
  int default_mode = 0644;
  bool optional = false;
  bool read_only = false;          // persistentVolumeClaim.readOnly: every mount of it read-only
  std::string unsupported_type;    // e.g. "nfs", for the error message
  // claim and host_path: the host directory bind-mounted (host_directory's answer, set when the
  // pod is admitted); "" for the others, which live under the pod's work directory.
  std::string host_dir;
};

struct pod_run_spec {
  std::string ns;
  std::string name;
  std::string uid;
  std::string node_name;
  std::string restart_policy = "Always";
  std::vector<container_run_spec> containers; // init containers first, in order
  std::vector<volume_spec> volumes;
};

// Reads spec.initContainers, spec.containers and spec.volumes. Errors only for a pod that is
// not an object with metadata and spec.
expected<pod_run_spec> parse_run_spec(const json::value& pod);

// The Secrets, ConfigMaps and PersistentVolumeClaims the pod refers to (env and volumes),
// without duplicates. A fetched Bound claim brings its PersistentVolume (kind::volume).
struct object_ref {
  enum class kind { secret, config_map, claim, volume } what = kind::secret;
  std::string name;
  friend bool operator<(const object_ref& a, const object_ref& b) {
    return std::pair(a.what, a.name) < std::pair(b.what, b.name);
  }
  friend bool operator==(const object_ref&, const object_ref&) = default;
};
std::vector<object_ref> referenced_objects(const pod_run_spec& spec);

// What the API server answered for each reference: the object, or nothing when it is absent.
using fetched_objects = std::map<object_ref, std::optional<json::value>>;

// The container's environment in order, references resolved, $(VAR) expanded against the
// variables before it (Kubernetes' rules: `$$` is a literal `$`, an unknown $(X) stays as it is).
// A missing Secret/ConfigMap or key that is not optional is an error with a kubelet's message
// (`secret "db" not found`, `couldn't find key k in Secret ns/db`): CreateContainerConfigError.
expected<std::vector<std::pair<std::string, std::string>>> resolve_env(const container_run_spec& c,
                                                                       const json::value& pod,
                                                                       const fetched_objects& objects);

// $(VAR) expansion of a command or argument against an environment.
std::string expand_references(const std::string& text, const std::vector<std::pair<std::string, std::string>>& env);

// A file of a secret or configMap volume, relative to the volume's directory.
struct volume_file {
  std::string path;
  std::string content;
  int mode = 0644;
  friend bool operator==(const volume_file&, const volume_file&) = default;
};
// The files of a secret or configMap volume (none for the others). Errors: a missing object
// that is not optional (`secret "x" not found`), a missing item key, an unsupported type.
expected<std::vector<volume_file>> volume_files(const volume_spec& v, const fetched_objects& objects);

// The host directory of a persistentVolumeClaim volume (the hostPath of the volume its claim is
// Bound to) or hostPath volume; "" for the volumes that live in the pod's work directory.
// Errors, worded for a FailedMount Event naming the claim: the claim is missing or not Bound
// yet (the kubelet tries again), its volume is missing or not a hostPath volume.
expected<std::string> host_directory(const volume_spec& v, const fetched_objects& objects);

// The termination message a kubelet reports: the file's content (at most 4096 bytes); with
// FallbackToLogsOnError, a failed container with an empty file reports the end of its log (at
// most 80 lines and 2048 bytes).
std::string termination_message(const std::string& file_content, const std::string& log_tail, bool fallback_to_logs,
                                 int exit_code);

} // namespace kozmo::kubelet
