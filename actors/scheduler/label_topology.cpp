#include "actors/scheduler/label_topology.hpp"

#include "k8s/json/value.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <sstream>

namespace kozmo::scheduler {
namespace {

bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A label's name part, and a label value: 1-63 characters, alphanumeric at both ends,
// [-_.A-Za-z0-9] between.
bool label_name_part(std::string_view s) {
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// A DNS subdomain (a label key's prefix): up to 253 characters, dot-separated parts of lower-case
// alphanumerics and '-', alphanumeric at both ends of each part.
bool dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253)
    return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    auto dot = s.find('.', start);
    auto part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || part.size() > 63 || !alnum(part.front()) || !alnum(part.back()))
      return false;
    for (char c : part)
      if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
        return false;
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  return true;
}

bool label_key(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos)
    return label_name_part(key);
  return dns_subdomain(key.substr(0, slash)) && label_name_part(key.substr(slash + 1));
}

bool level_name(std::string_view name) {
  return !name.empty() && name.size() <= 32 &&
         std::all_of(name.begin(), name.end(), [](char c) { return alnum(c) || c == '-'; });
}

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// A derived cell with what its parent needs to name its own type.
struct piece {
  std::string type;
  std::string counts; // "4x8": children per level down to the node, then GPUs per node
  std::string gpu;    // the GPU type (leaf cell type)
  physical_cell_spec spec;
};

class deriver {
public:
  deriver(const std::vector<topology_level>& levels, std::size_t node_level)
      : levels_(levels), node_level_(node_level) {}

  physical_cluster_spec run(const std::vector<const labelled_node*>& nodes) {
    for (const auto* n : nodes)
      signature_of_name_.emplace(n->gpu_type, "leaf"); // no derived type takes a leaf's name
    auto tops = build(0, nodes);
    std::sort(tops.begin(), tops.end(), [](const piece& a, const piece& b) {
      return std::tie(a.type, a.spec.cell_address) < std::tie(b.type, b.spec.cell_address);
    });
    for (auto& p : tops)
      out_.physical_cells.push_back(std::move(p.spec));
    return std::move(out_);
  }

private:
  const std::vector<topology_level>& levels_;
  std::size_t node_level_;
  physical_cluster_spec out_;
  std::map<std::string, std::string> signature_of_name_;
  std::map<std::string, std::string> name_of_signature_;

  // Rule 4: the type of a cell at `level` with this shape, declared on first use.
  std::string type_name(std::size_t level, const std::string& counts, const std::string& gpu, const std::string& child,
                        int child_number) {
    const std::string signature = std::to_string(level) + "|" + counts + "|" + gpu;
    if (auto it = name_of_signature_.find(signature); it != name_of_signature_.end())
      return it->second;
    std::string gpu_part = gpu;
    std::replace(gpu_part.begin(), gpu_part.end(), '.', '_');
    std::string name = upper(levels_[level].name) + "-" + counts + "-" + gpu_part;
    while (signature_of_name_.count(name))
      name += '_';
    signature_of_name_.emplace(name, signature);
    name_of_signature_.emplace(signature, name);
    out_.cell_types[name] = {child, child_number, level == node_level_};
    return name;
  }

  std::string address_at(const labelled_node& n, std::size_t level) const {
    auto it = n.labels.find(levels_[level].label);
    if (it == n.labels.end() || !valid_label_value(it->second))
      return std::string(unlabelled_address);
    return it->second;
  }

  // Rule 3: the node's cell and the one-child cells below it; the GPUs are left to the tree
  // builder's defaults (indices 0..n-1 under the last cell).
  piece node_piece(const labelled_node& n) {
    const std::string counts = std::to_string(n.gpus);
    std::string child = n.gpu_type;
    int child_number = n.gpus;
    std::optional<physical_cell_spec> below;
    for (std::size_t level = levels_.size() - 1; level > node_level_; --level) {
      physical_cell_spec c;
      c.cell_type = type_name(level, counts, n.gpu_type, child, child_number);
      c.cell_address = address_at(n, level);
      if (below)
        c.cell_children.push_back(std::move(*below));
      below = std::move(c);
      child = below->cell_type;
      child_number = 1;
    }
    piece p{type_name(node_level_, counts, n.gpu_type, child, child_number), counts, n.gpu_type, {}};
    p.spec.cell_type = p.type;
    p.spec.cell_address = n.name;
    if (below)
      p.spec.cell_children.push_back(std::move(*below));
    return p;
  }

