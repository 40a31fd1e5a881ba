// GET /api/v1/namespaces/<ns>/pods/<name>/log: the logs the process runtime's kubelet writes
// (pod_log_layout.hpp), with kube-apiserver's and the kubelet's parameters and messages:
// container (required when the pod has several), previous, tailLines, limitBytes, follow.
#include "k8s/apiserver/handlers.hpp"
#include "k8s/apiserver/log_stream.hpp"
#include "k8s/apiserver/pod_log_layout.hpp"
#include "k8s/model/kozmo_keys.hpp"

#include <algorithm>
#include <fstream>

namespace kozmo::apiserver {
namespace {

std::vector<std::string> names_of(const json::value& pod, const char* list) {
  std::vector<std::string> out;
  if (const auto* l = pod.at_path({"spec", list}); l && l->is_array())
    for (const auto& c : l->as_array())
      out.push_back(c.get_string("name"));
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += (out.empty() ? "" : " ") + s;
  return out;
}

const json::value* status_of(const json::value& pod, const std::string& container, bool init) {
  const auto* list = pod.at_path({"status", init ? "initContainerStatuses" : "containerStatuses"});
  if (!list || !list->is_array())
    return nullptr;
  for (const auto& s : list->as_array())
    if (s.get_string("name") == container)
      return &s;
  return nullptr;
}

// The runtime the pod runs on: its annotation, else its node's label.
std::string runtime_of(const store& st, const json::value& pod) {
  if (const auto* a = pod.at_path({"metadata", "annotations"}); a && a->find(keys::runtime))
    return json::scalar_text(*a->find(keys::runtime));
  std::string node = pod.at_path({"spec", "nodeName"}) ? json::scalar_text(*pod.at_path({"spec", "nodeName"})) : "";
  auto nodes = st.resolve("", "v1", "nodes");
  if (!nodes || node.empty())
    return "sim";
  auto n = st.get(*nodes, "", node);
  if (!n)
    return "sim";
  const auto* labels = (*n)->at_path({"metadata", "labels"});
  return labels && labels->find(keys::runtime) ? json::scalar_text(*labels->find(keys::runtime)) : "sim";
}

std::string read_from(const std::string& path, std::uint64_t offset, std::uint64_t* end = nullptr) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (end)
      *end = offset;
    return {};
  }
  in.seekg(0, std::ios::end);
  auto size = static_cast<std::uint64_t>(in.tellg());
  if (end)
    *end = std::max(size, offset);
  if (size <= offset)
    return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::string out(size - offset, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

// The offset after the last complete line of `text` (read from `from`).
std::uint64_t complete_lines(const std::string& text, std::uint64_t from) {
  auto nl = text.rfind('\n');
  return from + (nl == std::string::npos ? 0 : nl + 1);
}

// The last `n` lines of `text` (a final newline ends the last line, it does not start one).
std::string tail_lines(const std::string& text, std::int64_t n) {
  if (n <= 0)
    return {};
  std::size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n')
    --pos;
  std::int64_t seen = 0;
  while (pos > 0) {
    auto nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos)
      return text;
    if (++seen == n)
      return text.substr(nl + 1);
    pos = nl;
  }
  return text;
}

std::optional<api_error> int_param(const parsed_target& t, const char* name, std::int64_t min,
                                   std::optional<std::int64_t>& out) {
  if (!t.has(name))
    return std::nullopt;
  auto v = parse_int(t.param(name));
  if (!v || *v < min)
    return bad_request(std::string(name) + ": Invalid value: \"" + t.param(name) + "\": must be " +
                       (min == 0 ? "greater than or equal to 0" : "greater than 0"));
  out = *v;
  return std::nullopt;
}

http_response text(std::string body) {
  http_response res;
  res.status = 200;
  res.set_header("Content-Type", "text/plain");
  res.body = std::move(body);
  return res;
}

} // namespace

