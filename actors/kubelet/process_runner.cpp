#include "actors/kubelet/process_runner.hpp"

#include "actors/kubelet/process_spec.hpp"
#include "k8s/apiserver/pod_log_layout.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kozmo::kubelet {
namespace fs = std::filesystem;
namespace {

using namespace std::chrono_literals;

// Where the child stopped, written to the error pipe before it exits.
enum stage : int {
  userns = 1,
  id_maps,
  unshare_ns,
  make_private,
  chdir_to,
  exec_it,
  drop_privileges,
  mount_base = 100,
  remount_base = 1000
};

struct child_failure {
  int where = 0;
  int err = 0;
};

std::string describe(const child_failure& f, const process_launch& l, const std::vector<bind_mount>& mounts) {
  std::string why = std::strerror(f.err);
  switch (f.where) {
  case userns:
    return "cannot create a user namespace for the bind mounts (" + why +
           "): run kozmo as root, or allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
           "user.max_user_namespaces > 0)";
  case id_maps:
    return "cannot map the user into its namespace: " + why;
  case unshare_ns:
    return "cannot create a mount namespace (unshare CLONE_NEWNS): " + why + " (needs root or CAP_SYS_ADMIN)";
  case make_private:
    return "cannot make the mount namespace private: " + why;
  case drop_privileges:
    return "run as uid " + std::to_string(l.run_as ? l.run_as->first : 0) + ": " + why;
  case chdir_to:
    return "chdir to \"" + (l.working_dir.empty() ? std::string("/") : l.working_dir) + "\": " + why;
  case exec_it:
    return "exec \"" + (l.argv.empty() ? std::string() : l.argv[0]) + "\": " + why;
  default:
    break;
  }
  if (f.where >= remount_base && static_cast<std::size_t>(f.where - remount_base) < mounts.size())
    return "cannot remount \"" + mounts[f.where - remount_base].target + "\" read-only: " + why;
  if (f.where >= mount_base && static_cast<std::size_t>(f.where - mount_base) < mounts.size())
    return "cannot bind-mount \"" + mounts[f.where - mount_base].source + "\" on \"" +
           mounts[f.where - mount_base].target + "\": " + why;
  return why;
}

// In the child: async-signal-safe calls only (the parent has other threads).
void write_all(int fd, const char* data, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w <= 0)
      return;
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

bool write_proc(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  ssize_t n = ::write(fd, text, std::strlen(text));
  ::close(fd);
  return n == static_cast<ssize_t>(std::strlen(text));
}

[[noreturn]] void child_fail(int errfd, int where) {
  child_failure f{where, errno};
  write_all(errfd, reinterpret_cast<const char*>(&f), sizeof f);
  ::_exit(127);
}

// Everything the child needs, prepared before fork (no allocation after it).
struct child_plan {
  std::string exe;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::string cwd;
  std::vector<bind_mount> mounts;
  bool user_namespace = false;
  // Every mount is optional (only the termination-message file): without the right to make a
  // mount namespace the container runs without them instead of failing.
  bool mounts_optional = false;
  std::string uid_map, gid_map;
  int out_fd = -1, errout_fd = -1, null_fd = -1, err_fd = -1; // write ends for stdout/stderr
  bool drop = false; // become run_uid/run_gid after the mounts
  uid_t run_uid = 0;
  gid_t run_gid = 0;
};

// A user namespace mapping our uid and gid to themselves, and a mount namespace it owns.
// 0 when done, else `unshare_stage` or id_maps (errno set).
int enter_user_and_mount_namespace(const child_plan& p, int unshare_stage) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
    return unshare_stage;
  if (!write_proc("/proc/self/setgroups", "deny") || !write_proc("/proc/self/uid_map", p.uid_map.c_str()) ||
      !write_proc("/proc/self/gid_map", p.gid_map.c_str()))
    return id_maps;
  return 0;
}

// A private mount namespace (in a user namespace when not root). 0 when done, else the stage
// that failed, errno set.
int enter_mount_namespace(const child_plan& p) {
  int failed = 0;
  if (p.user_namespace)
    failed = enter_user_and_mount_namespace(p, userns);
  else if (::unshare(CLONE_NEWNS) != 0)
    // Root without CAP_SYS_ADMIN (some containers) may still be allowed a user namespace.
    failed = errno == EPERM ? enter_user_and_mount_namespace(p, unshare_ns) : unshare_ns;
  if (failed)
    return failed;
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return make_private;
  return 0;
}

