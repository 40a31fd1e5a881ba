#include "runtime/engine.hpp"
#include "runtime/engine_internal.hpp"

#include "actors/binder/binder_actor.hpp"
#include "actors/quota/quota_actor.hpp"
#include "actors/volumes/volume_binder_actor.hpp"
#include "actors/cellgroup/cellgroup_actor.hpp"
#include "actors/controller/event_recorder_actor.hpp"
#include "actors/controller/leader_elector_actor.hpp"
#include "actors/extender/delegated_auth.hpp"
#include "k8s/apiserver/fault_route.hpp"
#include "runtime/local_pki.hpp"
#include "runtime/serving_identity.hpp"
#include "actors/extender/extender_actor.hpp"
#include "actors/extender/extender_server.hpp"
#include "k8s/serve/pki.hpp"
#include "actors/extender/http_api.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/scheduler_actor.hpp"
#include "runtime/crds.hpp"
#include "actors/tasks/task_controller.hpp"
#include "actors/training/job_model.hpp"
#include "actors/training/training_supervisor_actor.hpp"
#include "actors/kubelet/kubelet_actor.hpp"
#include "actors/watch/object_traits.hpp"
#include "actors/watch/watch_actor.hpp"
#include "k8s/apiserver/pod_log_layout.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "k8s/json/yaml.hpp"
#include "k8s/model/selector.hpp"
#include "messages/atoms.hpp"
#include "messages/scheduler_messages.hpp"
#include "runtime/actor_setup.hpp"
#include "runtime/config_file.hpp"
#include "runtime/demo.hpp"
#include "runtime/hived_shape.hpp"

#include <caf/all.hpp>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <pwd.h>

#include <charconv>
#include <unistd.h>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <spdlog/spdlog.h>

namespace kozmo {

namespace {

// Kozmo's HTTP API (actors/extender/http_api.hpp) on the embedded server's port: /metrics
// always, inspect while the scheduler runs. The same handler the extender's own server uses, so
// that both front doors answer alike. stop() takes the write lock before the actor system goes.
class local_backend final : public extender::extender_backend {
public:
  void filter(extender::filter_args a, extender::reply_fn<extender::filter_result> done) override {
    if (auto ext = extender())
      return ext->filter(std::move(a), std::move(done));
    refuse(done);
  }
  void preempt(extender::preempt_args a, extender::reply_fn<extender::preempt_result> done) override {
    if (auto ext = extender())
      return ext->preempt(std::move(a), std::move(done));
    refuse(done);
  }
  void bind(extender::bind_args a, extender::reply_fn<extender::bind_result> done) override {
    if (auto ext = extender())
      return ext->bind(std::move(a), std::move(done));
    refuse(done);
  }
  void inspect(std::string path, extender::inspect_fn done) override {
    if (auto ext = extender())
      return ext->inspect(std::move(path), std::move(done));
    std::shared_lock lock(mu_);
    if (!scheduler_)
      return done({503, json::dump(json::object{{"code", 503}, {"message", "the scheduler is not running"}})});
    caf::anon_send(scheduler_, inspect_callback{std::move(path), [done](inspect_reply r) {
                                                  done({r.status, std::move(r.body)});
                                                }});
  }
  void set_scheduler(caf::actor a) {
    std::unique_lock lock(mu_);
    scheduler_ = std::move(a);
  }
  // The extender verbs go to `ext` (the extender actor's backend) from now on. Null: they are
  // refused with `absent`.
  void set_extender(std::shared_ptr<extender::extender_backend> ext, error absent) {
    std::unique_lock lock(mu_);
    extender_ = std::move(ext);
    absent_ = std::move(absent);
  }
  void set_readiness(std::function<std::string()> f) {
    std::unique_lock lock(mu_);
    readiness_ = std::move(f);
  }
  std::string not_ready() override {
    std::shared_lock lock(mu_);
    return readiness_ ? readiness_() : std::string();
  }