  // Rules 2 and 5: the cells of `level` holding `nodes`, grouped by label value, one cell per
  // (value, member type).
  std::vector<piece> build(std::size_t level, const std::vector<const labelled_node*>& nodes) {
    std::vector<piece> out;
    if (level == node_level_) {
      for (const auto* n : nodes)
        out.push_back(node_piece(*n));
      return out;
    }
    std::map<std::string, std::vector<const labelled_node*>> groups;
    for (const auto* n : nodes)
      groups[address_at(*n, level)].push_back(n);
    for (const auto& [value, members] : groups) {
      std::map<std::string, std::vector<piece>> by_type;
      for (auto& child : build(level + 1, members))
        by_type[child.type].push_back(std::move(child));
      for (auto& [type, kids] : by_type) {
        piece p;
        p.gpu = kids.front().gpu;
        p.counts = std::to_string(kids.size()) + "x" + kids.front().counts;
        p.type = type_name(level, p.counts, p.gpu, type, static_cast<int>(kids.size()));
        p.spec.cell_type = p.type;
        p.spec.cell_address = value;
        for (auto& k : kids)
          p.spec.cell_children.push_back(std::move(k.spec));
        out.push_back(std::move(p));
      }
    }
    return out;
  }
};

std::string quoted(std::string_view s) {
  std::string out;
  json::write_string(out, s);
  return out;
}

void write_cell(std::ostringstream& out, const physical_cell_spec& c, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  out << pad << "- cellType: " << quoted(c.cell_type) << "\n" << pad << "  cellAddress: " << quoted(c.cell_address) << "\n";
  if (c.cell_children.empty())
    return;
  out << pad << "  cellChildren:\n";
  for (const auto& child : c.cell_children)
    write_cell(out, child, indent + 2);
}

} // namespace

std::vector<topology_level> default_levels() {
  return {{"zone", "topology.kubernetes.io/zone"}, {"rack", "kozmo.io/rack"}, {"node", ""},
          {"clique", "nvidia.com/gpu.clique"}};
}

bool valid_label_value(std::string_view value) { return label_name_part(value); }
bool valid_node_name(std::string_view name) { return dns_subdomain(name); }

status check_levels(const std::vector<topology_level>& levels) {
  const std::string path = "topologyFromLabels.levels";
  if (levels.empty() || levels.size() > max_topology_levels)
    return error::invalid(path + " must list 1 to " + std::to_string(max_topology_levels) + " levels, got " +
                          std::to_string(levels.size()));
  std::set<std::string> names, labels;
  int node_levels = 0;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const auto where = path + "[" + std::to_string(i) + "]";
    const auto& l = levels[i];
    if (!level_name(l.name))
      return error::invalid(where + ".name '" + l.name + "' must be 1-32 characters of letters, digits and '-'");
    if (!names.insert(upper(l.name)).second)
      return error::invalid(where + ".name '" + l.name + "' is used by another level");
    if (l.label.empty()) {
      if (l.name != "node")
        return error::invalid(where + " '" + l.name + "' has no label; only the node level ({name: node}) has none");
      ++node_levels;
      continue;
    }
    if (l.name == "node")
      return error::invalid(where + ": the node level ({name: node}) takes no label");
    if (!label_key(l.label))
      return error::invalid(where + ".label '" + l.label + "' is not a valid label key");
    if (!labels.insert(l.label).second)
      return error::invalid(where + ".label '" + l.label + "' is used by another level");
  }
  if (node_levels != 1)
    return error::invalid(path + " must have exactly one node level ({name: node})");
  return ok;
}

expected<physical_cluster_spec> cells_from_labels(const std::vector<labelled_node>& nodes,
                                                  const std::vector<topology_level>& levels) {
  if (auto st = check_levels(levels); !st)
    return st.err();
  std::size_t node_level = 0;
  while (levels[node_level].name != "node")
    ++node_level;
  // By name; a name given twice (not from an API server) counts once, as first given.
  std::vector<const labelled_node*> sorted;
  for (const auto& n : nodes)
    sorted.push_back(&n);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  sorted.erase(std::unique(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->name == b->name; }),
               sorted.end());
  std::vector<const labelled_node*> gpu_nodes;
  for (const auto* n : sorted)
    if (n->gpus > 0 && valid_node_name(n->name) && valid_label_value(n->gpu_type))
      gpu_nodes.push_back(n);
  return deriver(levels, node_level).run(gpu_nodes);
}

std::string physical_cluster_yaml(const physical_cluster_spec& spec) {
  std::ostringstream out;
  out << "physicalCluster:\n  cellTypes:\n";
  if (spec.cell_types.empty())
    out << "    {}\n";
  for (const auto& [name, t] : spec.cell_types) {
    out << "    " << quoted(name) << ": {childCellType: " << quoted(t.child_cell_type)
        << ", childCellNumber: " << t.child_cell_number << (t.is_node_level ? ", isNodeLevel: true" : "") << "}\n";
  }
  out << "  physicalCells:\n";
  if (spec.physical_cells.empty())
    out << "  []\n";
  for (const auto& c : spec.physical_cells)
    write_cell(out, c, 2);
  return out.str();
}

} // namespace kozmo::scheduler
