// The engine's GPU scheduler: direct mode (the scheduler actor and its cell groups, binding pods
// itself) or kube-scheduler's extender (the extender actor answering the verbs), on the HiveD
// configuration given or derived from the cluster's GPU nodes.
#include "runtime/engine_http.hpp"
#include "runtime/engine_impl.hpp"

#include "actors/cellgroup/cellgroup_actor.hpp"
#include "actors/extender/extender_actor.hpp"
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/label_topology.hpp"
#include "actors/scheduler/scheduler_actor.hpp"
#include "k8s/client/client.hpp"
#include "runtime/config_file.hpp"
#include "runtime/hived_shape.hpp"

#include <spdlog/spdlog.h>

namespace kozmo {
namespace {

// The configuration as given, or the file it names.
expected<std::string> scheduler_config_text(const std::string& text_or_path) {
  if (text_or_path.find('\n') != std::string::npos)
    return text_or_path;
  auto text = runtime::read_file(text_or_path);
  if (!text)
    return error::bad_request("scheduler configuration: " + text.err().message);
  return text;
}

// A configuration with topologyFromLabels (label_topology.hpp): its physical cells follow the
// nodes' labels. Nullopt for any other configuration (used as given).
std::optional<std::vector<scheduler::topology_level>> label_levels(const std::string& text) {
  auto cfg = scheduler::parse_config(text);
  if (!cfg || !cfg->has_topology_from_labels)
    return std::nullopt;
  return cfg->topology_from_labels;
}

// Follows the nodes' labels: `config_text` (with topologyFromLabels) derived again whenever a
// GPU node joins or leaves or a label the levels read changes.
scheduler::derived_config following_labels(std::string config_text, std::vector<scheduler::topology_level> levels) {
  return scheduler::derived_config{
      [levels](const k8s::node& n) { return runtime::topology_signature(n, levels); },
      [text = std::move(config_text)](const std::vector<k8s::node>& nodes) {
        auto yaml = scheduler::config_from_labels(text, runtime::labelled_nodes(nodes));
        if (yaml)
          return *yaml;
        spdlog::error("scheduler: cannot derive the cells from the node labels: {}", yaml.err().message);
        return std::string();
      }};
}

} // namespace

// The HiveD configuration of the extender: the one given, or one derived from the cluster's
// GPU nodes now (the extender does not follow nodes that join later).
expected<std::string> engine::impl::scheduler_yaml() {
  std::string given;
  if (!opts.parts.scheduler_config.empty()) {
    auto text = scheduler_config_text(opts.parts.scheduler_config);
    if (!text || !label_levels(*text))
      return text;
    given = std::move(*text);
  }
  client::list_options from_cache; // the API server's watch cache, as the nodes watch lists too
  from_cache.resource_version = "0";
  auto nodes = cli->list({"", "v1", "nodes", "", "", ""}, from_cache);
  if (!nodes)
    return error::bad_request("scheduler: cannot list the nodes to derive a configuration from: " +
                              nodes.err().message);
  if (!given.empty())
    return scheduler::config_from_labels(given, runtime::labelled_nodes(runtime::nodes_of(*nodes)));
  auto shape = runtime::shape_from_nodes(*nodes);
  if (shape.nodes.empty())
    return error::bad_request("scheduler: no node has allocatable nvidia.com/gpu, so there is no configuration to "
                              "derive; give one (scheduler.config or scheduler.configFile) or start once GPU "
                              "nodes have registered");
  int gpus = 0;
  for (const auto& n : shape.nodes)
    gpus += n.gpus;
  spdlog::info("scheduler: configuration derived from {} GPU node(s), {} GPU(s)", shape.nodes.size(), gpus);
  return runtime::derived_config_of(runtime::nodes_of(*nodes));
}

// kube-scheduler's extender: the extender actor owns the scheduler core and answers the verbs
// the extender address receives. Its configuration is the one given or derived now (nodes
// that join later need a restart here; direct mode follows them).
status engine::impl::spawn_extender() {
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

status engine::impl::spawn_scheduler(const caf::actor& pods_watch, const caf::actor& nodes_watch) {
  scheduler::scheduler_actor_config sc;
  if (!opts.parts.scheduler_config.empty()) {
    auto text = scheduler_config_text(opts.parts.scheduler_config);
    if (!text)
      return text.err();
    if (auto levels = label_levels(*text)) {
      if (auto probe = scheduler::config_from_labels(*text, {}); !probe)
        return error::bad_request("scheduler configuration: " + probe.err().message);
      sc.config_yaml = runtime::hived_config_from_shape({}); // no cells until the nodes have listed
      sc.derived = following_labels(std::move(*text), std::move(*levels));
    } else {
      sc.config_yaml = std::move(*text);
    }
  } else {
    // Derived: the scheduler derives it from the nodes watch's first LIST (no LIST of its own
    // here), then follows GPU nodes joining and leaving, and the default levels' labels (cells
    // from labels once a GPU node carries one). Until then, no cells.
    sc.config_yaml = runtime::hived_config_from_shape({});
    sc.derived = scheduler::derived_config{
        [levels = scheduler::default_levels()](const k8s::node& n) { return runtime::topology_signature(n, levels); },
        [](const std::vector<k8s::node>& nodes) { return runtime::derived_config_of(nodes); }};
  }
  sc.scheduler_name = opts.parts.scheduler_name;
  sc.count_other_pods = opts.parts.count_other_pods;
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

} // namespace kozmo
