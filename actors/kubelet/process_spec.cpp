#include "actors/kubelet/process_spec.hpp"

#include "actors/kubelet/image_reference.hpp"
#include "actors/kubelet/mpi_delivery.hpp"

#include "k8s/client/config.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace kozmo::kubelet {
namespace {

// command and args: each member as text (a number written unquoted in YAML is its digits).
std::vector<std::string> scalar_strings(const json::value* v) {
  std::vector<std::string> out;
  if (!v || !v->is_array())
    return out;
  for (const auto& s : v->as_array())
    out.push_back(json::scalar_text(s));
  return out;
}

bool flag_of(const json::value& v, std::string_view key) {
  const auto* f = v.find(key);
  return f && f->is_bool() && f->as_bool();
}

std::optional<int> int_of(const json::value& v, std::string_view key) {
  const auto* f = v.find(key);
  if (!f || !f->is_int())
    return std::nullopt;
  return static_cast<int>(f->as_int());
}

env_entry parse_env(const json::value& e) {
  env_entry out;
  out.name = e.get_string("name");
  const auto* from = e.find("valueFrom");
  if (!from || !from->is_object()) {
    out.source.value = e.get_string("value");
    return out;
  }
  auto ref = [&](const char* key, env_source::kind k) {
    const auto* r = from->find(key);
    if (!r || !r->is_object())
      return false;
    out.source.what = k;
    out.source.object = r->get_string("name");
    out.source.key = r->get_string(k == env_source::kind::field ? "fieldPath" : "key");
    out.source.optional = flag_of(*r, "optional");
    return true;
  };
  if (ref("secretKeyRef", env_source::kind::secret_key) || ref("configMapKeyRef", env_source::kind::config_map_key) ||
      ref("fieldRef", env_source::kind::field))
    return out;
  // resourceFieldRef and anything newer: not resolved, the variable is empty.
  return out;
}

container_run_spec parse_container(const json::value& c, bool init) {
  container_run_spec out;
  out.name = c.get_string("name");
  out.image = c.get_string("image");
  out.init = init;
  out.command = scalar_strings(c.find("command"));
  out.args = scalar_strings(c.find("args"));
  out.working_dir = c.get_string("workingDir");
  if (const auto* env = c.find("env"); env && env->is_array())
    for (const auto& e : env->as_array())
      out.env.push_back(parse_env(e));
  if (const auto* from = c.find("envFrom"); from && from->is_array())
    for (const auto& f : from->as_array()) {
      for (auto [key, secret] : {std::pair{"secretRef", true}, std::pair{"configMapRef", false}})
        if (const auto* r = f.find(key); r && r->is_object())
          out.env_from.push_back({secret, r->get_string("name"), f.get_string("prefix"), flag_of(*r, "optional")});
    }
  if (const auto* mounts = c.find("volumeMounts"); mounts && mounts->is_array())
    for (const auto& m : mounts->as_array())
      out.mounts.push_back({m.get_string("name"), m.get_string("mountPath"), m.get_string("subPath"),
                            flag_of(m, "readOnly")});
  if (auto p = c.get_string("terminationMessagePath"); !p.empty())
    out.termination_message_path = p;
  out.fallback_to_logs_on_error = c.get_string("terminationMessagePolicy") == "FallbackToLogsOnError";
  if (auto message = invalid_image_message(out.image)) { // checked before a pull, as a kubelet does
    out.blocked_reason = "InvalidImageName";
    out.blocked_message = std::move(*message);
  } else if (is_mpi_kubectl_delivery(out)) { // a step the runtime does itself (mpi_delivery.hpp)
    out.command = mpi_kubectl_delivery_command();
  } else if (out.command.empty()) {
    out.blocked_reason = "CreateContainerError";
    out.blocked_message = "the process runtime needs a command: container \"" + out.name +
                          "\" has none, and the image (" + out.image +
                          ") is not pulled, so there is no entrypoint to run";
  }
  return out;
}

volume_spec parse_volume(const json::value& v) {
  volume_spec out;
  out.name = v.get_string("name");
  auto items_of = [&](const json::value& src) {
    if (const auto* items = src.find("items"); items && items->is_array())
      for (const auto& i : items->as_array())
        out.items.push_back({i.get_string("key"), i.get_string("path"), int_of(i, "mode")});
    out.default_mode = int_of(src, "defaultMode").value_or(0644);
    out.optional = flag_of(src, "optional");
  };
  if (v.find("emptyDir")) {
    out.what = volume_spec::kind::empty_dir;
  } else if (const auto* s = v.find("secret"); s && s->is_object()) {
    out.what = volume_spec::kind::secret;
    out.object = s->get_string("secretName");
    items_of(*s);
  } else if (const auto* cm = v.find("configMap"); cm && cm->is_object()) {
    out.what = volume_spec::kind::config_map;
    out.object = cm->get_string("name");
    items_of(*cm);
  } else if (const auto* pvc = v.find("persistentVolumeClaim"); pvc && pvc->is_object()) {
    out.what = volume_spec::kind::claim;
    out.object = pvc->get_string("claimName");
    out.read_only = flag_of(*pvc, "readOnly");
  } else if (const auto* hp = v.find("hostPath"); hp && hp->is_object()) {
    out.what = volume_spec::kind::host_path;
    out.object = hp->get_string("path");
  } else if (v.is_object()) {
    for (const auto& [key, _] : v.as_object())
      if (key != "name")
        out.unsupported_type = key;
  }
  return out;
}

const char* kind_word(object_ref::kind k) { return k == object_ref::kind::secret ? "secret" : "configmap"; }
const char* kind_title(object_ref::kind k) { return k == object_ref::kind::secret ? "Secret" : "ConfigMap"; }

// The value of `key` in a Secret (base64 `data`, or `stringData`) or ConfigMap (`data`, base64
// `binaryData`); nullopt when absent.
std::optional<std::string> key_of(const json::value& obj, object_ref::kind k, const std::string& key) {
  if (k == object_ref::kind::config_map) {
    if (const auto* d = obj.find("data"); d && d->find(key))
      return json::scalar_text(*d->find(key));
  } else if (const auto* d = obj.find("stringData"); d && d->find(key)) {
    return json::scalar_text(*d->find(key));
  }
  const char* b64 = k == object_ref::kind::secret ? "data" : "binaryData";
  if (const auto* d = obj.find(b64); d && d->find(key)) {
    auto decoded = client::base64_decode(json::scalar_text(*d->find(key)));
    return decoded ? *decoded : std::string();
  }
  return std::nullopt;
}

std::vector<std::string> keys_of(const json::value& obj, object_ref::kind k) {
  std::set<std::string> keys;
  // (Not a ternary of two initializer lists: their arrays would die before the loop ran.)
  const std::array<const char*, 2> fields{"data", k == object_ref::kind::secret ? "stringData" : "binaryData"};
  for (const char* field : fields)
    if (const auto* d = obj.find(field); d && d->is_object())
      for (const auto& [key, _] : d->as_object())
        keys.insert(key);
  return {keys.begin(), keys.end()};
}

const json::value* fetched(const fetched_objects& objects, object_ref::kind k, const std::string& name) {
  auto it = objects.find(object_ref{k, name});
  return it == objects.end() || !it->second ? nullptr : &*it->second;
}

// metadata.name, metadata.labels['app'], status.podIP ... of the pod.
std::string field_value(const json::value& pod, const std::string& path) {
  auto bracket = path.find("['");
  if (bracket != std::string::npos && path.size() > bracket + 4 && path.substr(path.size() - 2) == "']") {
    std::string map = path.substr(0, bracket);
    std::string key = path.substr(bracket + 2, path.size() - bracket - 4);
    const auto* m = map == "metadata.labels"        ? pod.at_path({"metadata", "labels"})
                    : map == "metadata.annotations" ? pod.at_path({"metadata", "annotations"})
                                                    : nullptr;
    return m && m->find(key) ? json::scalar_text(*m->find(key)) : std::string();
  }
  static const std::map<std::string, std::pair<const char*, const char*>> paths{
      {"metadata.name", {"metadata", "name"}},
      {"metadata.namespace", {"metadata", "namespace"}},
      {"metadata.uid", {"metadata", "uid"}},
      {"spec.nodeName", {"spec", "nodeName"}},
      {"spec.serviceAccountName", {"spec", "serviceAccountName"}},
      {"status.hostIP", {"status", "hostIP"}},
      {"status.podIP", {"status", "podIP"}},
  };
  auto it = paths.find(path);
  if (it == paths.end())
    return {};
  const auto* v = pod.at_path({it->second.first, it->second.second});
  return v ? json::scalar_text(*v) : std::string();
}

} // namespace