[[noreturn]] void run_child(const child_plan& p) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr); // kozmo blocks SIGINT/SIGTERM in every thread
  for (int s = 1; s < NSIG; ++s)
    ::signal(s, SIG_DFL);
  // Only optional mounts (the termination-message file): without the right to make the
  // namespaces the container runs without them instead of failing.
  bool with_mounts = !p.mounts.empty();
  if (with_mounts) {
    int failed = enter_mount_namespace(p);
    if (failed == userns || failed == unshare_ns) {
      if (!p.mounts_optional)
        child_fail(p.err_fd, failed);
      with_mounts = false;
    } else if (failed) {
      child_fail(p.err_fd, failed);
    }
  }
  if (with_mounts) {
    for (std::size_t i = 0; i < p.mounts.size(); ++i) {
      const auto& m = p.mounts[i];
      if (::mount(m.source.c_str(), m.target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
        if (m.optional)
          continue;
        child_fail(p.err_fd, mount_base + static_cast<int>(i));
      }
      if (!m.read_only)
        continue;
      // A remount must keep the flags the kernel locked on the original (in a user namespace).
      struct statvfs sv {};
      unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY;
      if (::statvfs(m.target.c_str(), &sv) == 0) {
        flags |= (sv.f_flag & ST_NOSUID) ? MS_NOSUID : 0;
        flags |= (sv.f_flag & ST_NODEV) ? MS_NODEV : 0;
        flags |= (sv.f_flag & ST_NOEXEC) ? MS_NOEXEC : 0;
      }
      if (::mount(nullptr, m.target.c_str(), nullptr, flags, nullptr) != 0)
        child_fail(p.err_fd, remount_base + static_cast<int>(i));
    }
  }
  // Root's privileges end before the pod's command starts: no supplementary groups, then the
  // group, then the user (the other order would leave no right to change the group).
  if (p.drop && (::setgroups(0, nullptr) != 0 || ::setgid(p.run_gid) != 0 || ::setuid(p.run_uid) != 0))
    child_fail(p.err_fd, drop_privileges);
  if (::chdir(p.cwd.c_str()) != 0)
    child_fail(p.err_fd, chdir_to);
  // Nothing of kozmo's leaks into the container: every other descriptor closes at exec.
#ifdef SYS_close_range
  ::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
#endif
  ::dup2(p.null_fd, 0);
  ::dup2(p.out_fd, 1);
  ::dup2(p.errout_fd, 2);
  ::execve(p.exe.c_str(), p.argv.data(), p.envp.data());
  child_fail(p.err_fd, exec_it);
}

// The pod's files (volumes, termination logs) belong to the user its processes run as.
void hand_over(const std::string& dir, uid_t uid, gid_t gid) {
  std::error_code ec;
  if (dir.empty() || !fs::exists(dir, ec))
    return;
  (void)::lchown(dir.c_str(), uid, gid);
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    (void)::lchown(it->path().c_str(), uid, gid);
}

// Creates a missing mount point on the host (directories, or an empty file).
bool make_mount_point(const bind_mount& m, std::string& why) {
  std::error_code ec;
  fs::path target(m.target);
  if (m.file) {
    if (fs::exists(target, ec))
      return true;
    fs::create_directories(target.parent_path(), ec);
    std::ofstream touch(target);
    if (touch)
      return true;
    why = "cannot create the mount point " + m.target + ": " + std::strerror(errno);
    return false;
  }
  if (fs::is_directory(target, ec))
    return true;
  fs::create_directories(target, ec);
  if (!ec)
    return true;
  why = "cannot create the mount point " + m.target + ": " + ec.message();
  return false;
}

// Now as RFC 3339 with nanoseconds, UTC (a CRI log line's time).
std::string now_rfc3339_nano() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  ::gmtime_r(&ts.tv_sec, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long>(ts.tv_nsec));
  return buf;
}

bool make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return false;
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  ::fcntl(fds[0], F_SETPIPE_SZ, 1 << 20); // a chatty container blocks less between two drains
  return true;
}

std::string read_head(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string out(max_bytes, '\0');
  in.read(out.data(), static_cast<std::streamsize>(max_bytes));
  out.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  return out;
}

} // namespace

