#include "actors/scheduler/cell_map.hpp"

#include <algorithm>
#include <charconv>

namespace kozmo::scheduler {
namespace {

json::array runs_json(const std::vector<gpu_run>& runs) {
  json::array out;
  for (const auto& r : runs) {
    json::array run{std::string(1, static_cast<char>(r.state)), r.count};
    if (!r.gang.empty()) {
      run.push_back(r.gang);
      run.push_back(r.vc);
    }
    out.push_back(std::move(run));
  }
  return out;
}

// What a reader sees of the VCs and waiting gangs, but the ages (they move every second).
std::string summary_of(const cell_map& m) {
  std::string s;
  for (const auto& v : m.vcs)
    s += v.name + ' ' + std::to_string(v.guaranteed) + ' ' + std::to_string(v.used) + ' ' + std::to_string(v.free) +
         ' ' + std::to_string(v.borrowed) + ' ' + std::to_string(v.lent) + '\n';
  s += '\n';
  const std::size_t listed = std::min(m.waiting.size(), cell_map_journal::listed_waiting);
  for (std::size_t i = 0; i < listed; ++i) {
    const auto& w = m.waiting[i];
    s += w.name + ' ' + std::to_string(w.pods) + ' ' + std::to_string(w.priority) + ' ' + w.reason_kind + ' ' +
         w.reason + '\n';
  }
  return s + std::to_string(m.waiting.size());
}

bool same_layout(const std::vector<map_cell>& a, const std::vector<map_cell>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].address != b[i].address || a[i].parent != b[i].parent || a[i].node != b[i].node) return false;
  return true;
}

} // namespace

cell_map_journal::cell_map_journal(std::int64_t epoch_ms)
    : version_(static_cast<std::uint64_t>(std::max<std::int64_t>(0, epoch_ms)) * 1000) {
  layout_version_ = version_;
}

std::uint64_t cell_map_journal::publish(cell_map map) {
  std::string summary = summary_of(map);
  if (!same_layout(map_.cells, map.cells)) {
    ++version_;
    layout_version_ = version_;
    changed_at_.assign(map.cells.size(), version_);
  } else {
    std::vector<std::size_t> changed;
    for (std::size_t i = 0; i < map.cells.size(); ++i)
      if (map.cells[i].gpus != map_.cells[i].gpus) changed.push_back(i);
    if (!changed.empty() || summary != summary_) ++version_;
    for (std::size_t i : changed) changed_at_[i] = version_;
  }
  map_ = std::move(map);
  summary_ = std::move(summary);
  return version_;
}

json::object cell_map_journal::head(bool full, std::int64_t now_ms) const {
  json::object o;
  o.set("version", static_cast<long long>(version_));
  o.set("full", full);
  json::array vcs;
  for (const auto& v : map_.vcs)
    vcs.push_back(json::object{{"name", v.name},
                               {"guaranteedGPUs", v.guaranteed},
                               {"usedGPUs", v.used},
                               {"freeGPUs", v.free},
                               {"borrowedGPUs", v.borrowed},
                               {"lentGPUs", v.lent}});
  o.set("virtualClusters", std::move(vcs));
  json::array waiting;
  const std::size_t listed = std::min(map_.waiting.size(), listed_waiting);
  for (std::size_t i = 0; i < listed; ++i) {
    const auto& w = map_.waiting[i];
    waiting.push_back(json::object{{"name", w.name},
                                   {"virtualCluster", w.vc},
                                   {"priority", w.priority},
                                   {"pods", w.pods},
                                   {"gpus", w.gpus},
                                   {"reason", w.reason},
                                   {"reasonKind", w.reason_kind},
                                   {"since", static_cast<long long>(w.since_ms)},
                                   {"waitingSeconds", static_cast<long long>(std::max<std::int64_t>(0, now_ms - w.since_ms) / 1000)}});
  }
  o.set("waitingGangs", std::move(waiting));
  o.set("waitingTotal", static_cast<long long>(map_.waiting.size()));
  return o;
}

json::value cell_map_journal::full(std::int64_t now_ms) const {
  json::object o = head(true, now_ms);
  json::array cells;
  for (const auto& c : map_.cells) {
    json::object cell{{"address", c.address}, {"type", c.type}, {"parent", c.parent}};
    if (!c.node.empty() || !c.gpus.empty()) {
      cell.set("node", c.node);
      cell.set("gpus", runs_json(c.gpus));
    }
    cells.push_back(std::move(cell));
  }
  o.set("cells", std::move(cells));
  return o;
}

json::value cell_map_journal::quiet(std::int64_t now_ms) const {
  json::object o = head(false, now_ms);
  o.set("cells", json::array{});
  return o;
}

std::optional<json::value> cell_map_journal::since(std::uint64_t version, std::int64_t now_ms) const {
  if (version < layout_version_ || version > version_) return full(now_ms);
  if (version == version_) return std::nullopt;
  json::object o = head(false, now_ms);
  json::array cells;
  for (std::size_t i = 0; i < map_.cells.size(); ++i)
    if (changed_at_[i] > version)
      cells.push_back(json::object{{"index", static_cast<long long>(i)}, {"gpus", runs_json(map_.cells[i].gpus)}});
  o.set("cells", std::move(cells));
  return json::value(std::move(o));
}

std::optional<std::uint64_t> parse_since(std::string_view path) {
  constexpr std::string_view prefix = "/v1/inspect/cellmap/since/";
  path = path.substr(0, path.find('?'));
  if (path.substr(0, prefix.size()) != prefix) return std::nullopt;
  auto digits = path.substr(prefix.size());
  if (!digits.empty() && digits.back() == '/') digits.remove_suffix(1);
  if (digits.empty() || digits.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

} // namespace kozmo::scheduler
