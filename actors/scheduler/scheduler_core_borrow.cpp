// Borrowing on whole cells (scheduler_core.hpp note 9): what a borrow and a reclaim tell the
// gangs, and when a reclaim falls due. The placement itself is try_place's borrow pass.
#include "actors/scheduler/scheduler_core_impl.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace kozmo::scheduler::detail {
namespace {

// "2 cells (DGX-NODE on node-a, node-b)": what a gang took or gives back of one lender.
std::string cells_phrase(const cell_tree& tree, const std::vector<const vc_cell*>& cells) {
  std::string where;
  for (const vc_cell* c : cells) where += (where.empty() ? "" : ", ") + tree.at(c->bound).address;
  const std::string type = cells.empty() ? std::string() : cells.front()->qualified_type;
  return std::to_string(cells.size()) + (cells.size() == 1 ? " cell" : " cells") + " (" + type + " on " + where + ")";
}

std::string seconds_phrase(std::int64_t ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms";
}

} // namespace

void core_impl::note_borrowed(const group_entry& g) {
  for (int lender : g.lenders) {
    std::vector<const vc_cell*> cells;
    for (const auto& s : g.slots)
      if (s.borrowed && state.vc_cells[s.vc_cell].vc == lender &&
          std::find(cells.begin(), cells.end(), &state.vc_cells[s.vc_cell]) == cells.end())
        cells.push_back(&state.vc_cells[s.vc_cell]);
    notices.push_back({notice_kind::borrowed, g.name,
                       "borrowed " + cells_phrase(model.tree, cells) + " from VC " + model.vcs[lender].name +
                           ": its own quota had no room; VC " + model.vcs[lender].name +
                           " may take them back, and the gang's pods then go within " +
                           seconds_phrase(model.cfg.borrowing.reclaim_timeout_ms),
                       {}});
  }
}

void core_impl::note_reclaim(group_entry& g, std::int64_t now_ms) {
  if (g.vc < 0) return;
  bool any = false;
  for (int v : g.victims) {
    group_entry* q = group(v);
    if (!q || !q->lenders.count(g.vc)) continue;
    any = true;
    std::vector<const vc_cell*> cells;
    for (const auto& s : q->slots)
      if (s.borrowed && state.vc_cells[s.vc_cell].vc == g.vc &&
          std::find(cells.begin(), cells.end(), &state.vc_cells[s.vc_cell]) == cells.end())
        cells.push_back(&state.vc_cells[s.vc_cell]);
    const std::int64_t timeout = model.cfg.borrowing.reclaim_timeout_ms;
    notices.push_back({notice_kind::reclaimed, q->name,
                       "VC " + model.vcs[g.vc].name + " reclaims " + cells_phrase(model.tree, cells) +
                           " lent to VC " + model.vcs[q->vc].name + " for its gang '" + g.name + "'; " +
                           (timeout > 0 ? "the gang's pods are deleted in " + seconds_phrase(timeout) +
                                              " unless they finish first"
                                        : "the gang's pods are deleted now"),
                       {}});
  }
  if (any && model.cfg.borrowing.reclaim_timeout_ms > 0) g.reclaim_due_ms = now_ms + model.cfg.borrowing.reclaim_timeout_ms;
}

std::set<int> core_impl::drf_spare_for(const group_entry& g) const {
  std::set<int> borrowers;
  if (g.vc < 0 || !model.cfg.borrowing.enabled) return borrowers;
  const auto& loans = state.loans_of(g.vc);
  if (loans.size() < 2) return borrowers;
  // Share: GPUs a VC holds in borrowed cells over its quota's GPUs (GPUs are the one resource).
  int top = -1;
  double top_share = -1;
  for (const auto& [b, cells] : loans) {
    borrowers.insert(b);
    const int quota = state.vc_quota(b, "");
    const int held = state.borrowed_used(b);
    const double share = quota > 0 ? static_cast<double>(held) / quota : static_cast<double>(held);
    if (share > top_share) top = b, top_share = share;
  }
  borrowers.erase(top);
  return borrowers;
}

std::int64_t core_impl::next_reclaim_ms() const {
  std::int64_t due = std::numeric_limits<std::int64_t>::max();
  for (const auto& [name, g] : groups)
    if (g.state == group_state::preempting && g.reclaim_due_ms >= 0) due = std::min(due, g.reclaim_due_ms);
  return due;
}

} // namespace kozmo::scheduler::detail