std::string find_executable(const std::string& name, const std::vector<std::pair<std::string, std::string>>& env) {
  if (name.empty())
    return {};
  if (name.find('/') != std::string::npos)
    return name; // relative to the working directory, or absolute: exec says if it is missing
  std::string path;
  for (const auto& [k, v] : env)
    if (k == "PATH")
      path = v;
  std::size_t start = 0;
  while (start <= path.size()) {
    auto end = path.find(':', start);
    if (end == std::string::npos)
      end = path.size();
    std::string dir = path.substr(start, end - start);
    start = end + 1;
    if (dir.empty())
      continue;
    std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return {};
}

process_runner::process_runner(sink s) : sink_(std::move(s)), thread_([this] { loop(); }) {}

process_runner::~process_runner() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void process_runner::launch(process_launch l) {
  {
    std::lock_guard lock(mu_);
    work_.push_back([this, l = std::move(l)]() mutable { start(std::move(l)); });
  }
  cv_.notify_all();
}

void process_runner::signal_pod(const std::string& pod_uid, int sig) {
  {
    std::lock_guard lock(mu_);
    work_.push_back([this, pod_uid, sig] {
      for (const auto& [pid, r] : procs_)
        if (r.spec.pod_uid == pod_uid)
          ::kill(-pid, sig);
    });
  }
  cv_.notify_all();
}

void process_runner::post(std::function<void()> io) {
  {
    std::lock_guard lock(mu_);
    work_.push_back(std::move(io));
  }
  cv_.notify_all();
}

void process_runner::loop() {
  for (;;) {
    std::deque<std::function<void()>> batch;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, 50ms, [this] { return stop_ || !work_.empty(); });
      if (stop_)
        break;
      batch.swap(work_);
    }
    for (auto& w : batch)
      w();
    reap();
  }
  kill_all();
}

