#include "runtime/status_view.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <tuple>

namespace kozmo::runtime {
namespace {

expected<std::int64_t> int_field(const json::value& obj, std::string_view key, std::string_view where) {
  const json::value* v = obj.find(key);
  if (!v || v->is_null())
    return std::int64_t{0};
  if (v->is_int())
    return v->as_int();
  if (v->is_double())
    return static_cast<std::int64_t>(v->as_double());
  return error::bad_request("cell map: " + std::string(where) + "." + std::string(key) + " is not a number");
}

expected<std::string> string_field(const json::value& obj, std::string_view key, std::string_view where) {
  const json::value* v = obj.find(key);
  if (!v || v->is_null())
    return std::string{};
  if (!v->is_string())
    return error::bad_request("cell map: " + std::string(where) + "." + std::string(key) + " is not a string");
  return v->as_string();
}

// The list under `key`, each item an object; an empty list when absent.
expected<const json::array*> object_list(const json::value& doc, std::string_view key) {
  static const json::array none;
  const json::value* v = doc.find(key);
  if (!v || v->is_null())
    return &none;
  if (!v->is_array())
    return error::bad_request("cell map: " + std::string(key) + " is not a list");
  for (const auto& item : v->as_array())
    if (!item.is_object())
      return error::bad_request("cell map: an item of " + std::string(key) + " is not an object");
  return &v->as_array();
}

// Characters a terminal shows: UTF-8 continuation bytes take no column.
std::size_t columns_of(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// The first `cols` - 1 characters and "…" when `s` is wider than `cols`.
std::string cut_to(const std::string& s, std::size_t cols) {
  if (columns_of(s) <= cols)
    return s;
  std::size_t keep = cols == 0 ? 0 : cols - 1, seen = 0, i = 0;
  for (; i < s.size(); ++i) {
    bool starts_char = (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80;
    if (starts_char && seen++ == keep)
      break;
  }
  std::string kept = s.substr(0, i);
  while (!kept.empty() && kept.back() == ' ')
    kept.pop_back();
  return kept + "\u2026";
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil-days method).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool digits(std::string_view s, std::size_t at, std::size_t n, int& out) {
  if (at + n > s.size())
    return false;
  out = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i])))
      return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

} // namespace

expected<cellmap_view> parse_cellmap(const json::value& doc) {
  if (!doc.is_object())
    return error::bad_request("cell map: the answer is not a JSON object");
  cellmap_view view;
  auto version = int_field(doc, "version", "cellmap");
  if (!version)
    return version.err();
  view.version = *version;
  auto vcs = object_list(doc, "virtualClusters");
  if (!vcs)
    return vcs.err();
  for (const auto& item : **vcs) {
    vc_usage vc;
    auto name = string_field(item, "name", "virtualClusters[]");
    if (!name)
      return name.err();
    vc.name = *name;
    for (auto [key, out] : {std::pair{"guaranteedGPUs", &vc.guaranteed_gpus}, std::pair{"usedGPUs", &vc.used_gpus},
                            std::pair{"freeGPUs", &vc.free_gpus}, std::pair{"borrowedGPUs", &vc.borrowed_gpus}}) {
      auto n = int_field(item, key, "virtualClusters[" + vc.name + "]");
      if (!n)
        return n.err();
      *out = *n;
    }
    view.virtual_clusters.push_back(std::move(vc));
  }
  auto gangs = object_list(doc, "waitingGangs");
  if (!gangs)
    return gangs.err();
  for (const auto& item : **gangs) {
    waiting_gang g;
    for (auto [key, out] : {std::pair{"name", &g.name}, std::pair{"virtualCluster", &g.virtual_cluster},
                            std::pair{"reason", &g.reason}, std::pair{"reasonKind", &g.reason_kind}}) {
      auto s = string_field(item, key, "waitingGangs[]");
      if (!s)
        return s.err();
      *out = std::move(*s);
    }
    for (auto [key, out] : {std::pair{"priority", &g.priority}, std::pair{"pods", &g.pods}, std::pair{"gpus", &g.gpus},
                            std::pair{"waitingSeconds", &g.waiting_seconds}}) {
      auto n = int_field(item, key, "waitingGangs[" + g.name + "]");
      if (!n)
        return n.err();
      *out = *n;
    }
    view.waiting_gangs.push_back(std::move(g));
  }
  auto total = int_field(doc, "waitingTotal", "cellmap");
  if (!total)
    return total.err();
  view.waiting_total = std::max<std::int64_t>(*total, static_cast<std::int64_t>(view.waiting_gangs.size()));
  return view;
}

