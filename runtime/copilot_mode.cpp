#include "runtime/copilot_mode.hpp"

#include "actors/tasks/copilot.hpp"
#include "k8s/json/value.hpp"
#include "runtime/object_store.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

namespace kozmo::runtime {
namespace fs = std::filesystem;
namespace {

using tasks::copilot_failure;

// The kubelet keeps 4096 bytes of a termination message; the note and the code fit in the rest.
constexpr std::size_t termination_message_room = 3500;
constexpr auto poll_interval = std::chrono::milliseconds(100);

struct failure {
  copilot_failure f;
};

failure fail(const char* code, std::string message, bool user = false) { return {copilot_failure{code, user, std::move(message)}}; }

std::string env_or(const std::string& flag, const char* var) {
  if (!flag.empty())
    return flag;
  const char* v = std::getenv(var);
  return v ? v : "";
}

s3_settings s3_of(const copilot_options& o) {
  s3_settings s;
  s.endpoint = o.s3_endpoint;
  s.region = o.s3_region;
  s.path_style = !o.s3_virtual_hosted;
  s.access_key_id = env_or(o.s3_access_key_id, "AWS_ACCESS_KEY_ID");
  s.secret_access_key = env_or(o.s3_secret_access_key, "AWS_SECRET_ACCESS_KEY");
  s.session_token = env_or("", "AWS_SESSION_TOKEN");
  s.part_size = static_cast<std::uint64_t>(o.s3_part_size);
  s.list_page = o.s3_list_page;
  return s;
}

// Where Kubernetes reads a container's termination message: the flag, else the default path
// when it exists (the kubelet creates it; outside a pod nothing is written to /dev).
void write_termination_log(const copilot_options& o, const std::string& text) {
  std::string path = o.termination_log;
  if (path.empty()) {
    std::error_code ec;
    if (!fs::exists("/dev/termination-log", ec))
      return;
    path = "/dev/termination-log";
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out)
    spdlog::warn("copilot: cannot write the termination log path={}", path);
}

int report(const copilot_options& o, const failure& f) {
  std::string text = tasks::format_failure(f.f);
  std::cerr << "kozmo copilot: " << text << "\n";
  write_termination_log(o, text);
  return 1;
}

std::string human_bytes(std::uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  std::ostringstream s;
  s.precision(u == 0 ? 0 : 1);
  s << std::fixed << v << " " << units[u];
  return s.str();
}

// --- download ------------------------------------------------------------------------------

struct planned_input {
  std::string name;
  std::string uri;
  bool directory = false;
  std::vector<object_entry> objects; // directory: every object; file: one, relative ""
  std::uint64_t size = 0;
};

expected<planned_input> plan_input(object_store& store, const std::string& name, const std::string& uri) {
  planned_input p{name, uri};
  if (!uri.ends_with("/")) {
    auto size = store.head(uri);
    if (!size)
      return size.err();
    if (*size) {
      p.objects.push_back({uri, "", **size});
      p.size = **size;
      return p;
    }
  }
  auto listed = store.list(uri);
  if (!listed && listed.err().code != 404)
    return listed.err();
  if (!listed || listed->empty())
    return error::not_found("input \"" + name + "\" " + uri + ": no such object, and no objects under it as a prefix");
  p.directory = true;
  for (auto& e : *listed) {
    fs::path rel(e.relative);
    for (const auto& part : rel)
      if (part == ".." || part == ".")
        return error{"input \"" + name + "\" " + uri + ": object " + e.uri + " has a path that leaves the input"};
    p.size += e.size;
    p.objects.push_back(std::move(e));
  }
  return p;
}

int download(const copilot_options& o) {
  s3_settings s3 = s3_of(o);
  std::vector<planned_input> plan;
  std::vector<std::unique_ptr<object_store>> stores;
  std::uint64_t total = 0;
  // Plan every input first: a missing input or a dataset over the cap fails before a byte moves.
  for (const auto& [name, uri] : o.inputs) {
    auto store = open_store(uri, s3);
    if (!store)
      return report(o, fail(tasks::input_download_failed, "input \"" + name + "\": " + store.err().message, true));
    auto p = plan_input(**store, name, uri);
    if (!p)
      return report(o, fail(tasks::input_download_failed, p.err().message, p.err().code == 404));
    total += p->size;
    plan.push_back(std::move(*p));
    stores.push_back(std::move(*store));
  }
  if (o.max_dataset_size > 0 && total > static_cast<std::uint64_t>(o.max_dataset_size))
    return report(o, fail(tasks::input_download_failed,
                          "the inputs total " + std::to_string(total) + " bytes (" + human_bytes(total) +
                              "), over the cap of " + std::to_string(o.max_dataset_size) + " bytes (" +
                              human_bytes(static_cast<std::uint64_t>(o.max_dataset_size)) +
                              "; tasks.copilot.max-dataset-size)",
                          true));

  json::value meta = json::object{};
  auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const auto& p = plan[i];
    json::value entry = json::object{{"uri", p.uri}, {"kind", p.directory ? "directory" : "file"},
                                      {"size", static_cast<std::int64_t>(p.size)}};
    json::array files;
    for (const auto& obj : p.objects) {
      std::string dest = (fs::path(o.input_path) / p.name / obj.relative).lexically_normal().string();
      if (!p.directory)
        dest = (fs::path(o.input_path) / p.name).string();
      auto got = stores[i]->get(obj.uri, dest, true);
      if (!got)
        return report(o, fail(tasks::input_download_failed, "input \"" + p.name + "\" " + obj.uri + ": " + got.err().message,
                              got.err().code == 404));
      spdlog::info("copilot: downloaded input={} uri={} path={} bytes={}", p.name, obj.uri, dest, got->bytes);
      if (!p.directory)
        entry["sha256"] = got->sha256;
      else
        files.push_back(json::object{{"path", obj.relative},
                                     {"size", static_cast<std::int64_t>(got->bytes)},
                                     {"sha256", got->sha256}});
    }
    if (p.directory)
      entry["files"] = std::move(files);
    meta[p.name] = std::move(entry);
  }
  std::error_code ec;
  fs::create_directories(o.input_path, ec);
  std::ofstream out(fs::path(o.input_path) / tasks::inputs_metadata, std::ios::trunc);
  out << json::dump_pretty(json::object{{"inputs", std::move(meta)}}) << "\n";
  if (!out)
    return report(o, fail(tasks::input_download_failed, "cannot write " + (fs::path(o.input_path) / tasks::inputs_metadata).string()));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("copilot: inputs ready count={} bytes={} seconds={:.3f}", plan.size(), total, secs);
  return 0;
}

// --- upload --------------------------------------------------------------------------------

// Waits for the wrapper's marker; nullopt when the timeout passes first.
std::optional<int> wait_for_exit(const copilot_options& o) {
  fs::path marker = fs::path(o.output_path) / tasks::exit_marker;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_seconds);
  for (;;) {
    std::ifstream in(marker);
    int code = 0;
    if (in && (in >> code))
      return code;
    if (std::chrono::steady_clock::now() >= deadline)
      return std::nullopt;
    std::this_thread::sleep_for(poll_interval);
  }
}

