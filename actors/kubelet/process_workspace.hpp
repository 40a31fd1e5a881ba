// The process runtime's files on the host, under the kubelet's work directory:
//
//   <work>/pods/<uid>/volumes/<volume>/...                      emptyDir, secret, configMap
//   <the volume's hostPath>/...          persistentVolumeClaim, hostPath (shared between pods)
//   <work>/pods/<uid>/containers/<container>/<restart>.termination-log
//   <work>/logs/pods/<ns>_<pod>_<uid>/<container>/<restart>.log  (k8s/apiserver/pod_log_layout.hpp)
//
// and the launch of one container run from the pod's run spec. I/O (small local files only;
// the kubelet actor calls it directly), no CAF.
#pragma once

#include "actors/kubelet/process_runner.hpp"
#include "actors/kubelet/process_spec.hpp"
#include "k8s/error.hpp"

#include <string>
#include <utility>
#include <vector>

namespace kozmo::kubelet {

std::string pod_work_dir(const std::string& work_dir, const std::string& uid);
std::string volume_dir(const std::string& work_dir, const std::string& uid, const std::string& volume);

// Creates every volume's directory and writes the files of secret and configMap volumes
// (with their modes). Errors name the path.
status write_volumes(const std::string& work_dir, const std::string& uid,
                     const std::vector<std::pair<std::string, std::vector<volume_file>>>& volumes);

// A claim's or hostPath volume's directory, made when missing (kozmo's umask, not
// world-writable), as hostPath's DirectoryOrCreate does.
status ensure_host_directory(const std::string& dir);

// Removes the pod's volumes, termination messages and logs (the pod object is gone).
void remove_pod_files(const std::string& work_dir, const pod_run_spec& spec);

// "PATH=<dir of the running kozmo>:<kozmo's PATH>", so that a container's `kozmo ...` runs this
// very binary.
std::string process_path();

// Everything the runner needs to start this run of container `c`: command and args with
// $(VAR) expanded, the environment (PATH, HOSTNAME, HOME, then the container's own), the
// mounts (volumes at their mountPath and subPath, secret and configMap read-only, the
// termination-message file at terminationMessagePath), the log file. Creates the run's empty
// termination-message file. An error: a mount names a volume the pod does not have.
expected<process_launch> make_launch(const std::string& work_dir, const pod_run_spec& pod,
                                     const container_run_spec& c, int restart,
                                     const std::vector<std::pair<std::string, std::string>>& env,
                                     const std::string& path);

} // namespace kozmo::kubelet
