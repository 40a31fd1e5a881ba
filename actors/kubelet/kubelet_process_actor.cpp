// The kubelet actor's pods of the process runtime: admission (read the pod as stored and the
// Secrets/ConfigMaps it names), start (volumes, environment), then a table of "on this, do that"
// around the pure process_lifecycle:
//
//   watch: new pod (runtime process) ──▶ admit: GET pod, GET each Secret/ConfigMap/claim (and a
//                                        Bound claim's volume) ──▶ proc_ready
//   proc_ready     ──▶ write volumes, lifecycle.begin  ──▶ runner.launch(first containers)
//   proc_ready, a volume cannot be mounted ──▶ ContainerCreating, FailedMount ──(1..8 s)──▶
//                  remount: admit again
//   process_report ──▶ lifecycle.on_started / on_exited ──▶ launch what it says, arm back-off
//   advance timer  ──▶ lifecycle.on_timer (back-off over) ──▶ launch
//   deletion       ──▶ lifecycle.begin_stop, SIGTERM ──(grace)──▶ SIGKILL; last exit ──▶ DELETE grace 0
//   watch: deleted ──▶ SIGKILL anything left, remove the pod's files
#include "actors/kubelet/kubelet_actor_state.hpp"

#include "actors/kubelet/process_workspace.hpp"
#include "k8s/model/kozmo_keys.hpp"

#include <spdlog/spdlog.h>

#include <csignal>
#include <map>
#include <mutex>

