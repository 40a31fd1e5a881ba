#include "actors/kubelet/process_workspace.hpp"

#include "k8s/apiserver/pod_log_layout.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace kozmo::kubelet {
namespace fs = std::filesystem;

std::string pod_work_dir(const std::string& work_dir, const std::string& uid) { return work_dir + "/pods/" + uid; }

std::string volume_dir(const std::string& work_dir, const std::string& uid, const std::string& volume) {
  return pod_work_dir(work_dir, uid) + "/volumes/" + volume;
}

namespace {

std::string termination_file(const std::string& work_dir, const std::string& uid, const std::string& container,
                             int restart) {
  return pod_work_dir(work_dir, uid) + "/containers/" + container + "/" + std::to_string(restart) +
         ".termination-log";
}

} // namespace

status write_volumes(const std::string& work_dir, const std::string& uid,
                     const std::vector<std::pair<std::string, std::vector<volume_file>>>& volumes) {
  for (const auto& [name, files] : volumes) {
    fs::path dir = volume_dir(work_dir, uid, name);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
      return error::internal("cannot create " + dir.string() + ": " + ec.message());
    for (const auto& f : files) {
      fs::path file = dir / f.path;
      fs::create_directories(file.parent_path(), ec);
      std::ofstream out(file, std::ios::binary | std::ios::trunc);
      out << f.content;
      out.close();
      if (!out)
        return error::internal("cannot write " + file.string());
      fs::permissions(file, static_cast<fs::perms>(f.mode & 07777), fs::perm_options::replace, ec);
    }
  }
  return ok;
}

status ensure_host_directory(const std::string& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec))
    return ok;
  // With kozmo's umask (0755 as a rule), as DirectoryOrCreate: never world-writable, since a
  // pod names the path (a provisioned claim's directory is made 0777 by the provisioner).
  fs::create_directories(dir, ec);
  if (ec)
    return error::internal("MountVolume.SetUp failed: cannot create " + dir + ": " + ec.message());
  return ok;
}

void remove_pod_files(const std::string& work_dir, const pod_run_spec& spec) {
  std::error_code ec;
  fs::remove_all(pod_work_dir(work_dir, spec.uid), ec);
  fs::remove_all(pod_logs::pod_dir(pod_logs::pod_logs_root(work_dir), spec.ns, spec.name, spec.uid), ec);
}

std::string process_path() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const char* inherited = std::getenv("PATH");
  std::string path = inherited && *inherited ? inherited : "/usr/local/bin:/usr/bin:/bin";
  if (ec)
    return path;
  return self.parent_path().string() + ":" + path;
}

expected<process_launch> make_launch(const std::string& work_dir, const pod_run_spec& pod,
                                     const container_run_spec& c, int restart,
                                     const std::vector<std::pair<std::string, std::string>>& env,
                                     const std::string& path) {
  process_launch l;
  l.pod_uid = pod.uid;
  l.container = c.name;
  l.init = c.init;
  l.restart = restart;
  // What a container runtime sets, then the container's own variables (which may replace them).
  l.env.emplace_back("PATH", path);
  l.env.emplace_back("HOSTNAME", pod.name);
  if (const char* home = std::getenv("HOME"))
    l.env.emplace_back("HOME", home);
  for (const auto& kv : env)
    l.env.push_back(kv);
  for (const auto* list : {&c.command, &c.args})
    for (const auto& a : *list)
      l.argv.push_back(expand_references(a, env));
  l.working_dir = c.working_dir;
  l.log_path =
      pod_logs::container_log(pod_logs::pod_logs_root(work_dir), pod.ns, pod.name, pod.uid, c.name, restart);
  for (const auto& m : c.mounts) {
    const volume_spec* v = nullptr;
    for (const auto& candidate : pod.volumes)
      if (candidate.name == m.volume)
        v = &candidate;
    if (!v)
      return error::bad_request("volumeMount \"" + m.volume + "\" of container \"" + c.name +
                                "\" names no volume of the pod");
    // A claim's or hostPath's directory is shared with every pod that mounts it.
    std::string source = v->host_dir.empty() ? volume_dir(work_dir, pod.uid, m.volume) : v->host_dir;
    if (!m.sub_path.empty()) {
      if (m.sub_path.front() == '/' || m.sub_path.find("..") != std::string::npos)
        return error::bad_request("subPath \"" + m.sub_path + "\" must be a relative path without ..");
      source += "/" + m.sub_path;
      std::error_code ec;
      if (!fs::exists(source, ec)) // a kubelet creates a missing subPath directory
        fs::create_directories(source, ec);
    }
    bool file = fs::is_regular_file(source);
    bool read_only = m.read_only || v->read_only || v->what == volume_spec::kind::secret ||
                     v->what == volume_spec::kind::config_map;
    l.mounts.push_back({source, m.mount_path, read_only, file, false});
  }
  if (!c.termination_message_path.empty()) {
    l.termination_log = termination_file(work_dir, pod.uid, c.name, restart);
    std::error_code ec;
    fs::create_directories(fs::path(l.termination_log).parent_path(), ec);
    std::ofstream(l.termination_log, std::ios::trunc).close();
    // Optional: a non-root kozmo cannot create /dev/termination-log; the message then comes from
    // FallbackToLogsOnError only.
    l.mounts.push_back({l.termination_log, c.termination_message_path, false, true, true});
  }
  l.fallback_to_logs = c.fallback_to_logs_on_error;
  l.work_dir = pod_work_dir(work_dir, pod.uid);
  return l;
}

} // namespace kozmo::kubelet