expected<pod_run_spec> parse_run_spec(const json::value& pod) {
  const auto* meta = pod.find("metadata");
  const auto* spec = pod.find("spec");
  if (!meta || !meta->is_object() || !spec || !spec->is_object())
    return error::bad_request("a pod needs metadata and spec");
  pod_run_spec out;
  out.ns = meta->get_string("namespace", "default");
  out.name = meta->get_string("name");
  out.uid = meta->get_string("uid");
  out.node_name = spec->get_string("nodeName");
  out.restart_policy = spec->get_string("restartPolicy", "Always");
  if (out.restart_policy.empty())
    out.restart_policy = "Always";
  for (auto [key, init] : {std::pair{"initContainers", true}, std::pair{"containers", false}})
    if (const auto* list = spec->find(key); list && list->is_array())
      for (const auto& c : list->as_array())
        out.containers.push_back(parse_container(c, init));
  if (const auto* vols = spec->find("volumes"); vols && vols->is_array())
    for (const auto& v : vols->as_array())
      out.volumes.push_back(parse_volume(v));
  return out;
}

std::vector<object_ref> referenced_objects(const pod_run_spec& spec) {
  std::set<object_ref> refs;
  for (const auto& c : spec.containers)
    for (const auto& f : c.env_from)
      refs.insert({f.secret ? object_ref::kind::secret : object_ref::kind::config_map, f.object});
  for (const auto& c : spec.containers)
    for (const auto& e : c.env) {
      if (e.source.what == env_source::kind::secret_key)
        refs.insert({object_ref::kind::secret, e.source.object});
      if (e.source.what == env_source::kind::config_map_key)
        refs.insert({object_ref::kind::config_map, e.source.object});
    }
  for (const auto& v : spec.volumes) {
    if (v.what == volume_spec::kind::secret)
      refs.insert({object_ref::kind::secret, v.object});
    if (v.what == volume_spec::kind::config_map)
      refs.insert({object_ref::kind::config_map, v.object});
    if (v.what == volume_spec::kind::claim)
      refs.insert({object_ref::kind::claim, v.object});
  }
  return {refs.begin(), refs.end()};
}

