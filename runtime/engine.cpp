// The engine: the parts a host chose (watches, controllers, kubelets), start and stop. The API
// connection, the HTTP front, the scheduler and the CRDs are in files of their own
// (runtime/engine_impl.hpp lists them).
#include "runtime/engine_http.hpp"
#include "runtime/engine_impl.hpp"
#include "runtime/engine_internal.hpp"

#include "actors/binder/binder_actor.hpp"
#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/leader_elector_actor.hpp"
#include "actors/kubelet/kubelet_actor.hpp"
#include "actors/tasks/platform_config.hpp"
#include "actors/quota/quota_actor.hpp"
#include "actors/tasks/task_controller.hpp"
#include "actors/trainer/trainjob_actor.hpp"
#include "actors/training/training_supervisor_actor.hpp"
#include "actors/volumes/volume_binder_actor.hpp"
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/client/client.hpp"
#include "k8s/json/yaml.hpp"
#include "k8s/model/selector.hpp"
#include "messages/atoms.hpp"
#include "runtime/actor_setup.hpp"
#include "runtime/demo.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <charconv>
#include <filesystem>
#include <pwd.h>
#include <unistd.h>

namespace kozmo {
namespace {

// Who the process runtime's containers run as: nobody for a root Kozmo unless `user` says
// otherwise ("name" or "UID:GID"); as another user, that user (nullopt: no change).
expected<std::optional<std::pair<unsigned, unsigned>>> process_identity(const std::string& user) {
  if (::geteuid() != 0)
    return std::optional<std::pair<unsigned, unsigned>>{};
  std::string name = user.empty() ? "nobody" : user;
  if (auto colon = name.find(':'); colon != std::string::npos) {
    unsigned uid = 0, gid = 0;
    auto a = std::from_chars(name.data(), name.data() + colon, uid);
    auto b = std::from_chars(name.data() + colon + 1, name.data() + name.size(), gid);
    if (a.ec != std::errc() || a.ptr != name.data() + colon || b.ec != std::errc() || b.ptr != name.data() + name.size())
      return error::bad_request("--process-user: \"" + name + "\" is neither a user name nor UID:GID");
    return std::optional<std::pair<unsigned, unsigned>>{std::pair{uid, gid}};
  }
  const passwd* pw = ::getpwnam(name.c_str());
  if (pw == nullptr)
    return error::bad_request("--process-user: no user \"" + name + "\" on this host");
  return std::optional<std::pair<unsigned, unsigned>>{std::pair{static_cast<unsigned>(pw->pw_uid),
                                                                static_cast<unsigned>(pw->pw_gid)}};
}

} // namespace

// Won the lease: start the controllers (once; not after stop()).
void engine::impl::on_leading() {
  std::lock_guard lock(lead_mu);
  if (!started || leading)
    return;
  if (auto st = spawn_actors(); !st) {
    start_failure = st.err().message;
    spdlog::error("kozmo: leading, but the controllers could not start: {}", start_failure);
    return;
  }
  leading = true;
}

// The shared pods and nodes watches (read-only). With leader election they start at once, so
// that a standby's caches are warm when it takes over: no LIST of every pod then.
void engine::impl::start_watches() {
  if (!pods_watch) {
    watch::watch_config pods;
    pods.resource = {"", "v1", "pods", "", "", ""};
    pods.field_selector = opts.parts.pods_field_selector;
    pods.counted_pods = opts.parts.pods_scheduler_fields_only;
    pods_watch = watch::spawn_watch<k8s::pod>(*sys, cli, pods);
    actors.push_back(pods_watch);
  }
  if (run_scheduler() && opts.extender.address.empty() && opts.parts.count_other_pods &&
      !opts.parts.pods_field_selector.empty() && !other_pods_watch) {
    watch::watch_config others;
    others.resource = {"", "v1", "pods", "", "", ""};
    others.field_selector = "spec.schedulerName!=" + k8s::escape_field_value(opts.parts.scheduler_name) +
                            ",spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed";
    others.counted_pods = true; // the scheduler is its only subscriber, and counts them
    other_pods_watch = watch::spawn_watch<k8s::pod>(*sys, cli, others);
    actors.push_back(other_pods_watch);
  }
  if (need_nodes_watch() && !nodes_watch) {
    watch::watch_config nodes;
    nodes.resource = {"", "v1", "nodes", "", "", ""};
    nodes_watch = watch::spawn_watch<k8s::node>(*sys, cli, nodes);
    actors.push_back(nodes_watch);
  }
}

status engine::impl::spawn_actors() {
  if (opts.parts.nodes.empty() && !need_nodes_watch() && !opts.parts.training && !opts.parts.tasks && !opts.parts.volume_binder &&
      !opts.parts.quota)
    return ok;
  if ((opts.parts.training || opts.parts.tasks) && server) {
    if (auto st = install_crds(*server, opts); !st)
      return st;
    if (opts.parts.training)
      if (auto st = install_training_runtimes(*server); !st)
        return st;
  }
  if (!recorder) { // with leader election the elector's recorder is already there
    recorder = controller::spawn_event_recorder(*sys, cli);
    actors.push_back(recorder);
  }
  start_watches();
  if (opts.parts.binder)
    actors.push_back(binder::spawn_binder(*sys, cli, pods_watch, nodes_watch, recorder));
  if (opts.parts.volume_binder) {
    if (server)
      if (auto st = install_default_storage_class(*server); !st)
        return st;
    actors.push_back(volumes::spawn_volume_binder(*sys, cli, recorder, work_dir.empty() ? std::string() : work_dir + "/volumes"));
  }
  if (opts.parts.quota)
    actors.push_back(quota::spawn_quota_controller(*sys, cli, pods_watch));
  if (run_scheduler()) {
    auto st = opts.extender.address.empty() ? spawn_scheduler(pods_watch, nodes_watch) : spawn_extender();
    if (!st)
      return st;
  }
  for (const auto& node : cluster_shape_of(opts.parts.nodes).nodes) {
    kubelet::kubelet_config kc;
    kc.node = node;
    kc.recorder = recorder;
    kc.runtime = opts.parts.kubelet_runtime;
    kc.allow_process = opts.parts.allow_process_runtime;
    kc.run_as = process_identity;
    kc.work_dir = work_dir;
    actors.push_back(kubelet::spawn_kubelet(*sys, cli, pods_watch, kc));
  }
  if (opts.parts.training) {
    training::supervisor_config tc;
    tc.job.cli = cli;
    tc.job.opts.scheduler_name = opts.parts.scheduler_name;
    if (!opts.parts.mpi_kubectl_delivery_image.empty())
      tc.job.opts.mpi_kubectl_delivery_image = opts.parts.mpi_kubectl_delivery_image;
    tc.job.opts.default_max_replicas = opts.parts.training_max_replicas;
    tc.job.opts.max_replicas = opts.parts.training_max_replicas_by_kind;
    tc.recorder = recorder;
    actors.push_back(training::spawn_training_supervisor(*sys, pods_watch, std::move(tc)));
    trainer::controller_config trc; // Kubeflow Trainer v2 beside v1, on the same kit and scheduler
    trc.cli = cli;
    trc.opts.scheduler_name = opts.parts.scheduler_name;
    trc.opts.priority_classes = training::default_priority_classes();
    // Pods on simulated (or host-process) nodes run no images: initializers fetch with the copilot.
    trc.opts.native_initializers = !cluster_shape_of(opts.parts.nodes).nodes.empty();
    trc.recorder = recorder;
    actors.push_back(trainer::spawn_trainjob_controller(*sys, pods_watch, std::move(trc)));
  }
  if (opts.parts.tasks) {
    tasks::task_controller_config tc;
    tc.cli = cli;
    tc.platform = task_platform;
    tc.recorder = recorder;
    tc.training_jobs = opts.parts.training; // the training controller carries the jobs out
    tc.template_namespace = opts.parts.task_template_namespace;
    for (auto& a : tasks::spawn_task_controller(*sys, pods_watch, std::move(tc)))
      actors.push_back(std::move(a));
  }
  if (opts.parts.demo)
    actors.push_back(runtime::spawn_demo(*sys, cli, pods_watch, nodes_watch));
  return ok;
}

engine::engine(engine_options opts) : impl_(std::make_unique<impl>()) { impl_->opts = std::move(opts); }

engine::~engine() { stop(); }

status engine::start() {
  auto& d = *impl_;
  if (d.started)
    return ok;
  if (!d.opts.parts.pods_field_selector.empty()) {
    if (auto sel = k8s::field_selector::parse(d.opts.parts.pods_field_selector); !sel)
      return error::bad_request("pods_field_selector: " + sel.err().message);
  }
  if (d.opts.parts.tasks) { // before anything connects: a bad key is a configuration error
    auto section = d.opts.parts.task_platform.empty() ? expected<json::value>(json::value())
                                                     : json::parse_yaml(d.opts.parts.task_platform);
    if (!section)
      return error::bad_request("tasks: " + section.err().message);
    auto platform = tasks::parse_platform_config(*section);
    if (!platform)
      return platform.err();
    d.task_platform = std::move(*platform);
  }
  if (d.opts.leader_election.enabled && !d.opts.leader_election.lost)
    return error::bad_request("leader_election.lost: say what losing the lease does (stop this process's writes); "
                              "Kozmo never exits the process itself");
  d.cfg = std::make_unique<caf::actor_system_config>();
  if (auto workers = runtime::tune_scheduler(*d.cfg, d.opts.performance.workers); !workers)
    return workers.err();
  if (!d.opts.parts.nodes.empty()) {
    auto who = process_identity(d.opts.parts.process_user);
    if (!who)
      return who.err();
    d.process_identity = *who;
  }
  if (auto st = d.connect(); !st)
    return st;
  if (d.opts.leader_election.enabled) {
    if (auto why = controller::check_timing(d.election_timing()))
      return error::bad_request(*why);
  }
  if (auto st = d.serve_http(); !st) {
    d.stop_http();
    return st;
  }
  d.sys = std::make_unique<caf::actor_system>(*d.cfg);
  d.started = true;
  if (!d.opts.leader_election.enabled) {
    if (auto st = d.spawn_actors(); !st) { // no elector: nothing runs concurrently yet
      stop();
      return st;
    }
    std::lock_guard lock(d.lead_mu);
    d.leading = true;
    return ok;
  }
  const auto& le = d.opts.leader_election;
  controller::elector_config ec;
  ec.lease_namespace = le.lease_namespace;
  ec.lease_name = le.lease_name;
  ec.identity = le.identity;
  ec.timing = d.election_timing();
  std::lock_guard lock(d.lead_mu);
  d.recorder = controller::spawn_event_recorder(*d.sys, d.cli); // "... became leader" on the Lease
  d.actors.push_back(d.recorder);
  d.start_watches(); // a warm standby
  ec.recorder = d.recorder;
  auto* impl = impl_.get();
  ec.started_leading = [impl] { impl->on_leading(); };
  ec.stopped_leading = le.lost;
  d.elector = controller::spawn_leader_elector(*d.sys, d.cli, std::move(ec));
  d.actors.push_back(d.elector);
  return ok;
}

void engine::stop() {
  auto& d = *impl_;
  d.stop_http();
  std::unique_lock lock(d.lead_mu);
  if (!d.started)
    return;
  d.started = false;
  d.leading = false;
  if (d.elector) {
    // Give the lease up, so that a standby takes over at once.
    caf::scoped_actor self{*d.sys};
    self->request(d.elector, std::chrono::seconds(3), atoms::release_atom::value)
        .receive([](caf::unit_t) {}, [](caf::error&) {});
    d.elector = nullptr;
  }
  if (d.http) { // inspect and the extender verbs answer 503 from now on
    d.http->set_scheduler(nullptr);
    d.http->set_extender(nullptr, error{"Kozmo is stopping", 503, "ServiceUnavailable"});
  }
  d.scheduler = nullptr;
  d.recorder = nullptr;
  d.pods_watch = nullptr;
  d.nodes_watch = nullptr;
  for (auto& a : d.actors)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  d.actors.clear();
  lock.unlock();
  d.sys.reset(); // waits for every actor to finish
  d.cfg.reset();
  d.cli.reset(); // after the actors: they hold the client
  if (d.server)
    d.server->stop();
  // The stopped server still held its data dir (and its lock): a new engine on the same
  // --data-dir in the same process could not start.
  d.server.reset();
  if (d.remove_work_dir) { // after the kubelets: their processes are gone
    std::error_code ec;
    std::filesystem::remove_all(d.work_dir, ec);
    d.remove_work_dir = false;
  }
}

std::string engine::kubeconfig() const {
  if (!impl_->server || !impl_->credentials)
    return {};
  return runtime::local_kubeconfig(impl_->server->url(), *impl_->credentials);
}

std::string engine::bearer_token() const { return impl_->credentials ? impl_->credentials->token : std::string(); }

std::string engine::url() const {
  if (impl_->server)
    return impl_->server->url();
  return impl_->cli ? impl_->cli->cfg().server : std::string();
}

std::uint16_t engine::metrics_port() const {
  return impl_->metrics_server ? impl_->metrics_server->port() : 0;
}

std::uint16_t engine::probe_port() const { return impl_->probe_server ? impl_->probe_server->port() : 0; }

std::uint16_t engine::extender_port() const {
  return impl_->extender_server ? impl_->extender_server->port() : 0;
}

std::future<inspect_answer> engine::inspect(const std::string& path) const {
  auto answer = std::make_shared<std::promise<inspect_answer>>();
  auto future = answer->get_future();
  if (!impl_->http) { // before start()
    answer->set_value({503, json::dump(json::object{{"code", 503}, {"message", "Kozmo is not running"}})});
    return future;
  }
  impl_->http->inspect(path, [answer](scheduler::inspect_answer a) {
    answer->set_value({static_cast<int>(a.status), std::move(a.body)});
  });
  return future;
}

caf::actor_system& engine_internal::system(engine& e) { return *e.impl_->sys; }

caf::actor engine_internal::scheduler(const engine& e) { return e.impl_->scheduler; }

caf::actor engine_internal::pods_watch(const engine& e) { return e.impl_->pods_watch; }

std::shared_ptr<client::client> engine_internal::api(const engine& e) { return e.impl_->cli; }

apiserver::server* engine_internal::embedded_server(engine& e) { return e.impl_->server.get(); }

} // namespace kozmo
