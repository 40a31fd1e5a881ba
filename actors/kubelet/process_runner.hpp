// The process runtime's I/O: starting a container's command as a local process, signalling
// it, and noticing when it ends. No CAF: the kubelet actor hands in a sink that posts each
// report to itself as a message.
//
//   kubelet actor ──launch / signal_pod──▶ runner thread ──fork, exec, waitpid──▶ processes
//   runner thread ──report (started / failed / exited)──▶ sink (anon_send to the actor)
//
// One thread per runner does everything that may block (fork, waiting for exec, waitpid every
// 50 ms, reading the termination message), so the actor never blocks.
//
// A container process: its own process group (signals go to the group; when the leader exits
// the rest of the group is killed, as a container's processes die with its PID 1), stdin from
// /dev/null, stdout and stderr through pipes that the runner writes to its log file as CRI lines
// with their time (k8s/apiserver/pod_log_layout.hpp), the environment given and nothing
// else, the working directory given. With bind mounts it runs in a private mount namespace
// (unshare(CLONE_NEWNS), propagation private, one MS_BIND per mount, remounted read-only when
// asked); a non-root kozmo first enters a user namespace mapping its own uid and gid. There is
// no other isolation: same user, network, PID space and file system as kozmo.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <thread>
#include <vector>

namespace kozmo::kubelet {

struct bind_mount {
  std::string source;   // on the host
  std::string target;   // where the container sees it (created on the host if missing)
  bool read_only = false;
  bool file = false;    // a file (the termination log), not a directory
  bool optional = false; // skipped when its mount point cannot be created (non-root)
};

struct process_launch {
  std::string pod_uid;
  std::string container;
  bool init = false;
  int restart = 0;
  std::vector<std::string> argv;               // command + args; argv[0] resolved on PATH
  std::vector<std::pair<std::string, std::string>> env;
  std::string working_dir;                     // "" = "/"
  std::string log_path;
  std::vector<bind_mount> mounts;
  std::string termination_log;                 // host file whose content becomes the message
  bool fallback_to_logs = false;
  // Run as this uid and gid (dropping root's privileges after the mounts); the pod's work
  // directory (`work_dir`, its volumes and termination logs) is handed to them first.
  std::optional<std::pair<unsigned, unsigned>> run_as;
  std::string work_dir;
};

struct process_report {
  enum class kind { started, failed, exited } what = kind::started;
  std::string pod_uid;
  std::string container;
  bool init = false;
  int restart = 0;
  int exit_code = 0;         // exited: the code, or 128 + signal; failed: 128
  std::string message;       // failed: why; exited: the termination message (policy applied)
  std::chrono::system_clock::time_point at;
};

class process_runner {
public:
  using sink = std::function<void(process_report)>;
  explicit process_runner(sink s);
  // Kills every process still running (SIGKILL to their groups), reaps them, joins the thread.
  ~process_runner();
  process_runner(const process_runner&) = delete;
  process_runner& operator=(const process_runner&) = delete;

  // Starts the container (asynchronously): reports `started` then `exited`, or `failed`.
  void launch(process_launch l);
  // Sends `sig` to the process group of every running container of the pod.
  void signal_pod(const std::string& pod_uid, int sig);
  // Runs `io` on the runner's thread after what was asked before (file work the actor must
  // not wait for, such as removing a pod's logs).
  void post(std::function<void()> io);

private:
  // The read end of a container's stdout or stderr pipe and the line it has not ended yet.
  struct output {
    int fd = -1;
    std::string pending;
  };
  struct running {
    process_launch spec;
    int pid = 0;
    int log_fd = -1;
    output out, err;
    std::string tail; // the last 2 KiB of output (FallbackToLogsOnError)
  };
  void loop();
  void start(process_launch l);
  // Moves what the pipes hold into the log file as CRI lines; `last`: the run is over, its
  // unfinished lines are written too and the descriptors closed.
  static void drain(running& r, bool last);
  void reap();
  void kill_all();

  sink sink_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> work_; // launches and signals, run on the thread
  bool stop_ = false;
  std::map<int, running> procs_;           // by pid; only the runner thread touches it
  std::thread thread_;
};

// The first `name` found in the PATH of `env` (or `name` itself when it holds a '/');
// "" when none is an executable file.
std::string find_executable(const std::string& name, const std::vector<std::pair<std::string, std::string>>& env);

} // namespace kozmo::kubelet