std::string expand_references(const std::string& text, const std::vector<std::pair<std::string, std::string>>& env) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '$' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    if (text[i + 1] == '$') { // $$ → $
      out += '$';
      ++i;
      continue;
    }
    auto close = text.find(')', i + 2);
    if (text[i + 1] != '(' || close == std::string::npos) {
      out += text[i];
      continue;
    }
    std::string name = text.substr(i + 2, close - i - 2);
    // The last definition wins, as in the container's environment.
    auto it = std::find_if(env.rbegin(), env.rend(), [&](const auto& kv) { return kv.first == name; });
    if (it == env.rend())
      out += text.substr(i, close - i + 1);
    else
      out += it->second;
    i = close;
  }
  return out;
}

expected<std::vector<std::pair<std::string, std::string>>> resolve_env(const container_run_spec& c,
                                                                       const json::value& pod,
                                                                       const fetched_objects& objects) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string ns = pod.at_path({"metadata", "namespace"}) ? json::scalar_text(*pod.at_path({"metadata", "namespace"}))
                                                           : std::string("default");
  for (const auto& f : c.env_from) { // every key, as a kubelet sets them before `env`
    auto k = f.secret ? object_ref::kind::secret : object_ref::kind::config_map;
    const auto* obj = fetched(objects, k, f.object);
    if (!obj) {
      if (f.optional)
        continue;
      return error::bad_request(std::string(kind_word(k)) + " \"" + f.object + "\" not found");
    }
    for (const auto& key : keys_of(*obj, k))
      out.emplace_back(f.prefix + key, *key_of(*obj, k, key));
  }
  for (const auto& e : c.env) {
    const auto& s = e.source;
    std::string value;
    switch (s.what) {
    case env_source::kind::value:
      value = expand_references(s.value, out);
      break;
    case env_source::kind::field:
      value = field_value(pod, s.key);
      break;
    case env_source::kind::secret_key:
    case env_source::kind::config_map_key: {
      auto k = s.what == env_source::kind::secret_key ? object_ref::kind::secret : object_ref::kind::config_map;
      const auto* obj = fetched(objects, k, s.object);
      if (!obj) {
        if (s.optional)
          continue;
        return error::bad_request(std::string(kind_word(k)) + " \"" + s.object + "\" not found");
      }
      auto v = key_of(*obj, k, s.key);
      if (!v) {
        if (s.optional)
          continue;
        return error::bad_request("couldn't find key " + s.key + " in " + kind_title(k) + " " + ns + "/" + s.object);
      }
      value = *v;
      break;
    }
    }
    out.emplace_back(e.name, std::move(value));
  }
  return out;
}

