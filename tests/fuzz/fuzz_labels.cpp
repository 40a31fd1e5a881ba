// Cells from node labels (actors/scheduler/label_topology.hpp): a configuration with
// topologyFromLabels and a list of nodes, cut at the first "\n---\n". Each node is one line
// "<name> <gpus> <gpu type> <key>=<value> ...".
// Properties: parsing and deriving never crash; whatever cells_from_labels derives loads as a
// physical cluster (the cell tree builds) with every node's GPUs under it once; the text is the
// same for the nodes in reverse order (deterministic, so a heartbeat changes nothing).
#include "actors/scheduler/config.hpp"
#include "actors/scheduler/label_topology.hpp"
#include "actors/scheduler/virtual_clusters.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <algorithm>
#include <set>
#include <sstream>

using namespace kozmo;

namespace {

std::vector<scheduler::labelled_node> read_nodes(std::string_view text) {
  std::vector<scheduler::labelled_node> nodes;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line) && nodes.size() < 64) {
    std::istringstream words(line);
    scheduler::labelled_node n;
    std::string gpus, kv;
    if (!(words >> n.name >> gpus >> n.gpu_type))
      continue;
    n.gpus = static_cast<int>(std::min<std::size_t>(gpus.size(), 16)); // bounded: the count is the word's length
    while (words >> kv) {
      auto [k, v] = fuzz::split_once(kv, "=");
      n.labels[std::string(k)] = std::string(v);
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto [config_text, node_text] = fuzz::split_once(fuzz::as_text(data, size), "\n---\n");
  auto cfg = scheduler::parse_config(config_text);
  auto nodes = read_nodes(node_text);
  auto levels = cfg && cfg->has_topology_from_labels ? cfg->topology_from_labels : scheduler::default_levels();
  (void)scheduler::config_from_labels(config_text, nodes);
  auto spec = scheduler::cells_from_labels(nodes, levels);
  if (!spec)
    return 0;
  const std::string text = scheduler::physical_cluster_yaml(*spec);
  auto model = scheduler::load_cluster_model(text);
  fuzz::require(model.has_value(), "the derived physical cluster loads", model ? std::string_view{} : model.err().message);
  std::set<std::string> seen;
  int gpus = 0;
  for (const auto& n : nodes)
    if (seen.insert(n.name).second && n.gpus > 0 && scheduler::valid_node_name(n.name) &&
        scheduler::valid_label_value(n.gpu_type)) {
      gpus += n.gpus;
      fuzz::require(model->tree.node_level_cells_of(n.name).size() == 1, "every GPU node has one node-level cell", n.name);
    }
  int leaves = 0;
  for (auto top : model->tree.top_cells())
    leaves += model->tree.at(top).leaf_count;
  fuzz::require(leaves == gpus, "the cells hold every node's GPUs", text);
  std::reverse(nodes.begin(), nodes.end());
  // Reversed, a name given twice keeps another copy: only compare when names are unique.
  if (seen.size() == nodes.size()) {
    auto again = scheduler::cells_from_labels(nodes, levels);
    fuzz::require(again && scheduler::physical_cluster_yaml(*again) == text, "the same nodes in another order give the same text");
  }
  return 0;
}
