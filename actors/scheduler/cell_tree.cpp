#include "actors/scheduler/cell_tree.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

namespace kozmo::scheduler {
namespace {

using type_map = std::map<std::string, cell_type_info, std::less<>>;

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

// Walks every type down to its leaf: rejects non-positive child numbers, missing child types,
// cycles and chains with two node levels, and records each type's level and leaf type.
expected<type_map> analyse_types(const std::map<std::string, cell_type_spec>& specs) {
  for (const auto& [name, spec] : specs) {
    if (spec.child_cell_number <= 0)
      return error::invalid("cell type '" + name + "': childCellNumber must be positive, got " +
                            std::to_string(spec.child_cell_number));
    if (spec.child_cell_type.empty())
      return error::invalid("cell type '" + name + "' has no childCellType");
  }
  type_map types;
  for (const auto& [name, spec] : specs) {
    std::vector<std::string> path;
    std::string cur = name;
    for (auto it = specs.find(cur); it != specs.end(); it = specs.find(cur)) {
      if (std::find(path.begin(), path.end(), cur) != path.end()) {
        path.push_back(cur);
        return error::invalid("cell types form a cycle: " + join(path, " -> "));
      }
      path.push_back(cur);
      cur = it->second.child_cell_type;
    }
    std::vector<std::string> node_levels;
    for (const auto& t : path)
      if (specs.at(t).is_node_level) node_levels.push_back(t);
    if (node_levels.size() > 1)
      return error::invalid("cell type '" + name + "' has more than one node level on its chain: " +
                            join(node_levels, ", "));
    types[name] = {name, spec.child_cell_type, spec.child_cell_number, spec.is_node_level, false,
                   static_cast<int>(path.size()) + 1, cur};
    types[cur] = {cur, "", 0, false, true, 1, cur};
  }
  return types;
}

// True if `type` or a type below it is node level.
bool reaches_node_level(const type_map& types, std::string type) {
  for (auto it = types.find(type); it != types.end() && !it->second.is_leaf;
       it = types.find(it->second.child_type))
    if (it->second.is_node_level) return true;
  return false;
}

std::optional<int> parse_gpu_index(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoi(s);
}

// Cells in one cell of `type`, capped so that absurd child numbers cannot overflow.
std::int64_t subtree_cells(const type_map& types, const std::string& type) {
  const auto& info = types.at(type);
  if (info.is_leaf) return 1;
  return std::min<std::int64_t>(1 + info.child_number * subtree_cells(types, info.child_type),
                                INT32_MAX);
}

// A configuration describing more cells than this is a typo (childCellNumber: 80000), not a
// cluster; refusing it early keeps a bad file from exhausting memory.
constexpr std::int64_t max_cells = 1'000'000;

} // namespace

// Builds cells depth first. Indices into cells_ are used instead of references because the
// vector grows during the recursion.
class cell_tree_builder {
public:
  cell_tree tree;

  status add_top(const physical_cell_spec& spec, std::size_t index) {
    const auto where = "physicalCells[" + std::to_string(index) + "]";
    if (spec.cell_type.empty()) return error::invalid(where + " has no cellType");
    if (!reaches_node_level(tree.types_, spec.cell_type))
      return error::invalid(where + ": the chain of cell type '" + spec.cell_type +
                            "' has no node-level cell type (isNodeLevel)");
    planned_ += subtree_cells(tree.types_, spec.cell_type);
    if (planned_ > max_cells)
      return error::invalid(where + " of type '" + spec.cell_type + "' takes the physical cluster past " +
                            std::to_string(max_cells) + " cells; check its childCellNumber values");
    counters top_scope;
    auto id = add(spec, spec.cell_type, no_cell, spec.cell_type, std::to_string(index), top_scope,
                  nullptr);
    if (!id) return id.err();
    tree.tops_.push_back(*id);
    return ok;
  }

private:
  using counters = std::map<std::string, int>;
  std::map<std::string, std::map<int, cell_id>> gpu_owner_; // node -> GPU index -> leaf
  std::int64_t planned_ = 0;