expected<std::vector<volume_file>> volume_files(const volume_spec& v, const fetched_objects& objects) {
  if (v.what == volume_spec::kind::empty_dir || v.what == volume_spec::kind::claim ||
      v.what == volume_spec::kind::host_path)
    return std::vector<volume_file>{};
  if (v.what == volume_spec::kind::unsupported)
    return error::bad_request("volume \"" + v.name + "\": the process runtime supports emptyDir, secret, configMap, " +
                              "persistentVolumeClaim and hostPath volumes, not " +
                              (v.unsupported_type.empty() ? "this one" : v.unsupported_type));
  auto k = v.what == volume_spec::kind::secret ? object_ref::kind::secret : object_ref::kind::config_map;
  const auto* obj = fetched(objects, k, v.object);
  if (!obj) {
    if (v.optional)
      return std::vector<volume_file>{};
    return error::bad_request("MountVolume.SetUp failed for volume \"" + v.name + "\" : " + kind_word(k) + " \"" +
                              v.object + "\" not found");
  }
  std::vector<volume_file> out;
  if (v.items.empty()) {
    for (const auto& key : keys_of(*obj, k))
      out.push_back({key, *key_of(*obj, k, key), v.default_mode});
    return out;
  }
  for (const auto& item : v.items) {
    auto content = key_of(*obj, k, item.key);
    if (!content) {
      if (v.optional)
        continue;
      return error::bad_request("MountVolume.SetUp failed for volume \"" + v.name + "\" : " +
                                (k == object_ref::kind::secret ? "references non-existent secret key: "
                                                               : "configmap references non-existent config key: ") +
                                item.key);
    }
    if (item.path.empty() || item.path.front() == '/' || item.path.find("..") != std::string::npos)
      return error::bad_request("volume \"" + v.name + "\": item path \"" + item.path + "\" must be relative without ..");
    out.push_back({item.path, *content, item.mode.value_or(v.default_mode)});
  }
  return out;
}

expected<std::string> host_directory(const volume_spec& v, const fetched_objects& objects) {
  if (v.what == volume_spec::kind::host_path) {
    if (v.object.empty() || v.object.front() != '/')
      return error::bad_request("MountVolume.SetUp failed for volume \"" + v.name + "\" : hostPath \"" + v.object +
                                "\" is not an absolute path");
    return v.object;
  }
  if (v.what != volume_spec::kind::claim)
    return std::string();
  const std::string failed = "MountVolume.SetUp failed for volume \"" + v.name + "\" : ";
  const json::value* pvc = fetched(objects, object_ref::kind::claim, v.object);
  if (!pvc)
    return error::bad_request(failed + "persistentvolumeclaim \"" + v.object + "\" not found");
  std::string volume = pvc->at_path({"spec", "volumeName"}) ? json::scalar_text(*pvc->at_path({"spec", "volumeName"})) : "";
  std::string phase = pvc->at_path({"status", "phase"}) ? json::scalar_text(*pvc->at_path({"status", "phase"})) : "";
  if (volume.empty() || phase != "Bound")
    return error::bad_request(failed + "persistentvolumeclaim \"" + v.object + "\" is not bound (phase " +
                              (phase.empty() ? "unknown" : phase) + ")");
  const json::value* pv = fetched(objects, object_ref::kind::volume, volume);
  if (!pv)
    return error::bad_request(failed + "persistentvolume \"" + volume + "\" of claim \"" + v.object + "\" not found");
  const json::value* path = pv->at_path({"spec", "hostPath", "path"});
  std::string dir = path ? json::scalar_text(*path) : "";
  if (dir.empty() || dir.front() != '/')
    return error::bad_request(failed + "persistentvolume \"" + volume + "\" of claim \"" + v.object +
                              "\" is not a hostPath volume (the process runtime mounts hostPath volumes only)");
  return dir;
}

std::string termination_message(const std::string& file_content, const std::string& log_tail, bool fallback_to_logs,
                                 int exit_code) {
  constexpr std::size_t max_file = 4096, max_log_bytes = 2048, max_log_lines = 80;
  if (!file_content.empty() || !fallback_to_logs || exit_code == 0)
    return file_content.substr(0, max_file);
  std::string tail = log_tail.size() > max_log_bytes ? log_tail.substr(log_tail.size() - max_log_bytes) : log_tail;
  // The last 80 lines (a final newline does not start a line).
  std::size_t lines = 0, pos = tail.size();
  if (pos > 0 && tail[pos - 1] == '\n')
    --pos;
  while (pos > 0) {
    auto nl = tail.rfind('\n', pos - 1);
    if (nl == std::string::npos)
      break;
    if (++lines == max_log_lines)
      return tail.substr(nl + 1);
    pos = nl;
  }
  return tail;
}

} // namespace kozmo::kubelet
