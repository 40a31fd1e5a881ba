// Where `kozmo status` reads from:
//   cell map   --inspect-url URL + /v1/inspect/cellmap, with the kubeconfig's credentials; else
//              the API server's own /v1/inspect/cellmap (`kozmo local` serves inspect there);
//              else, when that is 404 or 403, the service proxy to deploy/'s Service
//              kozmo-system/kozmo-controller-metrics (its port named https). kube-apiserver
//              passes no caller's credentials through a service proxy, so a controller that
//              checks tokens (--metrics-secure, deploy/'s way) answers it 401: the message then
//              says to use --inspect-url (with `kubectl port-forward`).
//   jobs       LIST of each training kind and TaskExecution through the API server; a kind whose
//              CRD is not installed (404) is skipped.
#include "runtime/status_mode.hpp"

#include "k8s/client/client.hpp"
#include "k8s/json/value.hpp"
#include "runtime/status_view.hpp"

#include <spdlog/spdlog.h>

#include <sys/ioctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kozmo::runtime {
namespace {

constexpr const char* cellmap_path = "/v1/inspect/cellmap";
constexpr const char* proxy_cellmap_path =
    "/api/v1/namespaces/kozmo-system/services/https:kozmo-controller-metrics:https/proxy/v1/inspect/cellmap";

struct work_kind {
  const char* kind;
  const char* group;
  const char* version;
  const char* plural;
};
constexpr work_kind work_kinds[] = {
    {"PyTorchJob", "kubeflow.org", "v1", "pytorchjobs"},   {"TFJob", "kubeflow.org", "v1", "tfjobs"},
    {"MPIJob", "kubeflow.org", "v1", "mpijobs"},           {"XGBoostJob", "kubeflow.org", "v1", "xgboostjobs"},
    {"PaddleJob", "kubeflow.org", "v1", "paddlejobs"},     {"JAXJob", "kubeflow.org", "v1", "jaxjobs"},
    {"Caffe2Job", "kubeflow.org", "v1alpha1", "caffe2jobs"}, {"TrainJob", "trainer.kubeflow.org", "v1alpha1", "trainjobs"},
    {"TaskExecution", "kozmo.io", "v1alpha1", "taskexecutions"},
};

// The message of an error answer: HiveD-style {"code", "message"} bodies come back whole.
std::string message_of(const error& e) {
  if (!e.message.empty() && e.message.front() == '{')
    if (auto doc = json::parse(e.message); doc && doc->is_object() && !doc->get_string("message").empty())
      return doc->get_string("message");
  return e.message;
}

// One line saying what failed reading `what` from `where`.
std::string describe(const std::string& what, const std::string& where, const error& e) {
  std::string msg = message_of(e);
  switch (e.code) {
  case 0: return "cannot reach " + where + " (" + what + "): " + msg;
  case 401: return what + ": 401 Unauthorized at " + where + ": the credentials were not accepted (" + msg + ")";
  case 403: return what + ": 403 Forbidden at " + where + ": " + msg;
  case 503:
    return what + ": 503 Service Unavailable at " + where + ": " +
           (msg.empty() ? "the GPU scheduler is not running or not ready there" : msg);
  default: return what + ": " + std::to_string(e.code) + " " + e.reason + " at " + where + ": " + msg;
  }
}

expected<json::value> get_json(client::client& c, const std::string& path) {
  client::request req;
  req.method = "GET";
  req.path = path;
  auto resp = c.send_sync(std::move(req));
  if (!resp)
    return resp.err();
  auto doc = json::parse(resp->body);
  if (!doc)
    return error{"the answer is not JSON: " + doc.err().message, 0, "BadResponse"};
  return std::move(*doc);
}

struct sources {
  std::unique_ptr<client::client> api;
  std::unique_ptr<client::client> inspect; // --inspect-url
  std::string inspect_path = cellmap_path;
};

expected<sources> connect(const status_options& opts) {
  expected<client::config> cfg = opts.context.empty()
                                     ? client::discover_config(opts.kubeconfig)
                                     : client::load_kubeconfig(opts.kubeconfig.empty() ? client::default_kubeconfig_path()
                                                                                       : opts.kubeconfig,
                                                               opts.context);
  if (!cfg)
    return cfg.err();
  cfg->request_timeout = std::chrono::seconds(10);
  cfg->max_retries = 1;
  cfg->retry_backoff_cap = std::chrono::milliseconds(500);
  cfg->user_agent = "kozmo-status/0.1";
  if (opts.insecure_skip_tls_verify)
    cfg->insecure_skip_tls_verify = true;
  sources s;
  if (!opts.inspect_url.empty()) {
    client::config icfg = *cfg;
    std::string url = opts.inspect_url;
    while (!url.empty() && url.back() == '/')
      url.pop_back();
    // A URL that names the path already is taken as it is.
    if (auto at = url.find(cellmap_path); at != std::string::npos && at + std::string(cellmap_path).size() == url.size())
      url.resize(at);
    icfg.server = url;
    icfg.tls_server_name.clear();
    if (!opts.inspect_ca_file.empty()) {
      std::ifstream in(opts.inspect_ca_file);
      if (!in)
        return error::bad_request("--inspect-ca " + opts.inspect_ca_file + ": cannot be read");
      std::stringstream pem;
      pem << in.rdbuf();
      icfg.ca_pem = pem.str();
    }
    s.inspect = std::make_unique<client::client>(std::move(icfg));
  }
  s.api = std::make_unique<client::client>(std::move(*cfg));
  return s;
}

// Reads the cell map into `snap` (rule 1 of status_view.hpp: an error leaves it empty). False
// when the API server itself could not be reached.
bool read_cellmap(sources& s, status_snapshot& snap) {
  const std::string what = "the GPU scheduler's cell map";
  snap.cellmap_read = false;
  auto take = [&](expected<json::value> doc, const std::string& where) {
    if (!doc) {
      snap.errors.push_back(describe(what, where, doc.err()));
      return;
    }
    auto view = parse_cellmap(*doc);
    if (!view) {
      snap.errors.push_back(what + " from " + where + ": " + view.err().message);
      return;
    }
    snap.cellmap = std::move(*view);
    snap.cellmap_read = true;
  };
  if (s.inspect) {
    take(get_json(*s.inspect, s.inspect_path), s.inspect->cfg().server + cellmap_path);
    return true;
  }
  const std::string server = s.api->cfg().server;
  auto direct = get_json(*s.api, cellmap_path);
  if (direct || (direct.err().code != 404 && direct.err().code != 403)) {
    bool reached = direct || direct.err().code != 0;
    take(std::move(direct), server + cellmap_path);
    return reached;
  }
  auto proxied = get_json(*s.api, proxy_cellmap_path);
  if (proxied) {
    take(std::move(proxied), server + proxy_cellmap_path);
    return true;
  }
  std::string hint = proxied.err().code == 401
                         ? " (the API server passes no credentials through its proxy and the controller checks them: "
                           "reach its address with `kubectl -n kozmo-system port-forward deploy/kozmo-controller "
                           "8443:8443` and --inspect-url https://127.0.0.1:8443)"
                         : " (is Kozmo's scheduler running? --inspect-url names its address)";
  snap.errors.push_back(what + ": " + std::to_string(direct.err().code) + " at " + server + cellmap_path +
                        " and, through the service proxy to kozmo-system/kozmo-controller-metrics, " +
                        std::to_string(proxied.err().code) + " " + message_of(proxied.err()) + hint);
  return true;
}

void read_work(sources& s, const status_options& opts, status_snapshot& snap) {
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  for (const auto& k : work_kinds) {
    client::resource_ref ref{k.group, k.version, k.plural, opts.ns, "", ""};
    auto list = s.api->list_all(ref);
    if (!list) {
      if (list.err().code == 404) // the CRD is not installed
        continue;
      snap.errors.push_back(describe(std::string("jobs and tasks (") + k.plural + "." + k.group + ")",
                                     s.api->cfg().server, list.err()));
      if (list.err().code == 0 || list.err().code == 401) {
        snap.work_read = false;
        return; // every other kind would fail the same way
      }
      continue;
    }
    const json::value* items = list->find("items");
    if (!items || !items->is_array())
      continue;
    for (const auto& item : items->as_array()) {
      work_item w = work_item_of(k.kind, item, now);
      if (opts.finished || !finished_phase(w.phase))
        snap.work.push_back(std::move(w));
    }
  }
}

std::size_t terminal_width() {
  if (const char* cols = std::getenv("COLUMNS")) {
    char* end = nullptr;
    long n = std::strtol(cols, &end, 10);
    if (end != cols && *end == '\0' && n > 0 && n < 10000)
      return static_cast<std::size_t>(n);
  }
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return ws.ws_col;
  return 80;
}

std::string render(const status_snapshot& snap, const status_options& opts, bool tty) {
  if (opts.output == "json")
    return json::dump_pretty(snapshot_document(snap)) + "\n";
  if (opts.output == "yaml")
    return json::dump_yaml(snapshot_document(snap));
  render_options r;
  r.width = terminal_width();
  r.truncate = tty;
  r.wide = opts.output == "wide";
  r.namespace_column = opts.all_namespaces;
  return render_text(snap, r);
}

status_snapshot read_all(sources& s, const status_options& opts) {
  status_snapshot snap;
  // An API server that cannot be reached at all need not be asked eight more times.
  if (read_cellmap(s, snap))
    read_work(s, opts, snap);
  else
    snap.work_read = false;
  return snap;
}

} // namespace