  expected<cell_id> add(const physical_cell_spec& spec, const std::string& type, cell_id parent,
                        const std::string& chain, const std::string& top_default,
                        counters& top_scope, counters* node_scope) {
    const auto& info = tree.types_.at(type);
    const std::string parent_address = parent == no_cell ? "" : tree.cells_[parent].address;
    cell c;
    c.type = type;
    c.chain = chain;
    c.leaf_type = info.leaf_type;
    c.level = info.level;
    c.is_node_level = info.is_node_level;
    c.parent = parent;
    c.pinned_id = spec.pinned_cell_id;
    c.holds_pinned = !c.pinned_id.empty();

    counters fresh_node_scope;
    if (info.is_node_level) {
      if (spec.cell_address.empty())
        return error::invalid("node-level cell of type '" + type + "' under '" + parent_address +
                              "' has no cellAddress (its Kubernetes node name)");
      c.address = spec.cell_address;
      c.node = spec.cell_address;
      node_scope = &fresh_node_scope;
    } else {
      // Counters advance for every cell so that a default sits where it would have been
      // had no address been given at all.
      const int dflt = node_scope ? (*node_scope)[type]++ : top_scope[type]++;
      std::string segment = spec.cell_address;
      if (segment.empty()) segment = parent == no_cell ? top_default : std::to_string(dflt);
      c.address = parent == no_cell ? segment : parent_address + "/" + segment;
      if (node_scope) c.node = tree.cells_[parent].node;
      if (info.is_leaf) {
        auto gpu = parse_gpu_index(segment);
        if (!gpu)
          return error::invalid("GPU address '" + segment + "' of cell '" + c.address +
                                "' is not a non-negative integer");
        c.leaf_indices = {*gpu};
        c.leaf_count = 1;
      }
    }

    auto& addresses = tree.by_address_[chain];
    if (addresses.count(c.address))
      return error::invalid("duplicate cell address '" + c.address + "' in chain '" + chain + "'");
    if (!c.pinned_id.empty()) {
      if (auto dup = tree.pinned_.find(c.pinned_id); dup != tree.pinned_.end())
        return error::invalid("duplicate pinnedCellId '" + c.pinned_id + "' on cells '" +
                              tree.cells_[dup->second].address + "' and '" + c.address + "'");
      for (auto up = parent; up != no_cell; up = tree.cells_[up].parent)
        if (!tree.cells_[up].pinned_id.empty())
          return error::invalid("pinned cell '" + c.pinned_id + "' at '" + c.address +
                                "' lies inside pinned cell '" + tree.cells_[up].pinned_id + "'");
    }
    std::map<int, cell_id>* owner = nullptr;
    if (info.is_leaf) {
      owner = &gpu_owner_[c.node];
      if (auto dup = owner->find(c.leaf_indices[0]); dup != owner->end())
        return error::invalid("GPU index " + std::to_string(c.leaf_indices[0]) + " on node '" +
                              c.node + "' belongs to two cells: '" +
                              tree.cells_[dup->second].address + "' and '" + c.address + "'");
    }

    const auto id = static_cast<cell_id>(tree.cells_.size());
    tree.cells_.push_back(std::move(c));
    addresses.emplace(tree.cells_[id].address, id);
    if (!spec.pinned_cell_id.empty()) tree.pinned_.emplace(spec.pinned_cell_id, id);
    if (info.is_node_level) tree.node_cells_[tree.cells_[id].node].push_back(id);
    if (info.is_leaf) {
      (*owner)[tree.cells_[id].leaf_indices[0]] = id;
      if (!spec.cell_children.empty())
        return error::invalid("leaf cell '" + tree.cells_[id].address + "' of type '" + type +
                              "' cannot have cellChildren");
      return id;
    }

    // Omitted children mean "the full hierarchy of the type" (HiveD's `cellChildren: null`):
    // as many children as the type has, each with nothing given.
    static const physical_cell_spec nothing_given;
    const bool by_default = spec.cell_children.empty();
    const std::size_t count = by_default ? static_cast<std::size_t>(info.child_number) : spec.cell_children.size();
    if (count != static_cast<std::size_t>(info.child_number))
      return error::invalid("physical cell '" + tree.cells_[id].address + "' of type '" + type +
                            "' has " + std::to_string(count) +
                            " children but the type requires " + std::to_string(info.child_number));
    tree.cells_[id].children.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      const auto& child = by_default ? nothing_given : spec.cell_children[i];
      if (!child.cell_type.empty() && child.cell_type != info.child_type)
        return error::invalid("physical cell '" + tree.cells_[id].address + "' of type '" + type +
                              "' has child #" + std::to_string(i) + " of type '" + child.cell_type +
                              "' but its children must be '" + info.child_type + "'");
      auto child_id = add(child, info.child_type, id, chain, top_default, top_scope, node_scope);
      if (!child_id) return child_id.err();
      tree.cells_[id].children.push_back(*child_id);
      const auto& ch = tree.cells_[*child_id];
      tree.cells_[id].leaf_count += ch.leaf_count;
      tree.cells_[id].holds_pinned = tree.cells_[id].holds_pinned || ch.holds_pinned;
      if (!tree.cells_[id].node.empty())
        tree.cells_[id].leaf_indices.insert(tree.cells_[id].leaf_indices.end(),
                                            ch.leaf_indices.begin(), ch.leaf_indices.end());
    }
    return id;
  }
};