namespace kozmo::kubelet {

struct process_admission {
  std::mutex mu;
  json::value pod;
  fetched_objects objects;
  std::size_t left = 0;
  std::string error; // the pod could not be read
};

namespace {

// Processes share the host's network: the pod's IP is the loopback address.
constexpr const char* process_pod_ip = "127.0.0.1";

process_runner& runner_of(kubelet_actor* self) {
  auto& st = self->state;
  if (!st.runner) {
    // A weak handle: the runner lives in the actor's state and must not keep the actor alive.
    auto weak = caf::actor_cast<caf::weak_actor_ptr>(self);
    st.runner = std::make_shared<process_runner>([weak](process_report r) {
      if (auto strong = weak.lock())
        caf::anon_send(caf::actor_cast<caf::actor>(strong), std::move(r));
    });
    st.process_path = process_path();
  }
  return *st.runner;
}

std::map<std::string, std::string> annotations_of(const json::value& pod) {
  std::map<std::string, std::string> out;
  if (const auto* a = pod.at_path({"metadata", "annotations"}); a && a->is_object())
    for (const auto& [k, v] : a->as_object())
      out[k] = json::scalar_text(v);
  return out;
}

const container_run_spec* container_of(const process_pod& pp, const std::string& name, bool init,
                                       std::size_t* index = nullptr) {
  for (std::size_t i = 0; i < pp.spec.containers.size(); ++i)
    if (pp.spec.containers[i].name == name && pp.spec.containers[i].init == init) {
      if (index)
        *index = i;
      return &pp.spec.containers[i];
    }
  return nullptr;
}

void run_step(kubelet_actor* self, const std::string& uid, tracked_pod& p, const process_step& step) {
  auto& st = self->state;
  auto& pp = *p.proc;
  auto& runner = runner_of(self); // also settles st.process_path
  for (const auto& run : step.start) {
    std::size_t index = 0;
    const auto* c = container_of(pp, run.name, run.init, &index);
    if (!c)
      continue;
    auto launch = make_launch(st.cfg.work_dir, pp.spec, *c, run.restart, pp.env[index], st.process_path);
    if (launch)
      launch->run_as = st.cfg.run_as;
    if (!launch) {
      post_event(self, p, uid, "Warning", "Failed", "Error: " + launch.err().message);
      auto next = pp.life->on_exited(run.name, run.init, {128, launch.err().message, "StartError"}, clock::now());
      run_step(self, uid, p, next);
      continue;
    }
    runner.launch(std::move(*launch));
  }
  if (step.wake_after)
    arm(self, uid, p, *step.wake_after);
}

// The pod's processes are gone after a deletion: the pod object goes too.
void finish_if_stopped(kubelet_actor* self, const std::string& uid, tracked_pod& p) {
  if (!p.proc->life->stopped())
    return;
  ++p.timer_generation; // the pending SIGKILL is moot
  remove_pod_object(self, uid, p.ns, p.name);
}

} // namespace

expected<bool> runs_as_processes(const k8s::pod& pod, const std::string& node_runtime, bool allow_process) {
  auto it = pod.metadata.annotations.find(keys::runtime);
  std::string runtime = it == pod.metadata.annotations.end() ? node_runtime : std::string(it->second);
  if (runtime == "process" && (allow_process || node_runtime == "process"))
    return true;
  if (runtime == "process")
    return error::bad_request(std::string("annotation ") + keys::runtime +
                              ": \"process\" runs the pod's command on this host, and this node's operator did not "
                              "allow it (kozmo local --allow-process-runtime or --runtime process)");
  if (runtime == "sim" || runtime.empty())
    return false;
  return error::bad_request(std::string("annotation ") + keys::runtime + ": \"" + runtime +
                            "\" is not one of process, sim");
}

namespace {

// One reference read into `adm`; a Bound claim's volume is read before it counts as done.
void fetch_ref(const std::shared_ptr<client::client>& cli, std::shared_ptr<process_admission> adm, caf::actor me,
               std::string uid, std::string ns, object_ref ref) {
  const char* plural = ref.what == object_ref::kind::secret       ? "secrets"
                       : ref.what == object_ref::kind::config_map ? "configmaps"
                       : ref.what == object_ref::kind::claim      ? "persistentvolumeclaims"
                                                                  : "persistentvolumes";
  std::string in_ns = ref.what == object_ref::kind::volume ? std::string() : ns;
  cli->get({"", "v1", plural, in_ns, ref.name, ""}, [adm, me, uid, ns, ref, cli](expected<json::value> o) {
    std::string volume;
    if (o && ref.what == object_ref::kind::claim)
      if (const auto* name = o->at_path({"spec", "volumeName"}); name && name->is_string())
        volume = name->as_string();
    std::lock_guard lock(adm->mu);
    adm->objects[ref] = o ? std::optional<json::value>(std::move(*o)) : std::nullopt;
    if (!volume.empty()) { // counted as one more reference, then this one is done
      ++adm->left;
      fetch_ref(cli, adm, me, uid, ns, {object_ref::kind::volume, volume});
    }
    if (--adm->left == 0)
      caf::anon_send(me, proc_ready_atom::value, uid);
  });
}

// Reads the pod as stored and everything it references into `adm`, then proc_ready_atom.
void read_for_admission(kubelet_actor* self, const std::string& uid, const std::string& ns, const std::string& name,
                        std::shared_ptr<process_admission> adm) {
  auto me = caf::actor_cast<caf::actor>(self);
  auto cli = self->state.cli;
  cli->get({"", "v1", "pods", ns, name, ""}, [adm, me, uid, ns, cli](expected<json::value> r) {
    if (!r) {
      std::lock_guard lock(adm->mu);
      adm->error = "cannot read the pod: " + r.err().message;
      caf::anon_send(me, proc_ready_atom::value, uid);
      return;
    }
    auto spec = parse_run_spec(*r);
    auto refs = spec ? referenced_objects(*spec) : std::vector<object_ref>{};
    {
      std::lock_guard lock(adm->mu);
      adm->pod = std::move(*r);
      adm->left = refs.size();
    }
    if (refs.empty()) {
      caf::anon_send(me, proc_ready_atom::value, uid);
      return;
    }
    for (const auto& ref : refs)
      fetch_ref(cli, adm, me, uid, ns, ref);
  });
}

// A pod whose volumes could not be mounted is admitted again after this long (the kubelet's
// volume manager keeps trying): 1 s doubling to 8 s.
duration remount_delay(int attempts) { return duration(1000LL << std::min(attempts, 3)); }

} // namespace

void admit_process_pod(kubelet_actor* self, const k8s::pod& pod) {
  auto& st = self->state;
  const std::string uid = pod.metadata.uid;
  auto adm = std::make_shared<process_admission>();
  tracked_pod placeholder;
  placeholder.ns = pod.metadata.namespace_;
  placeholder.name = pod.metadata.name;
  placeholder.need = need_of(pod);
  placeholder.admission = adm;
  st.pods.emplace(uid, std::move(placeholder));
  read_for_admission(self, uid, pod.metadata.namespace_, pod.metadata.name, std::move(adm));
}

void on_remount(kubelet_actor* self, const std::string& uid, std::uint64_t generation) {
  auto it = self->state.pods.find(uid);
  if (it == self->state.pods.end() || !it->second.proc || it->second.stopping || it->second.admission ||
      it->second.timer_generation != generation || it->second.mount_error.empty())
    return;
  auto adm = std::make_shared<process_admission>();
  it->second.admission = adm;
  read_for_admission(self, uid, it->second.ns, it->second.name, std::move(adm));
}

void on_process_ready(kubelet_actor* self, const std::string& uid) {
  auto& st = self->state;
  auto it = st.pods.find(uid);
  if (it == st.pods.end() || !it->second.admission)
    return; // deleted while it was being admitted
  auto& p = it->second;
  auto adm = std::move(p.admission);
  if (p.stopping)
    return; // deleted while its volumes were tried again: the stop is under way
  std::lock_guard lock(adm->mu);
  auto spec = adm->error.empty() ? parse_run_spec(adm->pod) : expected<pod_run_spec>(error::bad_request(adm->error));
  if (!spec) {
    spdlog::warn("kubelet node={} pod={}/{}: {}", st.cfg.node.name, p.ns, p.name, spec.err().message);
    st.pods.erase(it); // the next event about the pod tries again
    return;
  }
  // What fieldRef status.podIP / status.hostIP read.
  adm->pod["status"]["podIP"] = process_pod_ip;
  adm->pod["status"]["hostIP"] = st.cfg.node.internal_ip;

  auto pp = std::make_unique<process_pod>();
  pp->spec = std::move(*spec);
  process_pod_shape shape;
  shape.uid = uid;
  shape.restart_policy = pp->spec.restart_policy;
  shape.host_ip = st.cfg.node.internal_ip;
  shape.pod_ip = process_pod_ip;
  if (auto script = parse_pod_script(annotations_of(adm->pod)))
    shape.restart_backoff = script->restart_backoff;
  std::vector<std::string> blocked;
  for (const auto& c : pp->spec.containers) {
    auto env = resolve_env(c, adm->pod, adm->objects);
    process_pod_shape::container sc{c.name, c.image, c.blocked_reason, c.blocked_message};
    if (sc.blocked_reason.empty() && !env) {
      sc.blocked_reason = "CreateContainerConfigError";
      sc.blocked_message = env.err().message;
    }
    if (!sc.blocked_reason.empty())
      blocked.push_back(sc.blocked_message);
    pp->env.push_back(env ? std::move(*env) : std::vector<std::pair<std::string, std::string>>{});
    (c.init ? shape.init_containers : shape.containers).push_back(std::move(sc));
  }
  auto now = clock::now();
  pp->life = std::make_unique<process_lifecycle>(std::move(shape), now);

  std::string mount_error;
  if (st.cfg.work_dir.empty())
    mount_error = "the process runtime needs a work directory (kozmo local gives its kubelets one)";
  std::vector<std::pair<std::string, std::vector<volume_file>>> volumes;
  for (const auto& v : pp->spec.volumes) {
    if (!mount_error.empty())
      break;
    auto files = volume_files(v, adm->objects);
    auto dir = host_directory(v, adm->objects);
    if (!files)
      mount_error = files.err().message;
    else if (!dir)
      mount_error = dir.err().message;
    else if (dir->empty())
      volumes.emplace_back(v.name, std::move(*files));
    else if (auto made = ensure_host_directory(*dir); !made)
      mount_error = made.err().message;
  }
  for (auto& v : pp->spec.volumes)
    if (auto dir = host_directory(v, adm->objects))
      v.host_dir = *dir;
  if (mount_error.empty())
    if (auto written = write_volumes(st.cfg.work_dir, uid, volumes); !written)
      mount_error = written.err().message;
  p.proc = std::move(pp);
  if (!mount_error.empty()) {
    p.proc->life->block("ContainerCreating", mount_error);
    write_status(self, uid, p);
    if (mount_error != p.mount_error) // said once; a different reason is said again
      post_event(self, p, uid, "Warning", "FailedMount", mount_error);
    p.mount_error = mount_error;
    ++p.timer_generation;
    self->delayed_send(self, remount_delay(p.mount_attempts++), remount_atom::value, uid, p.timer_generation);
    return;
  }
  p.mount_error.clear();
  spdlog::info("kubelet node={} pod={}/{} accepted runtime=process", st.cfg.node.name, p.ns, p.name);
  for (const auto& why : blocked)
    post_event(self, p, uid, "Warning", "Failed", "Error: " + why);
  auto step = p.proc->life->begin(now);
  write_status(self, uid, p);
  run_step(self, uid, p, step);
}

void on_process_report(kubelet_actor* self, const process_report& r) {
  auto& st = self->state;
  auto it = st.pods.find(r.pod_uid);
  if (it == st.pods.end() || !it->second.proc)
    return;
  auto& p = it->second;
  auto& life = *p.proc->life;
  if (!life.is_running(r.container, r.init))
    return; // a report about a run the lifecycle no longer waits for
  process_step step;
  switch (r.what) {
  case process_report::kind::started:
    life.on_started(r.container, r.init, r.at);
    post_event(self, p, r.pod_uid, "Normal", "Started",
               "Started container " + r.container + " (process on " + st.cfg.node.name + ")");
    break;
  case process_report::kind::failed:
    spdlog::info("kubelet node={} pod={}/{} container={} failed to start: {}", st.cfg.node.name, p.ns, p.name,
                 r.container, r.message);
    post_event(self, p, r.pod_uid, "Warning", "Failed", "Error: " + r.message);
    step = life.on_exited(r.container, r.init, {r.exit_code, r.message, "StartError"}, r.at);
    break;
  case process_report::kind::exited:
    spdlog::info("kubelet node={} pod={}/{} container={} exited code={}", st.cfg.node.name, p.ns, p.name, r.container,
                 r.exit_code);
    step = life.on_exited(r.container, r.init, {r.exit_code, r.message, ""}, r.at);
    if (!life.stopping() && step.wake_after && !life.is_running(r.container, r.init) &&
        !life.finished())
      post_event(self, p, r.pod_uid, "Warning", "BackOff", "Back-off restarting failed container " + r.container);
    break;
  }
  write_status(self, r.pod_uid, p);
  if (life.finished())
    spdlog::info("kubelet node={} pod={}/{} phase={}", st.cfg.node.name, p.ns, p.name, life.phase());
  if (life.stopping()) {
    finish_if_stopped(self, r.pod_uid, p);
    return;
  }
  run_step(self, r.pod_uid, p, step);
}

void on_process_timer(kubelet_actor* self, const std::string& uid, tracked_pod& p) {
  auto step = p.proc->life->on_timer(clock::now());
  if (!step.start.empty())
    write_status(self, uid, p);
  run_step(self, uid, p, step);
}

void stop_process_pod(kubelet_actor* self, const std::string& uid, tracked_pod& p, duration grace) {
  auto step = p.proc->life->begin_stop(clock::now());
  write_status(self, uid, p);
  if (!step.signal_running) {
    finish_if_stopped(self, uid, p);
    return;
  }
  post_event(self, p, uid, "Normal", "Killing", "Stopping the pod's containers (SIGTERM, then SIGKILL after " +
                                                    std::to_string(grace.count() / 1000) + "s)");
  runner_of(self).signal_pod(uid, SIGTERM);
  ++p.timer_generation;
  self->delayed_send(self, grace, grace_atom::value, uid, p.timer_generation);
}

void on_grace_over(kubelet_actor* self, const std::string& uid, std::uint64_t generation) {
  auto it = self->state.pods.find(uid);
  if (it == self->state.pods.end() || !it->second.proc || it->second.timer_generation != generation)
    return;
  runner_of(self).signal_pod(uid, SIGKILL);
}

void forget_process_pod(kubelet_actor* self, const std::string& uid, tracked_pod& p) {
  auto& runner = runner_of(self);
  runner.signal_pod(uid, SIGKILL);
  if (!self->state.cfg.work_dir.empty())
    runner.post([work = self->state.cfg.work_dir, spec = p.proc->spec] { remove_pod_files(work, spec); });
}

} // namespace kozmo::kubelet