void process_runner::start(process_launch l) {
  auto report_failure = [&](std::string message) {
    process_report r{process_report::kind::failed, l.pod_uid, l.container, l.init, l.restart, 128,
                     std::move(message), std::chrono::system_clock::now()};
    sink_(std::move(r));
  };
  if (l.argv.empty()) {
    report_failure("no command to run");
    return;
  }
  child_plan p;
  p.exe = find_executable(l.argv[0], l.env);
  if (p.exe.empty()) {
    report_failure("exec: \"" + l.argv[0] + "\": executable file not found in $PATH");
    return;
  }
  for (auto& m : l.mounts) {
    std::string why;
    if (make_mount_point(m, why)) {
      p.mounts.push_back(m);
      continue;
    }
    if (!m.optional) {
      report_failure(why);
      return;
    }
  }
  p.mounts_optional = true;
  for (const auto& m : p.mounts)
    p.mounts_optional = p.mounts_optional && m.optional;
  p.args = l.argv;
  for (const auto& [k, v] : l.env)
    p.env.push_back(k + "=" + v);
  for (auto& a : p.args)
    p.argv.push_back(a.data());
  p.argv.push_back(nullptr);
  for (auto& e : p.env)
    p.envp.push_back(e.data());
  p.envp.push_back(nullptr);
  p.cwd = l.working_dir.empty() ? "/" : l.working_dir;
  p.user_namespace = ::geteuid() != 0;
  if (l.run_as && ::geteuid() == 0) {
    p.drop = true;
    p.run_uid = static_cast<uid_t>(l.run_as->first);
    p.run_gid = static_cast<gid_t>(l.run_as->second);
    hand_over(l.work_dir, p.run_uid, p.run_gid);
  }
  p.uid_map = std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1\n";
  p.gid_map = std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1\n";

  std::error_code ec;
  fs::create_directories(fs::path(l.log_path).parent_path(), ec);
  int log_fd = ::open(l.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    report_failure("cannot open the log file " + l.log_path + ": " + std::strerror(errno));
    return;
  }
  int out_pipe[2], err_pipe[2], pipe_fds[2];
  if (!make_pipe(out_pipe)) {
    ::close(log_fd);
    report_failure(std::string("pipe: ") + std::strerror(errno));
    return;
  }
  if (!make_pipe(err_pipe)) {
    ::close(log_fd);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    report_failure(std::string("pipe: ") + std::strerror(errno));
    return;
  }
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    for (int fd : {log_fd, out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      ::close(fd);
    report_failure(std::string("pipe: ") + std::strerror(errno));
    return;
  }
  p.null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  p.out_fd = out_pipe[1];
  p.errout_fd = err_pipe[1];
  p.err_fd = pipe_fds[1];
  pid_t pid = ::fork();
  if (pid == 0)
    run_child(p);
  for (int fd : {pipe_fds[1], out_pipe[1], err_pipe[1], p.null_fd})
    ::close(fd);
  auto close_reads = [&] {
    for (int fd : {log_fd, out_pipe[0], err_pipe[0]})
      ::close(fd);
  };
  if (pid < 0) {
    ::close(pipe_fds[0]);
    close_reads();
    report_failure(std::string("fork: ") + std::strerror(errno));
    return;
  }
  // EOF: exec succeeded (the pipe closed with it); a record: the child failed before exec.
  child_failure f;
  ssize_t n;
  do
    n = ::read(pipe_fds[0], &f, sizeof f);
  while (n < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  if (n == static_cast<ssize_t>(sizeof f)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    close_reads();
    report_failure(describe(f, l, p.mounts));
    return;
  }
  process_report r{process_report::kind::started, l.pod_uid, l.container, l.init, l.restart, 0, {},
                   std::chrono::system_clock::now()};
  running run;
  run.spec = std::move(l);
  run.pid = pid;
  run.log_fd = log_fd;
  run.out.fd = out_pipe[0];
  run.err.fd = err_pipe[0];
  procs_.emplace(pid, std::move(run));
  sink_(std::move(r));
}

void process_runner::drain(running& r, bool last) {
  constexpr std::size_t max_line = 16 * 1024, tail_bytes = 2048;
  std::string time = now_rfc3339_nano();
  std::string lines;
  for (auto [o, stream] : {std::pair{&r.out, "stdout"}, std::pair{&r.err, "stderr"}}) {
    if (o->fd < 0)
      continue;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(o->fd, buf, sizeof buf);
      if (n <= 0)
        break;
      o->pending.append(buf, static_cast<std::size_t>(n));
      r.tail.append(buf, static_cast<std::size_t>(n));
      if (r.tail.size() > tail_bytes)
        r.tail.erase(0, r.tail.size() - tail_bytes);
    }
    std::size_t pos = 0;
    for (auto nl = o->pending.find('\n'); nl != std::string::npos; nl = o->pending.find('\n', pos)) {
      lines += pod_logs::cri_line(time, stream, false, std::string_view(o->pending).substr(pos, nl - pos));
      pos = nl + 1;
    }
    o->pending.erase(0, pos);
    // A very long line goes out in pieces; what is left at the end is a line of its own.
    while (o->pending.size() > max_line) {
      lines += pod_logs::cri_line(time, stream, true, std::string_view(o->pending).substr(0, max_line));
      o->pending.erase(0, max_line);
    }
    if (last && !o->pending.empty()) {
      lines += pod_logs::cri_line(time, stream, false, o->pending);
      o->pending.clear();
    }
    if (last) {
      ::close(o->fd);
      o->fd = -1;
    }
  }
  write_all(r.log_fd, lines.data(), lines.size());
  if (last) {
    ::close(r.log_fd);
    r.log_fd = -1;
  }
}

void process_runner::reap() {
  for (auto it = procs_.begin(); it != procs_.end();) {
    int status = 0;
    pid_t got = ::waitpid(it->first, &status, WNOHANG);
    if (got == 0) {
      drain(it->second, false);
      ++it;
      continue;
    }
    // The leader is gone: the rest of its group goes with it, as a container's processes die
    // with its PID 1.
    ::kill(-it->first, SIGKILL);
    int code = 0;
    if (got < 0)
      code = 255; // not our child any more (should not happen): report it gone
    else if (WIFEXITED(status))
      code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      code = 128 + WTERMSIG(status);
    drain(it->second, true);
    const auto& l = it->second.spec;
    std::string file = l.termination_log.empty() ? std::string() : read_head(l.termination_log, 4096);
    const std::string& tail = it->second.tail;
    process_report r{process_report::kind::exited, l.pod_uid, l.container, l.init, l.restart, code,
                     termination_message(file, tail, l.fallback_to_logs, code), std::chrono::system_clock::now()};
    it = procs_.erase(it);
    sink_(std::move(r));
  }
}

void process_runner::kill_all() {
  for (auto& [pid, r] : procs_) {
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    drain(r, true);
  }
  procs_.clear();
}

} // namespace kozmo::kubelet