expected<cell_tree> cell_tree::build(const physical_cluster_spec& spec) {
  auto types = analyse_types(spec.cell_types);
  if (!types) return types.err();
  cell_tree_builder b;
  b.tree.types_ = std::move(*types);
  // The cells are known in number before they are built: one allocation instead of a vector
  // that doubles (and moves every cell built so far) some seventeen times for 75,000 cells.
  std::int64_t planned = 0;
  for (const auto& top : spec.physical_cells)
    if (b.tree.types_.count(top.cell_type))
      planned = std::min(planned + subtree_cells(b.tree.types_, top.cell_type), max_cells);
  b.tree.cells_.reserve(static_cast<std::size_t>(planned));
  for (std::size_t i = 0; i < spec.physical_cells.size(); ++i) {
    if (auto st = b.add_top(spec.physical_cells[i], i); !st) return st.err();
  }
  std::map<std::string_view, int> node_ids;
  for (const auto& [node, ids] : b.tree.node_cells_) node_ids.emplace(node, static_cast<int>(node_ids.size()));
  for (auto& c : b.tree.cells_)
    if (!c.node.empty()) c.node_id = node_ids.emplace(c.node, static_cast<int>(node_ids.size())).first->second;
  b.tree.parents_.reserve(b.tree.cells_.size());
  for (const auto& c : b.tree.cells_) b.tree.parents_.push_back(c.parent);
  return std::move(b.tree);
}

std::optional<cell_type_info> cell_tree::type_info(std::string_view type) const {
  auto it = types_.find(type);
  if (it == types_.end()) return std::nullopt;
  return it->second;
}

std::vector<node_leaves> cell_tree::nodes() const {
  std::vector<node_leaves> out;
  for (const auto& [node, ids] : node_cells_) {
    node_leaves n{node, {}};
    for (auto id : ids) n.leaves_by_type[cells_[id].leaf_type] += cells_[id].leaf_count;
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<cell_id> cell_tree::node_level_cells_of(std::string_view node) const {
  auto it = node_cells_.find(node);
  return it == node_cells_.end() ? std::vector<cell_id>{} : it->second;
}

std::vector<cell_id> cell_tree::leaf_cells_of(std::string_view node) const {
  std::vector<cell_id> leaves;
  for (auto top : node_level_cells_of(node)) append_leaves(top, leaves);
  return leaves;
}

void cell_tree::append_leaves(cell_id id, std::vector<cell_id>& out) const {
  const cell& c = cells_.at(id);
  if (c.children.empty()) {
    out.push_back(id);
    return;
  }
  for (cell_id child : c.children) append_leaves(child, out);
}

std::vector<std::string> cell_tree::chains() const {
  std::set<std::string> seen;
  for (auto id : tops_) seen.insert(cells_[id].chain);
  return {seen.begin(), seen.end()};
}

std::optional<cell_id> cell_tree::find(std::string_view chain, std::string_view address) const {
  auto c = by_address_.find(chain);
  if (c == by_address_.end()) return std::nullopt;
  auto a = c->second.find(address);
  if (a == c->second.end()) return std::nullopt;
  return a->second;
}

std::optional<cell_id> cell_tree::find_pinned(std::string_view pinned_cell_id) const {
  auto it = pinned_.find(pinned_cell_id);
  if (it == pinned_.end()) return std::nullopt;
  return it->second;
}

} // namespace kozmo::scheduler