route_result handle_pod_log(const request_context& ctx, const std::string& logs_root) {
  if (ctx.req.method != "GET")
    return status_response(method_not_allowed());
  auto obj = ctx.st.get(*ctx.rt, ctx.ns, ctx.name);
  if (!obj)
    return status_response(not_found_error(*ctx.rt, ctx.name));
  const json::value& pod = **obj;
  const auto& t = ctx.target;
  std::optional<std::int64_t> tail, limit;
  if (auto e = int_param(t, "tailLines", 0, tail))
    return status_response(*e);
  if (auto e = int_param(t, "limitBytes", 1, limit))
    return status_response(*e);

  // Which container (kube-apiserver's LogLocation).
  auto mains = names_of(pod, "containers");
  auto inits = names_of(pod, "initContainers");
  std::string container = t.param("container");
  if (container.empty()) {
    if (mains.size() != 1) {
      std::string msg = "a container name must be specified for pod " + ctx.name;
      if (!mains.empty()) {
        msg += ", choose one of: [" + joined(mains) + "]";
        if (!inits.empty())
          msg += " or one of the init containers: [" + joined(inits) + "]";
      }
      return status_response(bad_request(msg));
    }
    container = mains.front();
  }
  bool init = std::find(mains.begin(), mains.end(), container) == mains.end();
  if (init && std::find(inits.begin(), inits.end(), container) == inits.end())
    return status_response(bad_request("container " + container + " is not valid for pod " + ctx.name));
  if (!pod.at_path({"spec", "nodeName"}) || json::scalar_text(*pod.at_path({"spec", "nodeName"})).empty())
    return text({}); // not scheduled yet: nothing to read, as kube-apiserver answers

  if (runtime_of(ctx.st, pod) != "process")
    return status_response(bad_request(
        "pod " + ctx.name + " runs on the simulated runtime: its containers are not real processes and have no logs "
        "(start `kozmo local --runtime process`, or annotate the pod " + std::string(keys::runtime) + ": process)"));
  if (logs_root.empty())
    return status_response(bad_request("this API server keeps no container logs (kozmo local with nodes does)"));

  // Which run (the kubelet's validateContainerLogStatus).
  const json::value* cs = status_of(pod, container, init);
  std::string quoted = go_quote(container), pod_quoted = go_quote(ctx.name);
  if (!cs)
    return status_response(bad_request("container " + quoted + " in pod " + pod_quoted + " is not available"));
  std::int64_t restarts = cs->get_int("restartCount");
  const json::value* last = cs->at_path({"lastState", "terminated"});
  int run = 0;
  bool live = false;
  if (t.flag("previous")) {
    if (!last || restarts < 1)
      return status_response(
          bad_request("previous terminated container " + quoted + " in pod " + pod_quoted + " not found"));
    run = static_cast<int>(restarts - 1);
  } else if (cs->at_path({"state", "running"})) {
    run = static_cast<int>(restarts);
    live = true;
  } else if (cs->at_path({"state", "terminated"})) {
    run = static_cast<int>(restarts);
  } else if (last && restarts > 0) {
    run = static_cast<int>(restarts - 1); // waiting to restart: the run before
  } else {
    const auto* w = cs->at_path({"state", "waiting"});
    return status_response(bad_request("container " + quoted + " in pod " + pod_quoted +
                                       " is waiting to start: " + (w ? w->get_string("reason") : std::string())));
  }

  std::string uid = pod.at_path({"metadata", "uid"}) ? json::scalar_text(*pod.at_path({"metadata", "uid"})) : "";
  std::string path = pod_logs::container_log(logs_root, ctx.ns, ctx.name, uid, container, run);
  std::uint64_t end = 0;
  std::string raw = read_from(path, 0, &end);
  end = complete_lines(raw, 0); // a line being written is read by the stream, once complete
  bool timestamps = t.flag("timestamps");
  std::string body = pod_logs::decode_cri(raw, timestamps);
  bool line_start = body.empty() || body.back() == '\n';
  if (tail)
    body = tail_lines(body, *tail);
  if (limit && static_cast<std::int64_t>(body.size()) > *limit)
    body.resize(static_cast<std::size_t>(*limit));
  if (!t.flag("follow") || !live || (limit && static_cast<std::int64_t>(body.size()) >= *limit))
    return text(std::move(body));
  log_follow f{path, end, ctx.ns, ctx.name, uid, container, init, run, std::nullopt, timestamps, line_start};
  if (limit)
    f.limit_bytes = *limit - static_cast<std::int64_t>(body.size());
  return std::make_shared<log_stream>(std::move(f), std::move(body));
}

bool log_stream::still_running(const store& st) const {
  auto pods = st.resolve("", "v1", "pods");
  if (!pods)
    return false;
  auto obj = st.get(*pods, f_.ns, f_.pod);
  if (!obj)
    return false;
  const json::value& pod = **obj;
  if (!pod.at_path({"metadata", "uid"}) || json::scalar_text(*pod.at_path({"metadata", "uid"})) != f_.uid)
    return false;
  const json::value* cs = status_of(pod, f_.container, f_.init);
  return cs && cs->at_path({"state", "running"}) && cs->get_int("restartCount") == f_.run;
}

log_stream::chunk log_stream::poll(const store& st) {
  // Liveness first: a run seen over has written everything, so the read after it is complete.
  bool running = still_running(st);
  chunk out;
  std::string raw = read_from(f_.path, f_.offset);
  f_.offset = complete_lines(raw, f_.offset);
  out.data = pod_logs::decode_cri(raw, f_.timestamps, f_.line_start);
  if (!out.data.empty())
    f_.line_start = out.data.back() == '\n';
  if (f_.limit_bytes) {
    if (static_cast<std::int64_t>(out.data.size()) >= *f_.limit_bytes) {
      out.data.resize(static_cast<std::size_t>(*f_.limit_bytes));
      out.done = true;
    }
    *f_.limit_bytes -= static_cast<std::int64_t>(out.data.size());
  }
  out.done = out.done || !running;
  return out;
}

} // namespace kozmo::apiserver
