// Buddy bookkeeping for physical cells; see allocation_state.hpp for the invariants.
#include "actors/scheduler/allocation_state.hpp"

#include <algorithm>

namespace kozmo::scheduler {

allocation_state::allocation_state(const cell_tree& tree)
    : tree_(&tree), free_leaves_(tree.size(), 0), rank_(tree.size(), -1), chain_(tree.size(), -1),
      position_(tree.size(), -1), spare_(tree.size(), 1), spare_depth_(tree.size(), 0),
      user_(tree.size(), -1) {
  // Preorder walk: ranks give tree order independent of how the builder numbered cells, and
  // each (chain, level) list numbers its cells in that order.
  std::vector<cell_id> stack(tree.top_cells().rbegin(), tree.top_cells().rend());
  int next_rank = 0;
  while (!stack.empty()) {
    const cell_id id = stack.back();
    stack.pop_back();
    const cell& c = tree.at(id);
    rank_[id] = next_rank++;
    spare_depth_[id] = c.level;
    free_leaves_[id] = c.leaf_count;
    auto chain = std::find(chains_.begin(), chains_.end(), c.chain);
    if (chain == chains_.end()) {
      chains_.push_back(c.chain);
      lists_.emplace_back();
      chain = chains_.end() - 1;
    }
    const int ci = static_cast<int>(chain - chains_.begin());
    chain_[id] = ci;
    auto& levels = lists_[static_cast<std::size_t>(ci)];
    if (static_cast<int>(levels.size()) <= c.level) levels.resize(static_cast<std::size_t>(c.level) + 1);
    auto& l = levels[static_cast<std::size_t>(c.level)];
    position_[id] = static_cast<int>(l.cells.size());
    l.cells.push_back(id);
    stack.insert(stack.end(), c.children.rbegin(), c.children.rend());
  }
  for (auto& levels : lists_)
    for (std::size_t level = 0; level < levels.size(); ++level) {
      auto& l = levels[level];
      l.bits.assign((l.cells.size() + 63) / 64, 0);
      l.holds_spare.assign(level + 1, std::vector<std::uint64_t>(l.bits.size(), ~std::uint64_t{0}));
    }
  for (cell_id top : tree.top_cells()) add_free(top);
}

const allocation_state::free_list* allocation_state::list(std::string_view chain, int level) const {
  for (std::size_t c = 0; c < chains_.size(); ++c) {
    if (chains_[c] != chain) continue;
    if (level < 0 || level >= static_cast<int>(lists_[c].size())) return nullptr;
    return &lists_[c][static_cast<std::size_t>(level)];
  }
  return nullptr;
}

const std::string& allocation_state::user_of(cell_id leaf) const {
  static const std::string none;
  const int g = user_.at(leaf);
  return g < 0 ? none : group_names_[static_cast<std::size_t>(g)];
}

std::vector<cell_id> allocation_state::leaves_of(std::string_view group) const {
  auto it = group_ids_.find(group);
  if (it == group_ids_.end()) return {};
  std::vector<cell_id> out = group_leaves_[static_cast<std::size_t>(it->second)];
  std::sort(out.begin(), out.end(), [&](cell_id a, cell_id b) { return rank_[a] < rank_[b]; });
  return out;
}

bool allocation_state::holds(std::string_view group) const { return group_ids_.count(group) > 0; }

std::vector<cell_id> allocation_state::free_cells(std::string_view chain, int level) const {
  std::vector<cell_id> out;
  visit_free(chain, level, [&](cell_id id) {
    out.push_back(id);
    return true;
  });
  return out;
}

status allocation_state::take(const std::vector<cell_id>& leaves, std::string_view group) {
  if (group.empty()) return error::bad_request("cannot take cells for an unnamed group");
  for (cell_id leaf : leaves) {
    if (leaf >= tree_->size() || rank_[leaf] < 0)
      return error::bad_request("cell " + std::to_string(leaf) + " does not exist");
    const auto& c = tree_->at(leaf);
    if (c.level != 1) return error::bad_request("cell '" + c.address + "' is not a leaf cell");
    if (user_[leaf] >= 0)
      return error::conflict("leaf cell '" + c.address + "' is already used by group '" +
                             user_of(leaf) + "'");
  }
  thread_local std::vector<cell_id> sorted;
  sorted.assign(leaves.begin(), leaves.end());
  std::sort(sorted.begin(), sorted.end());
  if (auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
    return error::bad_request("leaf cell '" + tree_->at(*twice).address + "' is listed twice");
  if (leaves.empty()) return ok;
  auto [it, fresh] = group_ids_.try_emplace(std::string(group), 0);
  if (fresh) {
    if (!recycled_.empty()) {
      it->second = recycled_.back();
      recycled_.pop_back();
    } else {
      it->second = static_cast<int>(group_names_.size());
      group_names_.emplace_back();
      group_leaves_.emplace_back();
    }
    group_names_[static_cast<std::size_t>(it->second)] = it->first;
  }
  auto& held = group_leaves_[static_cast<std::size_t>(it->second)];
  held.reserve(held.size() + leaves.size());
  for (cell_id leaf : leaves) take_leaf(leaf, it->second);
  return ok;
}

int allocation_state::release(std::string_view group) {
  auto it = group_ids_.find(group);
  if (it == group_ids_.end()) return 0;
  const auto g = static_cast<std::size_t>(it->second);
  std::vector<cell_id> leaves;
  leaves.swap(group_leaves_[g]);
  for (cell_id leaf : leaves) release_leaf(leaf);
  group_names_[g].clear();
  recycled_.push_back(it->second);
  group_ids_.erase(it);
  return static_cast<int>(leaves.size());
}

// Taking a leaf splits the maximal free cell A above it: A leaves its free list and the
// siblings of every cell on the path from A down to the leaf (all free, since A was) become
// maximal free cells of their own levels.
void allocation_state::take_leaf(cell_id leaf, int group) {
  cell_id top_free = leaf;
  for (cell_id up = tree_->parent(leaf); up != no_cell && is_free(up); up = tree_->parent(up))
    top_free = up;
  remove_free(top_free);
  for (cell_id up = leaf; up != top_free;) {
    const cell_id parent = tree_->parent(up);
    for (cell_id sibling : tree_->at(parent).children)
      if (sibling != up) add_free(sibling);
    up = parent;
  }
  for (cell_id up = leaf; up != no_cell; up = tree_->parent(up)) --free_leaves_[up];
  user_[leaf] = group;
  group_leaves_[static_cast<std::size_t>(group)].push_back(leaf);
}

// Releasing a leaf merges buddies: find the highest cell B that becomes free; before the
// release the leaf was the only used leaf under B, so B's maximal free cells were exactly the
// siblings along the path from B down to the leaf. They leave their lists and B joins its own.
void allocation_state::release_leaf(cell_id leaf) {
  user_[leaf] = -1;
  for (cell_id up = leaf; up != no_cell; up = tree_->parent(up)) ++free_leaves_[up];
  cell_id top_free = leaf;
  for (cell_id up = tree_->parent(leaf); up != no_cell && is_free(up); up = tree_->parent(up))
    top_free = up;
  for (cell_id up = leaf; up != top_free;) {
    const cell_id parent = tree_->parent(up);
    for (cell_id sibling : tree_->at(parent).children)
      if (sibling != up) remove_free(sibling);
    up = parent;
  }
  add_free(top_free);
}

void allocation_state::add_free(cell_id id) {
  auto& l = lists_[static_cast<std::size_t>(chain_[id])][static_cast<std::size_t>(tree_->at(id).level)];
  const auto p = static_cast<std::size_t>(position_[id]);
  const std::uint64_t bit = std::uint64_t{1} << (p % 64);
  if (l.bits[p / 64] & bit) return;
  l.bits[p / 64] |= bit;
  ++l.count;
}

void allocation_state::remove_free(cell_id id) {
  auto& l = lists_[static_cast<std::size_t>(chain_[id])][static_cast<std::size_t>(tree_->at(id).level)];
  const auto p = static_cast<std::size_t>(position_[id]);
  const std::uint64_t bit = std::uint64_t{1} << (p % 64);
  if (!(l.bits[p / 64] & bit)) return;
  l.bits[p / 64] &= ~bit;
  --l.count;
}

// Recomputes one cell's spare depth from its own mark and its children's depths; true when it
// changed (its parent's may change then).
bool allocation_state::update_spare_depth(cell_id id) {
  const cell& c = tree_->at(id);
  int depth = spare_[id] ? c.level : 0;
  if (!spare_[id])
    for (cell_id child : c.children) depth = std::max(depth, spare_depth_[child]);
  const int was = spare_depth_[id];
  if (depth == was) return false;
  spare_depth_[id] = depth;
  auto& l = lists_[static_cast<std::size_t>(chain_[id])][static_cast<std::size_t>(c.level)];
  const auto p = static_cast<std::size_t>(position_[id]);
  const std::uint64_t bit = std::uint64_t{1} << (p % 64);
  for (int k = std::min(depth, was) + 1; k <= std::max(depth, was); ++k) {
    auto& word = l.holds_spare[static_cast<std::size_t>(k)][p / 64];
    word = depth >= k ? (word | bit) : (word & ~bit);
  }
  return true;
}

cell_id allocation_state::first_free_holding_spare(std::string_view chain, int level, int inner_level) const {
  const free_list* l = list(chain, level);
  if (!l || l->count == 0 || inner_level < 1 || inner_level > level) return no_cell;
  const auto& spare = l->holds_spare[static_cast<std::size_t>(inner_level)];
  for (std::size_t w = 0; w < l->bits.size(); ++w)
    if (const std::uint64_t word = l->bits[w] & spare[w]; word != 0)
      return l->cells[w * 64 + static_cast<std::size_t>(__builtin_ctzll(word))];
  return no_cell;
}

cell_id allocation_state::first_spare_under(cell_id id, int inner_level) const {
  while (tree_->at(id).level > inner_level) {
    for (cell_id child : tree_->at(id).children)
      if (spare_depth_[child] >= inner_level) {
        id = child;
        break;
      }
  }
  return id;
}

bool allocation_state::operator==(const allocation_state& other) const {
  if (tree_ != other.tree_ || free_leaves_ != other.free_leaves_) return false;
  for (cell_id id = 0; id < tree_->size(); ++id)
    if (user_of(id) != other.user_of(id)) return false;
  for (std::size_t c = 0; c < lists_.size(); ++c)
    for (std::size_t l = 0; l < lists_[c].size(); ++l)
      if (lists_[c][l].bits != other.lists_[c][l].bits) return false;
  return true;
}

} // namespace kozmo::scheduler