std::string job_phase(const json::value& job) {
  std::string phase = "Pending";
  const json::value* conditions = job.at_path({"status", "conditions"});
  if (!conditions || !conditions->is_array())
    return phase;
  for (const auto& c : conditions->as_array())
    if (c.is_object() && c.get_string("status") == "True" && !c.get_string("type").empty())
      phase = c.get_string("type");
  return phase;
}

std::string task_phase(const json::value& task) {
  const json::value* phase = task.at_path({"status", "phase"});
  return phase && phase->is_string() && !phase->as_string().empty() ? phase->as_string() : "Pending";
}

bool finished_phase(std::string_view phase) {
  return phase == "Succeeded" || phase == "Failed" || phase == "Aborted" || phase == "Complete"; // TrainJob's
}

work_item work_item_of(std::string_view kind, const json::value& object, std::int64_t now_unix) {
  work_item w;
  w.kind = std::string(kind);
  w.ns = object.at_path({"metadata", "namespace"}) ? json::scalar_text(*object.at_path({"metadata", "namespace"})) : "";
  w.name = object.at_path({"metadata", "name"}) ? json::scalar_text(*object.at_path({"metadata", "name"})) : "";
  w.phase = kind == "TaskExecution" ? task_phase(object) : job_phase(object);
  if (const json::value* created = object.at_path({"metadata", "creationTimestamp"}); created && created->is_string())
    if (auto t = parse_rfc3339_seconds(created->as_string()))
      w.age_seconds = std::max<std::int64_t>(0, now_unix - *t);
  return w;
}

std::optional<std::int64_t> parse_rfc3339_seconds(std::string_view s) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(s, 0, 4, year) || s.size() < 20 || s[4] != '-' || !digits(s, 5, 2, month) || s[7] != '-' ||
      !digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't') || !digits(s, 11, 2, hour) || s[13] != ':' ||
      !digits(s, 14, 2, minute) || s[16] != ':' || !digits(s, 17, 2, second))
    return std::nullopt;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
    return std::nullopt;
  std::size_t i = 19;
  if (s[i] == '.') {
    ++i;
    std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
      ++i;
    if (i == start)
      return std::nullopt;
  }
  std::int64_t offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh = 0, om = 0;
    if (!digits(s, i + 1, 2, oh) || i + 3 >= s.size() || s[i + 3] != ':' || !digits(s, i + 4, 2, om))
      return std::nullopt;
    offset = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size())
    return std::nullopt;
  return days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
         minute * 60 + second - offset;
}

std::string human_duration(std::int64_t s) {
  auto n = [](std::int64_t v) { return std::to_string(v); };
  if (s < 0)
    return "0s";
  if (s < 120)
    return n(s) + "s";
  std::int64_t minutes = s / 60, hours = s / 3600, days = s / 86400;
  if (minutes < 10)
    return n(minutes) + "m" + (s % 60 ? n(s % 60) + "s" : "");
  if (minutes < 180)
    return n(minutes) + "m";
  if (hours < 8)
    return n(hours) + "h" + (minutes % 60 ? n(minutes % 60) + "m" : "");
  if (hours < 48)
    return n(hours) + "h";
  if (hours < 24 * 8)
    return n(days) + "d" + (hours % 24 ? n(hours % 24) + "h" : "");
  if (days < 365 * 2)
    return n(days) + "d";
  if (days < 365 * 8)
    return n(days / 365) + "y" + (days % 365 ? n(days % 365) + "d" : "");
  return n(days / 365) + "y";
}

std::string render_table(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows,
                         std::size_t width) {
  const std::size_t gap = 3;
  std::vector<std::size_t> widths(headers.size(), 0);
  auto measure = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], columns_of(row[c]));
  };
  measure(headers);
  for (const auto& row : rows)
    measure(row);
  std::size_t before_last = 0;
  for (std::size_t c = 0; c + 1 < widths.size(); ++c)
    before_last += widths[c] + gap;
  std::size_t last_room = width == 0 ? std::string::npos : std::max<std::size_t>(10, width > before_last ? width - before_last : 0);
  std::string out;
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      if (c + 1 == widths.size()) {
        text += last_room == std::string::npos ? cell : cut_to(cell, last_room);
        break;
      }
      text += cell + std::string(widths[c] + gap - columns_of(cell), ' ');
    }
    while (!text.empty() && text.back() == ' ')
      text.pop_back();
    out += text + "\n";
  };
  line(headers);
  for (const auto& row : rows)
    line(row);
  return out;
}

