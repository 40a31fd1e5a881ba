#include "actors/tasks/copilot.hpp"

#include "k8s/model/time.hpp"

#include <algorithm>
#include <cctype>

namespace kozmo::tasks {
namespace {

error required(const std::string& path, const std::string& why) {
  return error::invalid(path + ": Required value: " + why);
}
error invalid(const std::string& path, const std::string& shown, const std::string& why) {
  return error::invalid(path + ": Invalid value: " + shown + ": " + why);
}
std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// A path the wrapper script can carry in single quotes and a mount can take.
bool plain_absolute_path(const std::string& p) {
  if (p.size() < 2 || p[0] != '/' || p.back() == '/')
    return false;
  if (p.find("/../") != std::string::npos || p.find("/./") != std::string::npos || p.find("//") != std::string::npos ||
      p.ends_with("/..") || p.ends_with("/."))
    return false;
  return std::all_of(p.begin(), p.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '-' || c == '_' || c == '.';
  });
}

// An input becomes <inputPath>/<name>: a file name, not one of Kozmo's ('_' first).
bool input_name(const std::string& n) {
  if (n.empty() || n.size() > 255 || n[0] == '_' || n[0] == '.')
    return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// "" when the URI is one the copilot can read and write, else why not.
std::string uri_problem(const std::string& uri) {
  if (uri.starts_with("file:///"))
    return "";
  if (uri.starts_with("s3://")) {
    auto bucket = uri.substr(5, uri.find('/', 5) == std::string::npos ? std::string::npos : uri.find('/', 5) - 5);
    return bucket.empty() ? "an s3:// URI names a bucket: s3://bucket/key" : "";
  }
  return "supported schemes: file:///path, s3://bucket/key";
}

bool uses_s3(const task_spec& spec, bool inputs, bool outputs) {
  if (outputs && spec.output_prefix.starts_with("s3://"))
    return true;
  if (inputs)
    for (const auto& [_, uri] : spec.inputs)
      if (uri.starts_with("s3://"))
        return true;
  return false;
}

void add_s3_args(std::vector<std::string>& args, const copilot_config& cfg) {
  if (!cfg.s3_endpoint.empty()) {
    args.push_back("--s3-endpoint");
    args.push_back(cfg.s3_endpoint);
  }
  args.push_back("--s3-region");
  args.push_back(cfg.s3_region);
  if (!cfg.s3_path_style)
    args.push_back("--s3-virtual-hosted");
}

json::value secret_env(const std::string& var, const std::string& secret, const std::string& key) {
  return json::object{{"name", var},
                      {"valueFrom", json::object{{"secretKeyRef", json::object{{"name", secret}, {"key", key}}}}}};
}

json::value copilot_container(const std::string& name, const copilot_config& cfg, std::vector<std::string> args,
                              const char* volume, const std::string& mount_path, bool s3) {
  json::array arg_list;
  for (auto& a : args)
    arg_list.emplace_back(std::move(a));
  json::value amounts = json::object{{"cpu", cfg.cpu.to_string()}, {"memory", cfg.memory.to_string()}};
  json::value c = json::object{
      {"name", name},
      {"image", cfg.image},
      {"command", json::array{cfg.command}},
      {"args", std::move(arg_list)},
      {"volumeMounts", json::array{json::object{{"name", volume}, {"mountPath", mount_path}}}},
      {"resources", json::object{{"requests", amounts}, {"limits", amounts}}},
  };
  if (s3 && !cfg.s3_credentials_secret.empty())
    c["env"] = json::array{
        secret_env("AWS_ACCESS_KEY_ID", cfg.s3_credentials_secret, cfg.s3_access_key_id_key),
        secret_env("AWS_SECRET_ACCESS_KEY", cfg.s3_credentials_secret, cfg.s3_secret_access_key_key),
    };
  return c;
}

void add_mount(json::value& container, const char* volume, const std::string& path) {
  json::value& mounts = container["volumeMounts"];
  if (!mounts.is_array())
    mounts = json::array{};
  mounts.as_array().push_back(json::object{{"name", volume}, {"mountPath", path}});
}

const k8s::container_state_terminated* terminated_of(const k8s::container_status& s) {
  if (s.state.terminated)
    return &*s.state.terminated;
  return s.last_state.terminated ? &*s.last_state.terminated : nullptr;
}

const k8s::container_status* status_named(const std::vector<k8s::container_status>& list, std::string_view name) {
  for (const auto& s : list)
    if (s.name == name)
      return &s;
  return nullptr;
}

demystify::verdict failure(demystify::outcome what, demystify::fault whose, std::string code, std::string message) {
  demystify::verdict v;
  v.what = what;
  v.whose = whose;
  v.code = std::move(code);
  v.message = std::move(message);
  v.cleanup = true;
  return v;
}

bool killed(const k8s::container_state_terminated& t) {
  return t.reason.find("OOMKilled") != std::string::npos || t.exit_code == 137 || t.exit_code == 247;
}

std::string killed_message(const std::string& container, const k8s::container_state_terminated& t) {
  return "[" + container + "] was killed (exit code " + std::to_string(t.exit_code) + ", reason " +
         (t.reason.empty() ? "none" : t.reason) + ")" +
         (t.reason.find("OOMKilled") != std::string::npos ? ": raise tasks.copilot.memory" : "");
}

} // namespace

status decode_data_loading(const json::value* block, task_spec& out) {
  if (!block || block->is_null())
    return ok;
  if (!block->is_object())
    return invalid("spec.dataLoading", json::dump(*block), "must be an object with enabled, inputPath and outputPath");
  if (const auto* e = block->find("enabled"); e && !e->is_null() && !e->is_bool())
    return invalid("spec.dataLoading.enabled", json::dump(*e), "must be true or false");
  if (!block->get_bool("enabled", true))
    return ok;
  if (out.type != "container")
    return invalid("spec.dataLoading", "{...}", "only type container takes it (type " + out.type + " does not)");
  data_loading_spec dl;
  for (const char* key : {"inputPath", "outputPath"}) {
    const auto* v = block->find(key);
    if (!v || v->is_null())
      continue;
    std::string at = std::string("spec.dataLoading.") + key;
    if (!v->is_string() || !plain_absolute_path(v->as_string()))
      return invalid(at, json::dump(*v), "must be an absolute path of letters, digits, '/', '-', '_' and '.' (no '..')");
    (std::string(key) == "inputPath" ? dl.input_path : dl.output_path) = v->as_string();
  }
  auto inside = [](const std::string& a, const std::string& b) { return a == b || a.starts_with(b + "/"); };
  if (inside(dl.input_path, dl.output_path) || inside(dl.output_path, dl.input_path))
    return invalid("spec.dataLoading.outputPath", quoted(dl.output_path),
                   "must be apart from inputPath " + quoted(dl.input_path) + " (neither inside the other)");
  if (json::strings_of(out.container.find("command")).empty())
    return required("spec.container.command",
                    "dataLoading runs the command under a wrapper that records its exit code for the uploader; "
                    "write the image's entrypoint out as the command");
  for (const auto& [name, uri] : out.inputs) {
    std::string at = "spec.inputs[" + name + "]";
    if (!input_name(name))
      return invalid("spec.inputs", quoted(name),
                     "with dataLoading an input's name is its file name under inputPath: letters, digits, '-', '_' "
                     "and '.', not starting with '_' or '.'");
    if (auto why = uri_problem(uri); !why.empty())
      return invalid(at, quoted(uri), why);
  }
  if (!out.output_prefix.empty())
    if (auto why = uri_problem(out.output_prefix); !why.empty())
      return invalid("spec.outputPrefix", quoted(out.output_prefix), why);
  out.data_loading = std::move(dl);
  return ok;
}

std::optional<std::string> data_volume_size(const json::value& resources) {
  for (const char* side : {"limits", "requests"}) {
    const auto* m = resources.find(side);
    if (!m || !m->is_object())
      continue;
    if (const auto* q = m->find("ephemeral-storage"); q && !json::scalar_text(*q).empty())
      return json::scalar_text(*q);
  }
  return std::nullopt;
}

std::vector<std::string> download_args(const task_spec& spec, const copilot_config& cfg) {
  std::vector<std::string> args = {"copilot", "download", "--input-path", spec.data_loading->input_path};
  for (const auto& [name, uri] : spec.inputs) {
    args.push_back("--input");
    args.push_back(name + "=" + uri);
  }
  if (cfg.max_dataset_size) {
    args.push_back("--max-dataset-size");
    args.push_back(std::to_string(cfg.max_dataset_size->value()));
  }
  if (uses_s3(spec, true, false))
    add_s3_args(args, cfg);
  return args;
}

std::vector<std::string> upload_args(const task_spec& spec, const copilot_config& cfg) {
  std::vector<std::string> args = {"copilot",         "upload",           "--output-path", spec.data_loading->output_path,
                                   "--output-prefix", spec.output_prefix, "--timeout",     k8s::format_go_duration(cfg.timeout)};
  if (uses_s3(spec, false, true))
    add_s3_args(args, cfg);
  return args;
}

std::vector<std::string> wrapped_command(const std::vector<std::string>& command_and_args, const std::string& output_path) {
  // The path is a plain absolute path (decode_data_loading): safe inside single quotes.
  std::string marker = "'" + output_path + "/" + exit_marker;
  std::string script = "\"$@\"; rc=$?; echo \"$rc\" > " + marker + ".tmp' && mv " + marker + ".tmp' " + marker +
                       "'; exit \"$rc\"";
  std::vector<std::string> out = {"/bin/sh", "-c", script, "kozmo-wrapped"};
  out.insert(out.end(), command_and_args.begin(), command_and_args.end());
  return out;
}

status add_copilot(json::value& pod_spec, const task_spec& spec, const copilot_config& cfg) {
  if (!spec.data_loading)
    return ok;
  const auto& dl = *spec.data_loading;
  json::value* containers = pod_spec.find("containers");
  json::value* primary = nullptr;
  if (containers && containers->is_array())
    for (auto& c : containers->as_array())
      if (c.get_string("name") == spec.primary_container)
        primary = &c;
  if (!primary)
    return error::invalid("spec.container: the pod has no container " + quoted(spec.primary_container));

  bool upload = !spec.output_prefix.empty();
  bool download = !spec.inputs.empty();
  if (upload) {
    std::vector<std::string> words = json::strings_of(primary->find("command"));
    if (words.empty())
      return required("spec.container.command", "dataLoading wraps the command");
    for (auto& a : json::strings_of(primary->find("args")))
      words.push_back(std::move(a));
    json::array cmd;
    for (auto& w : wrapped_command(words, dl.output_path))
      cmd.emplace_back(std::move(w));
    (*primary)["command"] = std::move(cmd);
    primary->as_object().erase("args");
  }
  add_mount(*primary, inputs_volume, dl.input_path);
  add_mount(*primary, outputs_volume, dl.output_path);

  static const json::value none;
  const json::value* res = primary->find("resources");
  auto size = data_volume_size(res ? *res : none);
  json::value& volumes = pod_spec["volumes"];
  if (!volumes.is_array())
    volumes = json::array{};
  for (const char* name : {inputs_volume, outputs_volume}) {
    json::value empty_dir = json::object{};
    if (size)
      empty_dir["sizeLimit"] = *size;
    volumes.as_array().push_back(json::object{{"name", name}, {"emptyDir", std::move(empty_dir)}});
  }

  if (download) {
    json::value& inits = pod_spec["initContainers"];
    if (!inits.is_array())
      inits = json::array{};
    inits.as_array().push_back(copilot_container(copilot_downloader, cfg, download_args(spec, cfg), inputs_volume,
                                                 dl.input_path, uses_s3(spec, true, false)));
  }
  // Found again: adding volumes and init containers may have moved the pod spec's members.
  if (upload)
    pod_spec["containers"].as_array().push_back(copilot_container(copilot_uploader, cfg, upload_args(spec, cfg), outputs_volume,
                                                       dl.output_path, uses_s3(spec, false, true)));
  return ok;
}

std::string format_failure(const copilot_failure& f) {
  return f.code + (f.user ? " (user error)" : "") + ": " + f.message;
}

copilot_failure parse_failure(std::string_view msg, std::string_view fallback_code) {
  copilot_failure f;
  std::size_t i = 0;
  while (i < msg.size() && std::isalnum(static_cast<unsigned char>(msg[i])))
    ++i;
  std::string_view rest = msg.substr(i);
  bool user = rest.starts_with(" (user error)");
  if (user)
    rest.remove_prefix(13);
  if (i == 0 || !std::isupper(static_cast<unsigned char>(msg[0])) || !rest.starts_with(": ")) {
    f.code = std::string(fallback_code);
    f.message = msg.empty() ? "no termination message" : std::string(msg);
    return f;
  }
  f.code = std::string(msg.substr(0, i));
  f.user = user;
  f.message = std::string(rest.substr(2));
  return f;
}

std::string error_file_message(std::string_view text, std::size_t total_size, std::size_t limit,
                               const std::string& whole_at) {
  if (text.size() <= limit && total_size <= limit)
    return std::string(text);
  std::size_t cut = std::min(limit, text.size());
  // Back to the start of a UTF-8 sequence: continuation bytes are 10xxxxxx.
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;
  std::string out(text.substr(0, cut));
  out += "\n... (truncated: the first " + std::to_string(cut) + " of " + std::to_string(total_size) + " bytes";
  out += whole_at.empty() ? ")" : "; the whole text is at " + whole_at + ")";
  return out;
}

std::optional<demystify::verdict> copilot_verdict(const k8s::pod& pod, std::string_view primary,
                                                  demystify::time_point now) {
  using demystify::fault;
  using demystify::outcome;
  // A pod still running (the uploader waits, or the primary does) is deleted with the attempt;
  // a finished one stays for `kubectl logs`.
  bool finished = pod.status.phase == "Failed" || pod.status.phase == "Succeeded";
  auto failure = [finished](outcome what, fault whose, std::string code, std::string message) {
    auto v = tasks::failure(what, whose, std::move(code), std::move(message));
    v.cleanup = !finished;
    return v;
  };
  if (const auto* s = status_named(pod.status.init_container_statuses, copilot_downloader)) {
    const auto* t = terminated_of(*s);
    if (t && t->exit_code != 0) {
      if (killed(*t))
        return failure(outcome::retryable_failure, fault::system, input_download_failed, killed_message(s->name, *t));
      auto f = parse_failure(t->message, input_download_failed);
      std::string message = "[" + s->name + "] " + f.message;
      if (f.user)
        return failure(outcome::permanent_failure, fault::user, f.code, message);
      return failure(outcome::retryable_failure, fault::system, f.code, message);
    }
  }
  const auto* uploader = status_named(pod.status.container_statuses, copilot_uploader);
  if (uploader) {
    const auto* t = uploader->state.terminated ? &*uploader->state.terminated : nullptr;
    if (t && t->exit_code != 0) {
      if (killed(*t))
        return failure(outcome::retryable_failure, fault::system, output_upload_failed, killed_message(uploader->name, *t));
      auto f = parse_failure(t->message, output_upload_failed);
      if (f.code == user_error || f.user)
        return failure(outcome::retryable_failure, fault::user, f.code, f.message);
      return failure(outcome::retryable_failure, fault::system, f.code, "[" + uploader->name + "] " + f.message);
    }
  }
  if (finished)
    return std::nullopt;
  const auto* main = status_named(pod.status.container_statuses, primary);
  if (!main || !main->state.terminated || main->state.terminated->exit_code == 0)
    return std::nullopt;
  bool uploader_running = uploader && !uploader->state.terminated;
  if (uploader_running && main->state.terminated->finished_at) {
    auto deadline = *main->state.terminated->finished_at + uploader_grace;
    if (now < deadline) {
      demystify::verdict wait;
      wait.what = outcome::running;
      wait.code = "PrimaryFinished";
      wait.message = "container " + std::string(primary) + " ended; the uploader reads its error file";
      wait.deadline = deadline;
      return wait;
    }
  }
  auto v = demystify::primary_container(pod, primary);
  v.cleanup = true;
  return v;
}

} // namespace kozmo::tasks
