// Where the process runtime's container logs live: the one thing the kubelet (which writes
// them) and the API server's pods/log endpoint (which reads them) share. Pure.
//
//   <root>/<namespace>_<pod>_<uid>/<container>/<restartCount>.log
//
// as a kubelet's /var/log/pods. `root` is <work dir>/logs/pods in `kozmo local`
// (pod_logs_root()). Each file holds the container's stdout and stderr of one run, as written.
#pragma once

#include <string>

namespace kozmo::pod_logs {

// The logs root under a work directory.
inline std::string pod_logs_root(const std::string& work_dir) { return work_dir + "/logs/pods"; }

inline std::string pod_dir(const std::string& root, const std::string& ns, const std::string& pod,
                           const std::string& uid) {
  return root + "/" + ns + "_" + pod + "_" + uid;
}

inline std::string container_log(const std::string& root, const std::string& ns, const std::string& pod,
                                 const std::string& uid, const std::string& container, int restart) {
  return pod_dir(root, ns, pod, uid) + "/" + container + "/" + std::to_string(restart) + ".log";
}

} // namespace kozmo::pod_logs