std::string render_text(const status_snapshot& snap, const render_options& opts) {
  const std::size_t width = opts.truncate && !opts.wide ? opts.width : 0;
  auto n = [](std::int64_t v) { return std::to_string(v); };
  const std::string unread = "(could not be read)\n";
  std::string out = "VIRTUAL CLUSTERS\n";
  if (!snap.cellmap_read) {
    out += unread;
  } else if (snap.cellmap.virtual_clusters.empty()) {
    out += "(none)\n";
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto& vc : snap.cellmap.virtual_clusters)
      rows.push_back({vc.name, n(vc.guaranteed_gpus), n(vc.used_gpus), n(vc.free_gpus), n(vc.borrowed_gpus)});
    out += render_table({"NAME", "GUARANTEED", "USED", "FREE", "BORROWED"}, rows, width);
  }

  out += "\nWAITING GANGS\n";
  if (!snap.cellmap_read) {
    out += unread;
  } else if (snap.cellmap.waiting_gangs.empty()) {
    out += "(none)\n";
  } else {
    std::vector<std::string> headers{"NAME", "VC", "PRIORITY", "PODS", "GPUS", "WAITING"};
    if (opts.wide)
      headers.push_back("KIND");
    headers.push_back("REASON");
    std::vector<std::vector<std::string>> rows;
    for (const auto& g : snap.cellmap.waiting_gangs) {
      std::vector<std::string> row{g.name, g.virtual_cluster, n(g.priority), n(g.pods), n(g.gpus),
                                   human_duration(g.waiting_seconds)};
      if (opts.wide)
        row.push_back(g.reason_kind);
      row.push_back(g.reason);
      rows.push_back(std::move(row));
    }
    out += render_table(headers, rows, width);
    if (auto more = snap.cellmap.waiting_total - static_cast<std::int64_t>(rows.size()); more > 0)
      out += "(" + n(more) + " more waiting, not listed by the scheduler)\n";
  }

  out += "\nJOBS AND TASKS\n";
  if (!snap.work_read)
    return out + unread;
  if (snap.work.empty())
    return out + "(none)\n";
  std::vector<work_item> work = snap.work;
  std::stable_sort(work.begin(), work.end(), [](const work_item& a, const work_item& b) {
    return std::tie(a.ns, a.kind, a.name) < std::tie(b.ns, b.kind, b.name);
  });
  std::vector<std::string> headers{"KIND", "NAME", "PHASE", "AGE"};
  if (opts.namespace_column)
    headers.insert(headers.begin(), "NAMESPACE");
  std::vector<std::vector<std::string>> rows;
  for (const auto& w : work) {
    std::vector<std::string> row{w.kind, w.name, w.phase, w.age_seconds < 0 ? "<unknown>" : human_duration(w.age_seconds)};
    if (opts.namespace_column)
      row.insert(row.begin(), w.ns);
    rows.push_back(std::move(row));
  }
  return out + render_table(headers, rows, width);
}

json::value snapshot_document(const status_snapshot& snap) {
  json::array vcs, gangs, work, errors;
  for (const auto& vc : snap.cellmap.virtual_clusters)
    vcs.push_back(json::object{{"name", vc.name},
                               {"guaranteedGPUs", vc.guaranteed_gpus},
                               {"usedGPUs", vc.used_gpus},
                               {"freeGPUs", vc.free_gpus},
                               {"borrowedGPUs", vc.borrowed_gpus}});
  for (const auto& g : snap.cellmap.waiting_gangs)
    gangs.push_back(json::object{{"name", g.name},
                                 {"virtualCluster", g.virtual_cluster},
                                 {"priority", g.priority},
                                 {"pods", g.pods},
                                 {"gpus", g.gpus},
                                 {"waitingSeconds", g.waiting_seconds},
                                 {"reasonKind", g.reason_kind},
                                 {"reason", g.reason}});
  for (const auto& w : snap.work) {
    json::object item{{"kind", w.kind}, {"namespace", w.ns}, {"name", w.name}, {"phase", w.phase}};
    if (w.age_seconds >= 0)
      item.set("ageSeconds", w.age_seconds);
    work.push_back(std::move(item));
  }
  json::object doc{{"virtualClusters", std::move(vcs)},
                   {"waitingGangs", std::move(gangs)},
                   {"waitingTotal", snap.cellmap.waiting_total},
                   {"jobsAndTasks", std::move(work)}};
  for (const auto& e : snap.errors)
    errors.push_back(e);
  if (!errors.empty())
    doc.set("errors", std::move(errors));
  return doc;
}

} // namespace kozmo::runtime