  // A route of the embedded server: the answer goes to `reply` when the scheduler (or the
  // extender) gives it, on its thread; the server's io thread has moved on meanwhile.
  void answer(const std::string& method, const std::string& path, const std::string& body,
              apiserver::server::route_reply_fn reply) {
    extender::serve_request(*this, method, path, body, [reply = std::move(reply)](extender::http_answer a) {
      reply({static_cast<int>(a.status), std::move(a.body), a.content_type});
    });
  }

private:
  std::shared_ptr<extender::extender_backend> extender() {
    std::shared_lock lock(mu_);
    return extender_;
  }
  template <class T>
  void refuse(const extender::reply_fn<T>& done) {
    error why;
    {
      std::shared_lock lock(mu_);
      why = absent_;
    }
    done(std::move(why));
  }
  std::shared_mutex mu_;
  caf::actor scheduler_;
  std::shared_ptr<extender::extender_backend> extender_;
  error absent_ = error::not_found("Kozmo schedules pods directly here: there is no extender");
  std::function<std::string()> readiness_;
};

// The configuration as given, or the file it names.
expected<std::string> scheduler_config_text(const std::string& text_or_path) {
  if (text_or_path.find('\n') != std::string::npos)
    return text_or_path;
  auto text = runtime::read_file(text_or_path);
  if (!text)
    return error::bad_request("scheduler configuration: " + text.err().message);
  return text;
}

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

// The metrics address's certificate: the files given, else self-signed.
expected<extender::tls_options> metrics_identity(const engine_options& o) {
  return runtime::serving_identity_files(o.tls_cert_file, o.tls_key_file, "metrics");
}

// Every `replicas` property of a schema gets `maximum` (a training CRD's replica specs).
void cap_replicas(json::value& schema, int maximum) {
  if (schema.is_array()) {
    for (auto& item : schema.as_array())
      cap_replicas(item, maximum);
    return;
  }
  if (!schema.is_object())
    return;
  if (json::value* props = schema.find("properties"); props && props->is_object())
    if (json::value* replicas = props->find("replicas"); replicas && replicas->get_string("type") == "integer")
      (*replicas)["maximum"] = maximum;
  for (auto& [key, child] : schema.as_object())
    cap_replicas(child, maximum);
}

// Kozmo's CRDs embedded in the binary, applied to the embedded server (create or update), one
// YAML document at a time; the training kinds' replicas capped as the engine's options say.
status install_crds(apiserver::server& srv, const engine_options& opts) {
  for (const auto& file : embedded_crds()) {
    auto docs = json::parse_yaml_documents(file.text);
    if (!docs)
      return error::bad_request("CRDs: " + std::string(file.name) + ": " + docs.err().message);
    for (auto& obj : *docs) {
      if (!obj.is_object())
        continue;
      std::string kind;
      if (const json::value* names = obj.at_path({"spec", "names"}); names != nullptr)
        kind = names->get_string("kind");
      if (training::traits_for(kind) != nullptr) {
        auto it = opts.training_max_replicas_by_kind.find(kind);
        if (json::value* versions = obj.at_path({"spec", "versions"}))
          cap_replicas(*versions, it == opts.training_max_replicas_by_kind.end() ? opts.training_max_replicas
                                                                                 : it->second);
      }
      if (auto applied = srv.apply_object(obj); !applied)
        return error::bad_request("CRDs: " + std::string(file.name) + ": " + applied.err().message);
    }
  }
  return ok;
}

} // namespace

struct engine::impl {
  engine_options opts;
  std::unique_ptr<apiserver::server> server;
  std::optional<runtime::local_credentials> credentials; // the embedded secure server's
  std::optional<std::pair<unsigned, unsigned>> process_identity; // the process runtime's uid, gid
  std::shared_ptr<client::client> cli;
  std::unique_ptr<caf::actor_system_config> cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::vector<caf::actor> actors;
  caf::actor scheduler;
  caf::actor pods_watch;
  caf::actor nodes_watch;
  caf::actor other_pods_watch; // the scheduler's view of other schedulers' pods (count_other_pods)
  caf::actor recorder; // every actor's Events go through it
  caf::actor elector;  // with leader election
  std::shared_ptr<local_backend> http;
  std::unique_ptr<extender::extender_server> metrics_server, probe_server, extender_server;
  bool started = false;
  // Leader election: the controllers start when the elector says so, on its thread.
  mutable std::mutex lead_mu;
  bool leading = false;
  std::string start_failure; // why the controllers could not start after winning the lease
  std::shared_ptr<std::atomic<bool>> scheduler_ready; // set while the direct-mode scheduler runs

  // The process runtime's work directory (engine_options::work_dir).
  std::string work_dir;
  bool remove_work_dir = false;