int run_status(const status_options& opts) {
  spdlog::set_level(spdlog::level::off); // the client's own lines would mix with the tables
  const bool tty = isatty(STDOUT_FILENO) == 1;
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  // --watch ends on Ctrl-C between two snapshots: the signals are blocked before the client's
  // thread starts and taken with sigtimedwait as the wait between snapshots.
  if (opts.watch)
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto src = connect(opts);
  if (!src) {
    std::cerr << "kozmo status: " << src.err().message << "\n";
    return 1;
  }
  for (bool first = true;; first = false) {
    status_snapshot snap = read_all(*src, opts);
    std::string text = render(snap, opts, tty);
    if (opts.watch && tty)
      std::cout << "\033[H\033[2J";
    else if (opts.watch && !first)
      std::cout << "\n";
    std::cout << text << std::flush;
    for (const auto& e : snap.errors)
      std::cerr << "kozmo status: " << e << "\n";
    if (!opts.watch)
      return snap.errors.empty() ? 0 : 1;
    const auto ns = static_cast<long>(opts.interval_seconds * 1e9);
    timespec wait{ns / 1000000000L, ns % 1000000000L};
    if (sigtimedwait(&stop_signals, nullptr, &wait) > 0)
      return 0;
  }
}

} // namespace kozmo::runtime