int upload(const copilot_options& o) {
  spdlog::info("copilot: waiting for the task's container marker={}/{} timeout_s={}", o.output_path, tasks::exit_marker,
               o.timeout_seconds);
  auto code = wait_for_exit(o);
  if (!code)
    return report(o, fail(tasks::output_upload_failed,
                          "the task's container did not finish within " + std::to_string(o.timeout_seconds) +
                              " s (no " + o.output_path + "/" + tasks::exit_marker + "; tasks.copilot.timeout)"));
  auto store = open_store(o.output_prefix, s3_of(o));
  if (!store)
    return report(o, fail(tasks::output_upload_failed, store.err().message, true));

  fs::path error_path = fs::path(o.output_path) / tasks::error_file;
  std::error_code ec;
  if (fs::is_regular_file(error_path, ec)) {
    auto size = static_cast<std::size_t>(fs::file_size(error_path, ec));
    std::ifstream in(error_path, std::ios::binary);
    std::string text(std::min(size, tasks::max_error_file_bytes), '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    std::cerr << text << (text.empty() || text.back() == '\n' ? "" : "\n");
    // The whole text (up to 1 MiB) next to the outputs: the status carries what the kubelet keeps.
    std::string whole_at = join_uri(o.output_prefix, tasks::error_file);
    if (auto st = (*store)->put(error_path.string(), whole_at); !st) {
      spdlog::warn("copilot: cannot store the error file uri={} error=\"{}\"", whole_at, st.err().message);
      whole_at.clear();
    }
    return report(o, fail(tasks::user_error,
                          tasks::error_file_message(text, size, termination_message_room, whole_at)));
  }
  if (*code != 0) {
    spdlog::info("copilot: the task's container exited with code={}: its outputs are not uploaded", *code);
    return 0;
  }

  // The outputs are always local files: list them with the file store whatever the prefix is.
  auto local = open_store("file:///", {});
  auto files = (*local)->list("file://" + fs::absolute(o.output_path).lexically_normal().string());
  if (!files)
    return report(o, fail(tasks::output_upload_failed, files.err().message));
  json::array listed;
  std::uint64_t total = 0;
  auto start = std::chrono::steady_clock::now();
  for (const auto& f : *files) {
    if (f.relative == tasks::exit_marker || f.relative.ends_with(".kozmo-tmp") ||
        f.relative == std::string(tasks::exit_marker) + ".tmp")
      continue;
    std::string dest = join_uri(o.output_prefix, f.relative);
    if (auto st = (*store)->put(f.uri.substr(7), dest); !st)
      return report(o, fail(tasks::output_upload_failed, "upload " + f.relative + " to " + dest + ": " + st.err().message));
    spdlog::debug("copilot: uploaded path={} uri={} bytes={}", f.relative, dest, f.size);
    listed.push_back(json::object{{"path", f.relative}, {"uri", dest}, {"size", static_cast<std::int64_t>(f.size)}});
    total += f.size;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::size_t count = listed.size();
  // The metadata file last: its presence says the outputs are complete.
  fs::path meta = fs::temp_directory_path() / ("kozmo-outputs-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(meta, std::ios::trunc);
    out << json::dump_pretty(json::object{{"exitCode", static_cast<std::int64_t>(*code)}, {"outputs", std::move(listed)}})
        << "\n";
  }
  auto st = (*store)->put(meta.string(), join_uri(o.output_prefix, tasks::outputs_metadata));
  fs::remove(meta, ec);
  if (!st)
    return report(o, fail(tasks::output_upload_failed, "upload " + std::string(tasks::outputs_metadata) + ": " + st.err().message));
  spdlog::info("copilot: outputs uploaded count={} bytes={} seconds={:.3f} prefix={}", count, total, secs, o.output_prefix);
  return 0;
}

} // namespace

int run_copilot(const copilot_options& opts) {
  // Plain spdlog to stderr (logging.cpp lives with the engine; a copilot needs none of it).
  auto level = spdlog::level::from_str(opts.log_level);
  if (level == spdlog::level::off && opts.log_level != "off") {
    std::cerr << "kozmo: --log-level: \"" << opts.log_level << "\" is not one of trace, debug, info, warn, error\n";
    return 2;
  }
  spdlog::set_level(level);
  return opts.upload ? upload(opts) : download(opts);
}

} // namespace kozmo::runtime