  status make_work_dir() {
    if (!opts.embedded_apiserver || opts.nodes.nodes.empty())
      return ok;
    work_dir = !opts.work_dir.empty() ? opts.work_dir : opts.data_dir;
    if (work_dir.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/kozmo-local.XXXXXX";
      if (!::mkdtemp(pattern.data()))
        return error{"cannot create a work directory " + pattern + ": " + std::strerror(errno)};
      work_dir = pattern;
      remove_work_dir = true;
    }
    std::error_code ec;
    std::filesystem::create_directories(pod_logs::pod_logs_root(work_dir), ec);
    if (ec)
      return error{"cannot create " + pod_logs::pod_logs_root(work_dir) + ": " + ec.message()};
    return ok;
  }

  status connect() {
    client::config ccfg;
    http = std::make_shared<local_backend>();
    if (opts.embedded_apiserver) {
      if (auto st = make_work_dir(); !st)
        return st;
      apiserver::server::options sopts;
      if (opts.embedded_secure) {
        auto made = runtime::local_credentials_in(opts.data_dir);
        if (!made)
          return error{"cannot make the API server's certificates: " + made.err().message};
        credentials = std::move(*made);
        sopts.secure = apiserver::server::security{credentials->server.cert_pem, credentials->server.key_pem,
                                                   credentials->ca.cert_pem, credentials->token};
        ccfg.ca_pem = credentials->ca.cert_pem;
        ccfg.client_cert_pem = credentials->admin.cert_pem;
        ccfg.client_key_pem = credentials->admin.key_pem;
      }
      sopts.port = opts.port;
      sopts.data_dir = opts.data_dir;
      if (!work_dir.empty())
        sopts.pod_logs_dir = pod_logs::pod_logs_root(work_dir);
      sopts.event_ttl = std::chrono::seconds(opts.event_ttl_seconds);
      server = std::make_unique<apiserver::server>(sopts);
      auto port = server->start();
      if (!port)
        return error{"cannot start the API server: " + port.err().message};
      ccfg.server = server->url();
      if (opts.fault_injection)
        server->add_route("/debug/faults", {[srv = server.get()](const std::string& method, const std::string&,
                                                                  const std::string& body, auto reply) {
                                              reply(apiserver::fault_route(srv->faults(), method, body));
                                            }});
      apiserver::server::route kozmo_api;
      kozmo_api.handler = [h = http](const std::string& method, const std::string& path, const std::string& body,
                                     apiserver::server::route_reply_fn reply) {
        h->answer(method, path, body, std::move(reply));
      };
      kozmo_api.late = {503, json::dump(json::object{{"code", 503}, {"message", "the scheduler did not answer"}})};
      for (const char* prefix : {"/metrics", "/v1/inspect/"})
        server->add_route(prefix, kozmo_api);
      // Loopback to our own server: the limit only guards against runaway loops.
      ccfg.qps = 2000;
      ccfg.burst = 4000;
    } else if (!opts.server_url.empty()) {
      ccfg.server = opts.server_url;
    } else {
      auto loaded = client::discover_config(opts.kubeconfig);
      if (!loaded)
        return loaded.err();
      ccfg = *loaded;
    }
    if (opts.client_qps > 0) {
      ccfg.qps = opts.client_qps;
      ccfg.burst = opts.client_burst > 0 ? opts.client_burst : static_cast<int>(opts.client_qps * 2);
    }
    if (opts.client_connections > 0)
      ccfg.max_connections = opts.client_connections;
    ccfg.user_agent = "kozmo/0.1";
    cli = std::make_shared<client::client>(ccfg);
    return ok;
  }

