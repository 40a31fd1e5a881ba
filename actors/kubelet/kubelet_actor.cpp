#include "actors/kubelet/kubelet_actor_state.hpp"

#include "actors/watch/object_traits.hpp"
#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/watch_into.hpp"
#include "k8s/model/time.hpp"
#include "messages/watch_messages.hpp"

#include <spdlog/spdlog.h>

#include <mutex>
#include <utility>

namespace kozmo::kubelet {
namespace {

using atoms::advance_atom;
using atoms::heartbeat_atom;
using atoms::register_atom;

using secrets_atom = caf::atom_constant<caf::atom("secrets")>;

client::resource_ref pod_ref(const std::string& ns, const std::string& name) {
  return {"", "v1", "pods", ns, name, ""};
}

} // namespace

void post_event(kubelet_actor* self, const tracked_pod& p, const std::string& uid, const std::string& type,
                const std::string& reason, const std::string& message) {
  auto& st = self->state;
  controller::record(st.cfg.recorder,
                     controller::pod_note(p.ns, p.name, uid, {"kubelet", st.cfg.node.name}, type, reason, message));
}

namespace {

// The pod IP for the next pod: an address in the node's /24.
std::string allocate_pod_ip(kubelet_state& st) {
  std::string cidr = st.cfg.node.pod_cidr; // "10.244.3.0/24"
  std::string prefix = cidr.substr(0, cidr.rfind('.') + 1);
  std::uint32_t host = st.next_pod_ip;
  st.next_pod_ip = st.next_pod_ip >= 254 ? 2 : st.next_pod_ip + 1;
  return prefix + std::to_string(host);
}

} // namespace

// Writes the pod's current status, one write at a time per pod (see tracked_pod::writing);
// a change during a write is sent, as the then-current status, when the write answers. A write
// that fails is sent again a second later, as a kubelet's status manager does: the status in
// the API server is what schedulers and controllers act on.
void write_status(kubelet_actor* self, const std::string& uid, tracked_pod& p) {
  if (p.writing) {
    p.write_again = true;
    return;
  }
  p.writing = true;
  p.writing_final = p.ended();
  json::value body;
  body["status"] = p.status_json();
  self->state.cli->patch_status(
      pod_ref(p.ns, p.name), client::patch_type::merge, body, {},
      [ns = p.ns, name = p.name, uid, me = caf::actor_cast<caf::actor>(self)](expected<json::value> r) {
        if (r || r.err().code == 404) { // 404: the pod is gone, nothing left to say
          caf::anon_send(me, atoms::written_atom::value, uid, true);
          return;
        }
        spdlog::warn("kubelet pod={}/{} status update failed: {} (retrying in 1 s)", ns, name, r.err().message);
        // The actor times the retry: this runs on the client's thread, which may outlive the
        // actor system (a delayed send from here then finds no clock).
        caf::anon_send(me, atoms::written_atom::value, uid, false);
      });
}

namespace {

void on_written(kubelet_actor* self, const std::string& uid, bool ok) {
  auto it = self->state.pods.find(uid);
  if (it == self->state.pods.end())
    return;
  auto& p = it->second;
  if (!ok) { // still writing: what changes meanwhile goes with the retry
    self->delayed_send(self, std::chrono::seconds(1), atoms::retry_atom::value, uid);
    return;
  }
  p.writing = false;
  if (ok && p.writing_final)
    p.final_written = true;
  if (std::exchange(p.write_again, false))
    write_status(self, uid, p);
}

void retry_write(kubelet_actor* self, const std::string& uid) {
  auto it = self->state.pods.find(uid);
  if (it == self->state.pods.end())
    return;
  it->second.writing = false;
  write_status(self, uid, it->second);
}

} // namespace

void arm(kubelet_actor* self, const std::string& uid, tracked_pod& p, duration delay) {
  ++p.timer_generation;
  self->delayed_send(self, delay, advance_atom::value, uid, p.timer_generation);
}

void remove_pod_object(kubelet_actor* self, const std::string& uid, const std::string& ns, const std::string& name) {
  client::delete_options opts;
  opts.grace_period_seconds = 0;
  opts.precondition_uid = uid;
  self->state.cli->remove(pod_ref(ns, name), opts, [ns, name](expected<json::value> r) {
    if (!r && r.err().code != 404 && r.err().code != 409)
      spdlog::warn("kubelet pod={}/{} final delete failed: {}", ns, name, r.err().message);
  });
}

namespace {

// Narrates a stage change with the Event a real kubelet would post.
void announce(kubelet_actor* self, const std::string& uid, const tracked_pod& p, stage before) {
  stage now = p.life->current();
  if (now == before)
    return;
  std::string main = "main";
  switch (now) {
  case stage::running:
    post_event(self, p, uid, "Normal", "Started", "Started container (simulated on " + self->state.cfg.node.name + ")");
    break;
  case stage::image_pull_error:
  case stage::stuck: {
    auto st = p.life->status_json();
    const auto* cs = st.find("containerStatuses");
    std::string reason, message;
    if (cs && cs->is_array() && !cs->as_array().empty())
      if (const auto* w = cs->as_array().front().at_path({"state", "waiting"})) {
        reason = w->get_string("reason");
        message = w->get_string("message");
      }
    // A kubelet names an image it cannot parse InspectFailed (it never pulls it).
    post_event(self, p, uid, "Warning",
               reason == "ImagePullBackOff"   ? "BackOff"
               : reason == "InvalidImageName" ? "InspectFailed"
                                              : "Failed",
               message.empty() ? reason : message);
    break;
  }
  case stage::backoff:
    post_event(self, p, uid, "Warning", "BackOff", "Back-off restarting failed container");
    break;
  case stage::finished:
    spdlog::info("kubelet node={} pod={}/{} phase={}", self->state.cfg.node.name, p.ns, p.name, p.life->phase());
    break;
  default:
    break;
  }
}

// The Secrets a container's environment names (secretKeyRef, not optional): a real kubelet
// resolves them before it starts the containers and, when one is missing, reports
// CreateContainerConfigError with its reason. (Secret volumes are not modelled here.)
std::vector<k8s::key_selector> env_secrets(const k8s::pod& pod) {
  std::vector<k8s::key_selector> out;
  for (const auto* list : {&pod.spec.init_containers, &pod.spec.containers})
    for (const auto& c : *list)
      for (const auto& e : c.env)
        if (e.value_from && e.value_from->secret_key_ref && !e.value_from->secret_key_ref->optional.value_or(false))
          out.push_back(*e.value_from->secret_key_ref);
  return out;
}

// Looks the Secrets up, then starts the pod (secrets_atom): with the first missing one's message
// as a CreateContainerConfigError, as a kubelet says it.
void check_secrets(kubelet_actor* self, std::shared_ptr<const k8s::pod> pod, std::vector<k8s::key_selector> refs) {
  struct pending {
    std::size_t left;
    std::vector<std::string> missing; // by the order of refs
    std::mutex mu;
  };
  auto state = std::make_shared<pending>();
  state->left = refs.size();
  state->missing.resize(refs.size());
  auto me = caf::actor_cast<caf::actor>(self);
  const std::string ns = pod->metadata.namespace_;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    self->state.cli->get({"", "v1", "secrets", ns, refs[i].name, ""},
                         [state, i, ref = refs[i], ns, me, pod](expected<json::value> r) {
                           std::string why;
                           if (!r && r.err().code == 404)
                             why = "secret \"" + ref.name + "\" not found";
                           else if (!r)
                             why = "cannot read secret \"" + ref.name + "\": " + r.err().message;
                           else if (const auto* data = r->find("data"); !data || !data->find(ref.key))
                             why = "couldn't find key " + ref.key + " in Secret " + ns + "/" + ref.name;
                           std::lock_guard lock(state->mu);
                           state->missing[i] = std::move(why);
                           if (--state->left > 0)
                             return;
                           std::string first;
                           for (const auto& m : state->missing)
                             if (first.empty())
                               first = m;
                           caf::anon_send(me, secrets_atom::value, object_event<k8s::pod>{watch::event_type::added, pod, {}},
                                          std::move(first));
                         });
  }
}

void start_pod(kubelet_actor* self, const k8s::pod& pod, const std::string& missing_secret);

// Fails a refused pod in the API server; a failed write is sent again a second later while the
// pod exists (a pod left Pending on its node would wait there for good).
void write_refusal(kubelet_actor* self, const std::string& uid, const std::string& ns, const std::string& name,
                   const std::string& reason, const std::string& message) {
  if (!self->state.rejected.count(uid))
    return; // deleted meanwhile
  json::value status = json::object{{"phase", "Failed"}, {"reason", reason}, {"message", message}};
  self->state.cli->patch_status(
      {"", "v1", "pods", ns, name, ""}, client::patch_type::merge, json::object{{"status", std::move(status)}}, {},
      [me = caf::actor_cast<caf::actor>(self), uid, ns, name, reason, message](expected<json::value> r) {
        if (r || r.err().code == 404)
          return;
        spdlog::warn("kubelet pod={}/{} rejection not written: {} (retrying in 1 s)", ns, name, r.err().message);
        // The actor times the retry (this thread may outlive the actor system: see write_status).
        caf::anon_send(me, atoms::retry_atom::value, refused_atom::value, uid, ns, name, reason, message);
      });
}

// The kubelet's admission (admission.hpp): a pod that does not fit beside those this node already
// runs is Failed with the kubelet's reason and message, and a Warning Event. True when refused.
bool refuse_if_full(kubelet_actor* self, const k8s::pod& pod) {
  auto& st = self->state;
  resource_need used;
  for (const auto& [uid, p] : st.pods)
    if (p.holds_resources())
      used += p.need;
  auto refusal = admit(need_of(pod), used, capacity_of(st.cfg.node));
  if (!refusal)
    return false;
  const std::string& uid = pod.metadata.uid;
  st.rejected.insert(uid);
  std::string holders;
  for (const auto& [uid, p] : st.pods)
    if (p.holds_resources() && p.need.gpus > 0)
      holders += (holders.empty() ? "" : ", ") + p.name + " " + std::to_string(p.need.gpus) +
                 (p.stopping ? " (stopping)" : "");
  spdlog::warn("kubelet node={} pod={}/{} rejected: {} (GPUs held by: {})", st.cfg.node.name, pod.metadata.namespace_,
               pod.metadata.name, refusal->message, holders.empty() ? "none" : holders);
  controller::record(st.cfg.recorder, controller::pod_note(pod.metadata.namespace_, pod.metadata.name, uid,
                                                          {"kubelet", st.cfg.node.name}, "Warning", refusal->reason,
                                                          refusal->message));
  write_refusal(self, uid, pod.metadata.namespace_, pod.metadata.name, refusal->reason,
                "Pod was rejected: " + refusal->message);
  return true;
}

void on_pod(kubelet_actor* self, const object_event<k8s::pod>& ev);

// The pods watch has delivered every pod of this node: admit those that waited, oldest first.
void on_synced(kubelet_actor* self) {
  auto& st = self->state;
  st.synced = true;
  std::vector<object_event<k8s::pod>> waiting;
  for (auto& [uid, ev] : st.deferred)
    waiting.push_back(std::move(ev));
  st.deferred.clear();
  std::sort(waiting.begin(), waiting.end(), [](const auto& a, const auto& b) {
    return a.object->metadata.creation_timestamp < b.object->metadata.creation_timestamp;
  });
  for (const auto& ev : waiting)
    on_pod(self, ev);
}

void on_pod(kubelet_actor* self, const object_event<k8s::pod>& ev) {
  auto& st = self->state;
  const k8s::pod& pod = *ev.object;
  const std::string& uid = pod.metadata.uid;
  auto it = st.pods.find(uid);
  if (ev.type == watch::event_type::deleted) {
    st.deferred.erase(uid);
    st.rejected.erase(uid);
    if (it != st.pods.end()) {
      if (it->second.proc)
        forget_process_pod(self, uid, it->second);
      st.pods.erase(it);
    }
    return;
  }
  if (pod.metadata.deletion_timestamp) {
    if (it == st.pods.end() || !it->second.started()) { // not started (its Secrets still being looked up)
      if (it != st.pods.end())
        st.pods.erase(it);
      remove_pod_object(self, uid, pod.metadata.namespace_, pod.metadata.name);
      return;
    }
    auto& p = it->second;
    if (p.stopping)
      return;
    p.stopping = true;
    auto grace = duration(1000 * pod.metadata.deletion_grace_period_seconds.value_or(30));
    if (p.proc) {
      stop_process_pod(self, uid, p, grace);
      return;
    }
    post_event(self, p, uid, "Normal", "Killing", "Stopping container main");
    arm(self, uid, p, p.life->begin_stop(clock::now(), grace));
    return;
  }
  if (it != st.pods.end()) {
    // Already running it; spec changes do not restart simulated containers. Its final status
    // seen here is in the API server: a scheduler that saw it too may place a pod in its GPUs,
    // and that binding comes later in this stream, even when the write's own answer is late.
    auto& p = it->second;
    if (p.ended() && (pod.status.phase == "Succeeded" || pod.status.phase == "Failed"))
      p.final_written = true;
    return;
  }
  if (pod.status.phase == "Succeeded" || pod.status.phase == "Failed" || st.rejected.count(uid))
    return; // finished before this kubelet (re)started, or refused by admission
  // A pod that already runs was admitted before a restart; a new one waits until every pod of
  // the node is known, then must fit beside them.
  if (pod.status.phase != "Running") {
    if (!st.synced) {
      st.deferred.insert_or_assign(uid, ev);
      return;
    }
    if (refuse_if_full(self, pod))
      return;
  }
  auto processes = runs_as_processes(pod, st.cfg.runtime, st.cfg.allow_process);
  if (processes && *processes) {
    admit_process_pod(self, pod);
    return;
  }
  if (auto refs = env_secrets(pod); !refs.empty() && pod.status.phase != "Running") {
    tracked_pod waiting;
    waiting.ns = pod.metadata.namespace_;
    waiting.name = pod.metadata.name;
    waiting.need = need_of(pod);
    st.pods.emplace(uid, std::move(waiting));
    check_secrets(self, ev.object, std::move(refs));
    return;
  }
  start_pod(self, pod, processes ? std::string() : processes.err().message);
}

void start_pod(kubelet_actor* self, const k8s::pod& pod, const std::string& missing_secret) {
  auto& st = self->state;
  const std::string& uid = pod.metadata.uid;
  st.pods.erase(uid); // the placeholder of a Secret look-up
  tracked_pod p;
  p.ns = pod.metadata.namespace_;
  p.name = pod.metadata.name;
  p.need = need_of(pod);
  sim_pod sp;
  sp.uid = uid;
  for (const auto& c : pod.spec.init_containers)
    sp.init_containers.push_back({c.name, c.image});
  for (const auto& c : pod.spec.containers)
    sp.containers.push_back({c.name, c.image});
  sp.restart_policy = pod.spec.restart_policy.empty() ? "Always" : pod.spec.restart_policy;
  sp.host_ip = st.cfg.node.internal_ip;
  sp.pod_ip = allocate_pod_ip(st);
  auto script = parse_pod_script(pod.metadata.annotations);
  if (script && !missing_secret.empty()) {
    script->failure = scripted_failure::create_container_config_error;
    script->failure_message = missing_secret;
  }
  if (!script) {
    // A broken script must not take the node down: the pod fails to start and says why.
    pod_script stuck;
    stuck.failure = scripted_failure::create_container_config_error;
    stuck.failure_message = script.err().message; // the waiting container's message names the annotation
    p.life = std::make_unique<pod_lifecycle>(sp, stuck, clock::now());
    p.life->advance(clock::now());
    auto [pos, _] = st.pods.emplace(uid, std::move(p));
    write_status(self, uid, pos->second);
    post_event(self, pos->second, uid, "Warning", "Failed", script.err().message);
    return;
  }
  p.life = std::make_unique<pod_lifecycle>(sp, *script, clock::now());
  spdlog::info("kubelet node={} pod={}/{} accepted", st.cfg.node.name, p.ns, p.name);
  auto [pos, _] = st.pods.emplace(uid, std::move(p));
  write_status(self, uid, pos->second);
  if (!sp.containers.empty() && pos->second.life->pulls_images())
    post_event(self, pos->second, uid, "Normal", "Pulling", "Pulling image \"" + sp.containers[0].image + "\"");
  // A pod that was already Running when this kubelet restarted runs on from its container's
  // startedAt, with its restart count: it ends when it would have without the restart.
  if (pod.status.phase == "Running") {
    clock::time_point started = clock::now();
    int restarts = 0;
    for (const auto& cs : pod.status.container_statuses) {
      if (cs.state.running && cs.state.running->started_at)
        started = std::min(started, *cs.state.running->started_at);
      restarts = std::max(restarts, static_cast<int>(cs.restart_count));
    }
    auto next = pos->second.life->resume_running(started, restarts, clock::now());
    write_status(self, uid, pos->second);
    if (next)
      arm(self, uid, pos->second, *next);
    return;
  }
  arm(self, uid, pos->second, pos->second.life->first_delay());
}

void on_advance(kubelet_actor* self, const std::string& uid, std::uint64_t generation) {
  auto& st = self->state;
  auto it = st.pods.find(uid);
  if (it == st.pods.end() || it->second.timer_generation != generation)
    return;
  auto& p = it->second;
  if (p.proc) {
    on_process_timer(self, uid, p);
    return;
  }
  stage before = p.life->current();
  auto next = p.life->advance(clock::now());
  if (p.life->current() == stage::gone) {
    write_status(self, uid, p);
    remove_pod_object(self, uid, p.ns, p.name);
    return;
  }
  write_status(self, uid, p);
  announce(self, uid, p, before);
  if (next)
    arm(self, uid, p, *next);
}

void register_node(kubelet_actor* self) {
  auto& st = self->state;
  auto now = k8s::format_time(clock::now());
  st.registered_since = now;
  auto node = node_object(st.cfg.node, now);
  caf::actor me = caf::actor_cast<caf::actor>(self);
  client::resource_ref nodes{"", "v1", "nodes", "", "", ""};
  st.cli->create(nodes, node, [me, name = st.cfg.node.name, node, cli = st.cli](expected<json::value> r) {
    if (r) {
      spdlog::info("kubelet node={} registered", name);
      return;
    }
    if (r.err().code != 409) {
      spdlog::warn("kubelet node={} registration failed: {} (retrying)", name, r.err().message);
      caf::anon_send(me, register_atom::value);
      return;
    }
    // Already registered (a restart): refresh capacity and conditions, keep spec (cordons).
    json::value body;
    body["status"] = *node.find("status");
    cli->patch_status({"", "v1", "nodes", "", name, ""}, client::patch_type::merge, body, {},
                      [name](expected<json::value> r2) {
                        if (!r2)
                          spdlog::warn("kubelet node={} status refresh failed: {}", name, r2.err().message);
                      });
  });
}

// The node's Lease in kube-node-lease, renewed with every heartbeat as a kubelet does (the
// node lifecycle controller reads it to decide whether a node is alive).
void renew_lease(kubelet_actor* self, bool create) {
  auto& st = self->state;
  client::resource_ref lease{"coordination.k8s.io", "v1", "leases", "kube-node-lease", st.cfg.node.name, ""};
  auto now = k8s::format_micro_time(clock::now());
  if (!create) {
    json::value patch;
    patch["spec"]["renewTime"] = now;
    st.cli->patch(lease, client::patch_type::merge, patch, {},
                  [me = caf::actor_cast<caf::actor>(self)](expected<json::value> r) {
                    if (!r && r.err().code == 404)
                      caf::anon_send(me, atoms::renew_atom::value); // gone: create it again
                  });
    return;
  }
  json::value obj;
  obj["apiVersion"] = "coordination.k8s.io/v1";
  obj["kind"] = "Lease";
  obj["metadata"]["name"] = st.cfg.node.name;
  obj["metadata"]["namespace"] = "kube-node-lease";
  obj["spec"]["holderIdentity"] = st.cfg.node.name;
  obj["spec"]["leaseDurationSeconds"] = static_cast<int>(std::max<long long>(1, st.cfg.heartbeat.count() * 4 / 1000));
  obj["spec"]["renewTime"] = now;
  lease.name.clear();
  st.cli->create(lease, obj, [name = st.cfg.node.name](expected<json::value> r) {
    if (!r && r.err().code != 409)
      spdlog::debug("kubelet node={} lease not created: {}", name, r.err().message);
  });
}

void heartbeat(kubelet_actor* self) {
  auto& st = self->state;
  renew_lease(self, false);
  json::value body;
  body["status"]["conditions"] = node_conditions(k8s::format_time(clock::now()), st.registered_since);
  st.cli->patch_status({"", "v1", "nodes", "", st.cfg.node.name, ""}, client::patch_type::strategic, body, {},
                       [name = st.cfg.node.name](expected<json::value> r) {
                         if (!r)
                           spdlog::debug("kubelet node={} heartbeat failed: {}", name, r.err().message);
                       });
  self->delayed_send(self, st.cfg.heartbeat, heartbeat_atom::value);
}

caf::behavior kubelet(kubelet_actor* self, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                      kubelet_config cfg) {
  auto& st = self->state;
  st.cli = std::move(cli);
  st.pods_watch = std::move(pods_watch);
  st.cfg = std::move(cfg);
  if (st.cfg.runtime == "process")
    st.cfg.node.labels[keys::runtime] = "process";
  // Container processes die with the kubelet: the state's end destroys the runner, which kills
  // and reaps them (stateful_actor::on_exit).
  register_node(self);
  renew_lease(self, true);
  st.listed.on_open = [self] { on_synced(self); };
  controller::subscribe_to(self, st.pods_watch, &st.listed, watch::index_kind::node_name, st.cfg.node.name);
  self->delayed_send(self, st.cfg.heartbeat, heartbeat_atom::value);
  return {
      [self](const object_event<k8s::pod>& ev) { on_pod(self, ev); },
      [self](advance_atom, const std::string& uid, std::uint64_t generation) { on_advance(self, uid, generation); },
      [self](heartbeat_atom) { heartbeat(self); },
      [self](register_atom) { self->delayed_send(self, std::chrono::seconds(1), atoms::retry_atom::value); },
      [self](atoms::retry_atom) { register_node(self); },
      [self](atoms::renew_atom) { renew_lease(self, true); },
      [self](atoms::written_atom, const std::string& uid, bool ok) { on_written(self, uid, ok); },
      [self](atoms::retry_atom, const std::string& uid) { retry_write(self, uid); },
      [self](refused_atom, const std::string& uid, const std::string& ns, const std::string& name,
             const std::string& reason,
             const std::string& message) { write_refusal(self, uid, ns, name, reason, message); },
      [self](atoms::retry_atom, refused_atom, std::string& uid, std::string& ns, std::string& name, std::string& reason,
             std::string& message) {
        self->delayed_send(self, std::chrono::seconds(1), refused_atom::value, std::move(uid), std::move(ns),
                           std::move(name), std::move(reason), std::move(message));
      },
      [self](proc_ready_atom, const std::string& uid) { on_process_ready(self, uid); },
      [self](remount_atom, const std::string& uid, std::uint64_t generation) { on_remount(self, uid, generation); },
      [self](const process_report& r) { on_process_report(self, r); },
      [self](grace_atom, const std::string& uid, std::uint64_t generation) { on_grace_over(self, uid, generation); },
      [self](secrets_atom, const object_event<k8s::pod>& ev, const std::string& missing) {
        auto it = self->state.pods.find(ev.object->metadata.uid);
        if (it == self->state.pods.end() || it->second.life)
          return; // deleted while its Secrets were looked up
        if (!missing.empty())
          spdlog::info("kubelet node={} pod={}/{}: {}", self->state.cfg.node.name, it->second.ns, it->second.name,
                       missing);
        start_pod(self, *ev.object, missing);
      },
  };
}

} // namespace

caf::actor spawn_kubelet(caf::actor_system& sys, std::shared_ptr<client::client> cli, caf::actor pods_watch,
                         kubelet_config cfg) {
  return sys.spawn(kubelet, std::move(cli), std::move(pods_watch), std::move(cfg));
}

} // namespace kozmo::kubelet
