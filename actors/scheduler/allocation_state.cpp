// Buddy bookkeeping for physical cells; see allocation_state.hpp for the invariants.
#include "actors/scheduler/allocation_state.hpp"

#include <algorithm>

namespace kozmo::scheduler {

allocation_state::allocation_state(const cell_tree& tree)
    : tree_(&tree), free_leaves_(tree.size(), 0), user_(tree.size()), rank_(tree.size(), -1) {
  // Preorder walk: ranks give tree order independent of how the builder numbered cells.
  std::vector<cell_id> stack(tree.top_cells().rbegin(), tree.top_cells().rend());
  while (!stack.empty()) {
    const cell_id id = stack.back();
    stack.pop_back();
    rank_[id] = static_cast<int>(by_rank_.size());
    by_rank_.push_back(id);
    free_leaves_[id] = tree.at(id).leaf_count;
    const auto& children = tree.at(id).children;
    stack.insert(stack.end(), children.rbegin(), children.rend());
  }
  for (cell_id top : tree.top_cells()) add_free(top);
}

std::vector<cell_id> allocation_state::leaves_of(std::string_view group) const {
  std::vector<cell_id> out;
  auto it = groups_.find(group);
  if (it == groups_.end()) return out;
  for (int r : it->second) out.push_back(by_rank_[r]);
  return out;
}

bool allocation_state::holds(std::string_view group) const { return groups_.count(group) > 0; }

std::vector<cell_id> allocation_state::free_cells(std::string_view chain, int level) const {
  std::vector<cell_id> out;
  auto c = free_lists_.find(chain);
  if (c == free_lists_.end()) return out;
  auto l = c->second.find(level);
  if (l == c->second.end()) return out;
  for (int r : l->second) out.push_back(by_rank_[r]);
  return out;
}

int allocation_state::free_count(std::string_view chain, int level) const {
  auto c = free_lists_.find(chain);
  if (c == free_lists_.end()) return 0;
  auto l = c->second.find(level);
  return l == c->second.end() ? 0 : static_cast<int>(l->second.size());
}

status allocation_state::take(const std::vector<cell_id>& leaves, std::string_view group) {
  if (group.empty()) return error::bad_request("cannot take cells for an unnamed group");
  std::set<cell_id> seen;
  for (cell_id leaf : leaves) {
    if (leaf >= tree_->size() || rank_[leaf] < 0)
      return error::bad_request("cell " + std::to_string(leaf) + " does not exist");
    const auto& c = tree_->at(leaf);
    if (c.level != 1) return error::bad_request("cell '" + c.address + "' is not a leaf cell");
    if (!user_[leaf].empty())
      return error::conflict("leaf cell '" + c.address + "' is already used by group '" +
                             user_[leaf] + "'");
    if (!seen.insert(leaf).second)
      return error::bad_request("leaf cell '" + c.address + "' is listed twice");
  }
  const std::string name(group);
  for (cell_id leaf : leaves) take_leaf(leaf, name);
  return ok;
}

int allocation_state::release(std::string_view group) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return 0;
  const std::set<int> ranks = it->second;
  for (int r : ranks) release_leaf(by_rank_[r]);
  return static_cast<int>(ranks.size());
}

// Taking a leaf splits the maximal free cell A above it: A leaves its free list and the
// siblings of every cell on the path from A down to the leaf (all free, since A was) become
// maximal free cells of their own levels.
void allocation_state::take_leaf(cell_id leaf, const std::string& group) {
  cell_id top_free = leaf;
  for (cell_id up = tree_->at(leaf).parent; up != no_cell && is_free(up); up = tree_->at(up).parent)
    top_free = up;
  remove_free(top_free);
  for (cell_id up = leaf; up != top_free;) {
    const cell_id parent = tree_->at(up).parent;
    for (cell_id sibling : tree_->at(parent).children)
      if (sibling != up) add_free(sibling);
    up = parent;
  }
  for (cell_id up = leaf; up != no_cell; up = tree_->at(up).parent) --free_leaves_[up];
  user_[leaf] = group;
  groups_[group].insert(rank_[leaf]);
}

// Releasing a leaf merges buddies: find the highest cell B that becomes free; before the
// release the leaf was the only used leaf under B, so B's maximal free cells were exactly the
// siblings along the path from B down to the leaf. They leave their lists and B joins its own.
void allocation_state::release_leaf(cell_id leaf) {
  auto group = groups_.find(user_[leaf]);
  group->second.erase(rank_[leaf]);
  if (group->second.empty()) groups_.erase(group);
  user_[leaf].clear();
  for (cell_id up = leaf; up != no_cell; up = tree_->at(up).parent) ++free_leaves_[up];
  cell_id top_free = leaf;
  for (cell_id up = tree_->at(leaf).parent; up != no_cell && is_free(up); up = tree_->at(up).parent)
    top_free = up;
  for (cell_id up = leaf; up != top_free;) {
    const cell_id parent = tree_->at(up).parent;
    for (cell_id sibling : tree_->at(parent).children)
      if (sibling != up) remove_free(sibling);
    up = parent;
  }
  add_free(top_free);
}

void allocation_state::add_free(cell_id id) {
  const auto& c = tree_->at(id);
  free_lists_[c.chain][c.level].insert(rank_[id]);
}

void allocation_state::remove_free(cell_id id) {
  const auto& c = tree_->at(id);
  auto chain = free_lists_.find(c.chain);
  auto level = chain->second.find(c.level);
  level->second.erase(rank_[id]);
  if (level->second.empty()) chain->second.erase(level);
  if (chain->second.empty()) free_lists_.erase(chain);
}

bool allocation_state::operator==(const allocation_state& other) const {
  return tree_ == other.tree_ && free_leaves_ == other.free_leaves_ && user_ == other.user_ &&
         free_lists_ == other.free_lists_ && groups_ == other.groups_;
}

} // namespace kozmo::scheduler