  // /metrics and inspect on one address, the probes on another (not with the embedded server,
  // whose own port carries them).
  status serve_http() {
    auto serve = [&](const std::string& address, std::vector<extender::route_kind> routes,
                     std::unique_ptr<extender::extender_server>& out, const char* what,
                     std::optional<extender::tls_options> tls) -> status {
      if (address.empty())
        return ok;
      auto listen = extender::parse_listen(address);
      if (!listen)
        return error::bad_request(std::string(what) + ": " + listen.err().message);
      extender::server_options so;
      so.address = listen->first;
      so.port = listen->second;
      so.routes = std::move(routes);
      so.backend_timeout = std::chrono::seconds(10);
      if (tls) {
        so.tls = std::move(*tls);
        so.authorize = extender::delegated_access(cli);
      }
      out = std::make_unique<extender::extender_server>(http, so);
      if (auto port = out->start(); !port)
        return error::bad_request(std::string(what) + " " + address + ": " + port.err().message);
      return ok;
    };
    using rk = extender::route_kind;
    std::optional<extender::tls_options> metrics_tls;
    if (opts.metrics_secure && !opts.metrics_address.empty()) {
      auto tls = metrics_identity(opts);
      if (!tls)
        return tls.err();
      metrics_tls = std::move(*tls);
    }
    if (auto st = serve(opts.metrics_address, {rk::metrics, rk::inspect}, metrics_server, "metrics address",
                       std::move(metrics_tls)); !st)
      return st;
    if (auto st = serve(opts.probe_address, {rk::healthz, rk::readyz}, probe_server, "health probe address", {});
        !st)
      return st;
    if (!opts.extender_address.empty()) {
      std::optional<extender::tls_options> tls;
      if (!opts.extender_insecure) {
        auto id = runtime::serving_identity(opts.extender_cert_pem, opts.extender_key_pem, "the extender verbs");
        if (!id)
          return id.err();
        id->client_ca_pem = opts.extender_client_ca_pem;
        tls = std::move(*id);
      }
      http->set_extender(nullptr, error{opts.leader_election.enabled ? "this replica stands by (leader election): the "
                                                                       "leader answers kube-scheduler"
                                                                     : "the scheduler is starting",
                                        503, "ServiceUnavailable"});
      if (auto st = serve(opts.extender_address, {rk::filter, rk::preempt, rk::bind}, extender_server,
                          "scheduler.extender.bindAddress", std::move(tls));
          !st)
        return st;
      if (opts.extender_insecure)
        spdlog::warn("http: kube-scheduler's extender verbs on {} over plain HTTP, for anyone who can reach it "
                     "(scheduler.extender.insecure)",
                     opts.extender_address);
    }
    http->set_readiness([this]() -> std::string {
      std::lock_guard lock(lead_mu);
      if (!start_failure.empty())
        return "the controllers could not start: " + start_failure;
      if (!opts.leader_election.enabled && !leading)
        return "starting";
      if (leading && scheduler_ready && !scheduler_ready->load())
        return "the scheduler is reading the cluster's nodes and pods (placements are recovered from bind-info)";
      return {};
    });
    return ok;
  }

  void stop_http() {
    for (auto* srv : {&metrics_server, &probe_server, &extender_server})
      if (*srv)
        (*srv)->stop();
  }

  // Won the lease: start the controllers (once; not after stop()).
  void on_leading() {
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

  bool run_scheduler() const { return !opts.scheduler_config.empty() || opts.scheduler_from_nodes; }
  bool need_nodes_watch() const { return opts.binder || opts.demo || run_scheduler(); }

  // The shared pods and nodes watches (read-only). With leader election they start at once, so
  // that a standby's caches are warm when it takes over: no LIST of every pod then.
  void start_watches() {
    if (!pods_watch) {
      watch::watch_config pods;
      pods.resource = {"", "v1", "pods", "", "", ""};
      pods.field_selector = opts.pods_field_selector;
      pods.counted_pods = opts.pods_scheduler_fields_only;
      pods_watch = watch::spawn_watch<k8s::pod>(*sys, cli, pods);
      actors.push_back(pods_watch);
    }
    if (run_scheduler() && opts.extender_address.empty() && opts.count_other_pods &&
        !opts.pods_field_selector.empty() && !other_pods_watch) {
      watch::watch_config others;
      others.resource = {"", "v1", "pods", "", "", ""};
      others.field_selector = "spec.schedulerName!=" + k8s::escape_field_value(opts.scheduler_name) +
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

  status spawn_actors() {
    if (opts.nodes.nodes.empty() && !need_nodes_watch() && !opts.training && !opts.tasks && !opts.volume_binder &&
        !opts.quota)
      return ok;
    if ((opts.training || opts.tasks) && server) {
      if (auto st = install_crds(*server, opts); !st)
        return st;
    }
    if (!recorder) { // with leader election the elector's recorder is already there
      recorder = controller::spawn_event_recorder(*sys, cli);
      actors.push_back(recorder);
    }
    start_watches();
    if (opts.binder)
      actors.push_back(binder::spawn_binder(*sys, cli, pods_watch, nodes_watch, recorder));
    if (opts.volume_binder)
      actors.push_back(volumes::spawn_volume_binder(*sys, cli, recorder));
    if (opts.quota)
      actors.push_back(quota::spawn_quota_controller(*sys, cli, pods_watch));
    if (run_scheduler()) {
      auto st = opts.extender_address.empty() ? spawn_scheduler(pods_watch, nodes_watch) : spawn_extender();
      if (!st)
        return st;
    }
    for (const auto& node : opts.nodes.nodes) {
      kubelet::kubelet_config kc;
      kc.node = node;
      kc.recorder = recorder;
      kc.runtime = opts.kubelet_runtime;
      kc.allow_process = opts.allow_process_runtime;
      kc.run_as = process_identity;
      kc.work_dir = work_dir;
      actors.push_back(kubelet::spawn_kubelet(*sys, cli, pods_watch, kc));
    }
    if (opts.training) {
      training::supervisor_config tc;
      tc.job.cli = cli;
      tc.job.opts.scheduler_name = opts.scheduler_name;
      if (!opts.mpi_kubectl_delivery_image.empty())
        tc.job.opts.mpi_kubectl_delivery_image = opts.mpi_kubectl_delivery_image;
      tc.job.opts.default_max_replicas = opts.training_max_replicas;
      tc.job.opts.max_replicas = opts.training_max_replicas_by_kind;
      tc.recorder = recorder;
      actors.push_back(training::spawn_training_supervisor(*sys, pods_watch, std::move(tc)));
    }
    if (opts.tasks) {
      tasks::task_controller_config tc;
      tc.cli = cli;
      tc.platform = opts.task_platform;
      tc.recorder = recorder;
      tc.training_jobs = opts.training; // the training controller carries the jobs out
      if (const char* ns = std::getenv("POD_NAMESPACE"); ns && *ns)
        tc.template_namespace = ns;
      for (auto& a : tasks::spawn_task_controller(*sys, pods_watch, std::move(tc)))
        actors.push_back(std::move(a));
    }
    if (opts.demo)
      actors.push_back(runtime::spawn_demo(*sys, cli, pods_watch, nodes_watch));
    return ok;
  }

  // The HiveD configuration of the extender: the one given, or one derived from the cluster's
  // GPU nodes now (the extender does not follow nodes that join later).
  expected<std::string> scheduler_yaml() {
    if (!opts.scheduler_config.empty())
      return scheduler_config_text(opts.scheduler_config);
    client::list_options from_cache; // the API server's watch cache, as the nodes watch lists too
    from_cache.resource_version = "0";
    auto nodes = cli->list({"", "v1", "nodes", "", "", ""}, from_cache);
    if (!nodes)
      return error::bad_request("scheduler: cannot list the nodes to derive a configuration from: " +
                                nodes.err().message);
    auto shape = runtime::shape_from_nodes(*nodes);
    if (shape.nodes.empty())
      return error::bad_request("scheduler: no node has allocatable nvidia.com/gpu, so there is no configuration to "
                                "derive; give one (scheduler.config or scheduler.configFile) or start once GPU "
                                "nodes have registered");
    int gpus = 0;
    for (const auto& n : shape.nodes)
      gpus += n.gpus;
    spdlog::info("scheduler: configuration derived from {} GPU node(s), {} GPU(s)", shape.nodes.size(), gpus);
    return runtime::hived_config_from_shape(shape);
  }

  // kube-scheduler's extender: the extender actor owns the scheduler core and answers the verbs
  // the extender address receives. Its configuration is the one given or derived now (nodes
  // that join later need a restart here; direct mode follows them).
  status spawn_extender() {
    auto text = scheduler_yaml();
    if (!text)
      return text.err();
    auto core = scheduler::scheduler_core::load(*text);
    if (!core)
      return error::bad_request("scheduler configuration: " + core.err().message);
    scheduler::intake_options intake;
    intake.default_virtual_cluster = scheduler::default_virtual_cluster(*text);
    auto logic = std::make_shared<extender::extender_logic>(std::move(*core), intake);
    extender::extender_actor_config ec;
    ec.event_component = "kozmo-controller";
    ec.recorder = recorder;
    auto actor = extender::spawn_extender_actor(*sys, cli, logic, pods_watch, nodes_watch, ec);
    actors.push_back(actor);
    http->set_extender(extender::make_actor_backend(actor), error::internal("the extender stopped"));
    return ok;
  }

  status spawn_scheduler(const caf::actor& pods_watch, const caf::actor& nodes_watch) {
    scheduler::scheduler_actor_config sc;
    if (!opts.scheduler_config.empty()) {
      auto text = scheduler_config_text(opts.scheduler_config);
      if (!text)
        return text.err();
      sc.config_yaml = std::move(*text);
    } else {
      // Derived: the scheduler derives it from the nodes watch's first LIST (no LIST of its own
      // here), then follows GPU nodes joining and leaving. Until then, no cells.
      sc.config_yaml = runtime::hived_config_from_shape({});
      sc.derived = scheduler::derived_config{
          [](const k8s::node& n) {
            auto shape = runtime::gpu_shape_of(n);
            return shape ? shape->gpu_type + "/" + std::to_string(shape->gpus) : std::string();
          },
          [](const std::vector<k8s::node>& nodes) {
            return runtime::hived_config_from_shape(runtime::shape_from_nodes(nodes));
          }};
    }
    sc.scheduler_name = opts.scheduler_name;
    sc.count_other_pods = opts.count_other_pods;
    sc.other_pods_watch = other_pods_watch;
    sc.recorder = recorder;
    auto ready = std::make_shared<std::atomic<bool>>(false);
    sc.on_ready = [ready] { ready->store(true); };
    auto* system = sys.get();
    auto client = cli;
    auto factory = [system, client, rec = recorder](const std::string& group, int threshold,
                                                    const caf::actor& scheduler) {
      cellgroup::cellgroup_config cc;
      cc.group = group;
      cc.force_bind_threshold = threshold;
      cc.recorder = rec;
      return cellgroup::spawn_cellgroup(*system, client, scheduler, cc);
    };
    auto spawned = scheduler::spawn_scheduler(*sys, cli, pods_watch, nodes_watch, std::move(sc), factory);
    if (!spawned)
      return error::bad_request("scheduler configuration: " + spawned.err().message);
    scheduler = *spawned;
    scheduler_ready = std::move(ready);
    actors.push_back(scheduler);
    if (http)
      http->set_scheduler(scheduler);
    return ok;
  }
};

engine::engine(engine_options opts) : impl_(std::make_unique<impl>()) { impl_->opts = std::move(opts); }

engine::~engine() { stop(); }

status engine::start() {
  auto& d = *impl_;
  if (d.started)
    return ok;
  if (!d.opts.pods_field_selector.empty()) {
    if (auto sel = k8s::field_selector::parse(d.opts.pods_field_selector); !sel)
      return error::bad_request("pods_field_selector: " + sel.err().message);
  }
  // Before anything connects: a bad worker count ($KOZMO_WORKERS) is a configuration error.
  d.cfg = std::make_unique<caf::actor_system_config>();
  if (auto workers = runtime::tune_scheduler(*d.cfg, d.opts.workers); !workers)
    return workers.err();
  if (!d.opts.nodes.nodes.empty()) {
    auto who = process_identity(d.opts.process_user);
    if (!who)
      return who.err();
    d.process_identity = *who;
  }
  if (auto st = d.connect(); !st)
    return st;
  if (d.opts.leader_election.enabled) {
    if (auto why = controller::check_timing(d.opts.leader_election.timing))
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
  ec.timing = le.timing;
  std::lock_guard lock(d.lead_mu);
  d.recorder = controller::spawn_event_recorder(*d.sys, d.cli); // "... became leader" on the Lease
  d.actors.push_back(d.recorder);
  d.start_watches(); // a warm standby
  ec.recorder = d.recorder;
  auto* impl = impl_.get();
  ec.started_leading = [impl] { impl->on_leading(); };
  ec.stopped_leading = [lost = le.lost] {
    if (lost)
      return lost();
    spdlog::critical("kozmo: leader election lost; exiting so that no write follows");
    spdlog::shutdown();
    std::_Exit(1);
  };
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

std::shared_ptr<client::client> engine::api() const { return impl_->cli; }

std::uint16_t engine::metrics_port() const {
  return impl_->metrics_server ? impl_->metrics_server->port() : 0;
}

std::uint16_t engine::probe_port() const { return impl_->probe_server ? impl_->probe_server->port() : 0; }

std::uint16_t engine::extender_port() const {
  return impl_->extender_server ? impl_->extender_server->port() : 0;
}

caf::actor_system& engine::system() { return *impl_->sys; }

caf::actor engine::scheduler() const { return impl_->scheduler; }

caf::actor engine::pods_watch() const { return impl_->pods_watch; }

apiserver::server* engine_internal::embedded_server(engine& e) { return e.impl_->server.get(); }

} // namespace kozmo
