// The client side of the head-to-head bench (bench/controller_head_to_head.sh): creates the
// objects, measures the API server's bare binding ceiling, watches a namespace until its pods
// are bound, times one pod's bind and bare LISTs (every pod, and those a field selector picks).
// Prints figures, asserts nothing.
//
//   bind_bench setup KUBECONFIG NODES PODS NS:SCHEDULER...
//       NODES Nodes gpu-node-I (8 GPUs, Ready) and, in each NS, PODS pending one-GPU pods p-NNNNN
//       with that schedulerName; everything sent at once through Kozmo's client (no rate limit)
//   bind_bench bind KUBECONFIG NS CONC[,CONC...]
//       the pending pods of NS, in one slice per concurrency, each slice bound (POST
//       pods/NAME/binding, nodes round-robin) with CONC requests on the wire; binds/s per slice
//   bind_bench wait KUBECONFIG NS COUNT [TIMEOUT_S]
//       watches NS (fieldSelector spec.nodeName!=) until COUNT of its pods are bound; prints the
//       wall-clock times (epoch seconds) of the first bind seen and of the COUNT-th
//   bind_bench pod KUBECONFIG NS NAME SCHEDULER [TIMEOUT_S]
//       creates one one-GPU pod and prints the epoch seconds when it was created and bound
//   bind_bench list KUBECONFIG [REPEAT] [FIELD_SELECTOR]
//       GET /api/v1/pods (every namespace, unpaged) REPEAT times, raw bytes and decoded through
//       the client; then the GPUs requested per node by the bound pods (overcommit check). With
//       FIELD_SELECTOR also the LIST of the pods it selects, decoded (consistent and from the
//       watch cache)
//   bind_bench list-selected KUBECONFIG FIELD_SELECTOR
//       only the two LISTs of the pods FIELD_SELECTOR picks (consistent, from the watch cache)
//
// Lines meant for the script start with a keyword ("best", "first", "done", "created", "bound",
// "list-raw", "list-decoded", "list-selected", "overcommit"); the rest is for people.
#include "k8s/client/client.hpp"
#include "k8s/json/value.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace kozmo;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

double epoch_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// CPU seconds this process has used (user + system).
double cpu_seconds() {
  std::FILE* f = std::fopen("/proc/self/stat", "r");
  if (!f)
    return 0;
  char buf[1024];
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  const char* p = std::strrchr(buf, ')');
  double ticks = 0;
  for (int field = 2; p && *p; ++p)  // field 2 ends at ')'; utime and stime are fields 14 and 15
    if (*p == ' ' && ++field >= 14 && field <= 15)
      ticks += std::strtod(p + 1, nullptr);
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double seconds_since(steady::time_point t) { return std::chrono::duration<double>(steady::now() - t).count(); }

// The bench's client: no client-side rate limit, enough connections for the highest
// concurrency, patient timeouts (the API server is busy during setup).
std::unique_ptr<client::client> make_client(const std::string& kubeconfig, int max_connections = 256) {
  auto cfg = client::load_kubeconfig(kubeconfig);
  if (!cfg) {
    std::fprintf(stderr, "bind_bench: %s\n", cfg.err().message.c_str());
    std::exit(2);
  }
  cfg->qps = 0;
  cfg->max_connections = max_connections;
  cfg->request_timeout = 120s;
  cfg->user_agent = "kozmo-bind-bench/0.1";
  return std::make_unique<client::client>(*cfg);
}

client::resource_ref pods_in(const std::string& ns) { return {"", "v1", "pods", ns, "", ""}; }

std::string node_json(int i) {
  const std::string name = "gpu-node-" + std::to_string(i);
  const std::string res = R"({"cpu":"64","memory":"512Gi","pods":"110","nvidia.com/gpu":"8"})";
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"(","labels":{"kubernetes.io/hostname":")" + name + R"("}},"status":{"capacity":)" + res +
         R"(,"allocatable":)" + res +
         R"(,"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"ready"}]}})";
}

std::string pod_json(const std::string& ns, const std::string& name, const std::string& scheduler) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" + ns +
         R"("},"spec":{"schedulerName":")" + scheduler +
         R"(","terminationGracePeriodSeconds":0,"containers":[{"name":"main","image":"busybox","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}})";
}

std::string pod_name(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "p-%05d", i);
  return buf;
}

// Sends every create at once and waits for all answers; AlreadyExists counts as created (a
// re-run). Returns the failures, printing the first few.
std::size_t create_all(client::client& cli, const client::resource_ref& where, const std::vector<std::string>& bodies) {
  std::mutex mu;
  std::condition_variable cv;
  std::size_t answered = 0, failed = 0;
  for (const auto& text : bodies) {
    auto body = json::parse(text);
    if (!body) {
      std::fprintf(stderr, "bind_bench: bad body: %s\n", body.err().message.c_str());
      std::exit(2);
    }
    cli.create(where, *body, [&](expected<json::value> r) {
      std::lock_guard lock(mu);
      ++answered;
      if (!r && r.err().code != 409) {
        if (failed++ < 5)
          std::fprintf(stderr, "bind_bench: create failed: %s\n", r.err().message.c_str());
      }
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return answered == bodies.size(); });
  return failed;
}

int cmd_setup(const std::string& kc, int nodes, int pods, const std::vector<std::pair<std::string, std::string>>& spaces) {
  auto cli = make_client(kc, 64);
  std::vector<std::string> bodies;
  for (const auto& [ns, sched] : spaces)
    bodies.push_back(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + ns + R"("}})");
  auto t = steady::now();
  std::size_t failed = create_all(*cli, {"", "v1", "namespaces", "", "", ""}, bodies);
  bodies.clear();
  for (int i = 0; i < nodes; ++i)
    bodies.push_back(node_json(i));
  failed += create_all(*cli, {"", "v1", "nodes", "", "", ""}, bodies);
  std::printf("setup: %d nodes created in %.1f s\n", nodes, seconds_since(t));
  std::fflush(stdout);
  for (const auto& [ns, sched] : spaces) {
    t = steady::now();
    bodies.clear();
    for (int i = 0; i < pods; ++i)
      bodies.push_back(pod_json(ns, pod_name(i), sched));
    failed += create_all(*cli, pods_in(ns), bodies);
    std::printf("setup: %d pods (schedulerName %s) created in namespace %s in %.1f s (%.0f/s)\n", pods, sched.c_str(),
                ns.c_str(), seconds_since(t), pods / seconds_since(t));
    std::fflush(stdout);
  }
  std::printf("setup: %zu create(s) failed\n", failed);
  return failed ? 1 : 0;
}

std::vector<std::string> names_of(const json::value& list) {
  std::vector<std::string> out;
  if (const auto* items = list.find("items"); items && items->is_array())
    for (const auto& p : items->as_array())
      if (const auto* n = p.at_path({"metadata", "name"}); n && n->is_string())
        out.push_back(n->as_string());
  std::sort(out.begin(), out.end());
  return out;
}

// Binds `pods` with `conc` requests on the wire: `conc` are sent, and each answer sends the
// next (from the io thread). Returns {seconds, failures}.
std::pair<double, std::size_t> bind_slice(client::client& cli, const std::string& ns, const std::vector<std::string>& pods,
                                          const std::vector<std::string>& nodes, std::size_t node_offset, int conc) {
  struct state {
    std::mutex mu;
    std::condition_variable cv;
    std::size_t next = 0, answered = 0, failed = 0;
  } st;
  std::function<void()> send_next;
  auto send_one = [&](std::size_t i) {
    client::binding b;
    b.ns = ns;
    b.pod = pods[i];
    b.node = nodes[(node_offset + i) % nodes.size()];
    cli.bind(b, [&](expected<json::value> r) {
      bool more = false;
      {
        std::lock_guard lock(st.mu);
        ++st.answered;
        if (!r && st.failed++ < 5)
          std::fprintf(stderr, "bind_bench: bind failed: %s\n", r.err().message.c_str());
        more = st.next < pods.size();
        st.cv.notify_all();
      }
      if (more)
        send_next();
    });
  };
  send_next = [&] {
    std::size_t i;
    {
      std::lock_guard lock(st.mu);
      if (st.next >= pods.size())
        return;
      i = st.next++;
    }
    send_one(i);
  };
  const auto t = steady::now();
  for (int k = 0; k < conc; ++k)
    send_next();
  std::unique_lock lock(st.mu);
  st.cv.wait(lock, [&] { return st.answered == pods.size(); });
  return {seconds_since(t), st.failed};
}

int cmd_bind(const std::string& kc, const std::string& ns, const std::vector<int>& concs) {
  const int top = *std::max_element(concs.begin(), concs.end());
  auto cli = make_client(kc, top);
  auto pending = cli->list(pods_in(ns), {.field_selector = "spec.nodeName="});
  auto node_list = cli->list({"", "v1", "nodes", "", "", ""});
  if (!pending || !node_list) {
    std::fprintf(stderr, "bind_bench: list: %s\n", (!pending ? pending.err() : node_list.err()).message.c_str());
    return 1;
  }
  auto pods = names_of(*pending);
  auto nodes = names_of(*node_list);
  if (pods.empty() || nodes.empty()) {
    std::fprintf(stderr, "bind_bench: %zu pending pods in %s, %zu nodes\n", pods.size(), ns.c_str(), nodes.size());
    return 1;
  }
  // Connections warm before the first slice is timed (TLS handshakes are not what is measured).
  {
    std::atomic<int> left{top};
    for (int k = 0; k < top; ++k)
      cli->get({"", "v1", "namespaces", ns, "", ""}, [&](expected<json::value>) { --left; });
    while (left > 0)
      std::this_thread::sleep_for(1ms);
  }
  const double cpu0 = cpu_seconds();
  const std::size_t slice = pods.size() / concs.size();
  double best = 0;
  int best_conc = 0;
  std::size_t total_failed = 0;
  for (std::size_t s = 0; s < concs.size(); ++s) {
    const std::size_t from = s * slice, to = s + 1 == concs.size() ? pods.size() : from + slice;
    std::vector<std::string> part(pods.begin() + from, pods.begin() + to);
    auto [secs, failed] = bind_slice(*cli, ns, part, nodes, from, concs[s]);
    const double rate = (part.size() - failed) / secs;
    std::printf("bare binds: concurrency %3d: %5zu binds in %6.2f s = %7.0f binds/s (%zu failed)\n", concs[s], part.size(),
                secs, rate, failed);
    std::fflush(stdout);
    total_failed += failed;
    if (rate > best) {
      best = rate;
      best_conc = concs[s];
    }
  }
  std::printf("best %.0f %d %.1f   (binds/s, concurrency; bind_bench's CPU seconds over every slice)\n", best, best_conc,
              cpu_seconds() - cpu0);
  return total_failed ? 1 : 0;
}

// Keeps the set of bound pods of one namespace (or one pod) from a LIST and a watch. The watch's
// callbacks share the state (they may run after this object is gone); a watch that ends is
// relisted by the thread in wait_for, never by the io thread.
class bound_watch {
public:
  bound_watch(client::client& cli, std::string ns, std::string field)
      : cli_(cli), ns_(std::move(ns)), selector_("spec.nodeName!=" + (field.empty() ? "" : "," + field)),
        st_(std::make_shared<state>()) {}
  ~bound_watch() {
    std::unique_lock lock(st_->mu);
    st_->stopped = true;
    auto h = st_->handle;
    lock.unlock();
    if (h)
      h.cancel();
  }

  void start() { relist(); }
  // Blocks until `count` pods are bound or `limit` passes; the count reached.
  std::size_t wait_for(std::size_t count, std::chrono::seconds limit, std::function<void(std::size_t)> on_progress = {}) {
    const auto until = steady::now() + limit;
    auto last_print = steady::now();
    std::unique_lock lock(st_->mu);
    while (st_->bound.size() < count && steady::now() < until) {
      if (st_->ended) {
        lock.unlock();
        relist();
        lock.lock();
        continue;
      }
      st_->cv.wait_for(lock, 200ms);
      if (on_progress && steady::now() - last_print >= 5s) {
        last_print = steady::now();
        on_progress(st_->bound.size());
      }
    }
    return st_->bound.size();
  }
  double first_bind_epoch() {
    std::lock_guard lock(st_->mu);
    return st_->first;
  }
  double count_reached_epoch(std::size_t count) {
    std::lock_guard lock(st_->mu);
    auto it = st_->reached.find(count);
    return it == st_->reached.end() ? 0 : it->second;
  }
  void mark(std::size_t count) {
    std::lock_guard lock(st_->mu);
    st_->marks.insert(count);
  }

private:
  struct state {
    std::mutex mu;
    std::condition_variable cv;
    std::set<std::string> bound;
    std::set<std::size_t> marks;
    std::map<std::size_t, double> reached;
    double first = 0;
    bool stopped = false, ended = false;
    client::watch_handle handle;

    // Under mu.
    void add(const std::string& name) {
      if (!bound.insert(name).second)
        return;
      const double now = epoch_now();
      if (first == 0)
        first = now;
      if (marks.count(bound.size()))
        reached[bound.size()] = now;
    }
  };

  void relist() {
    auto list = cli_.list(pods_in(ns_), {.field_selector = selector_});
    while (!list) {
      std::fprintf(stderr, "bind_bench: list %s: %s (retrying)\n", ns_.c_str(), list.err().message.c_str());
      std::this_thread::sleep_for(500ms);
      list = cli_.list(pods_in(ns_), {.field_selector = selector_});
    }
    const auto* rv = list->at_path({"metadata", "resourceVersion"});
    client::watch_options wo;
    wo.resource_version = rv && rv->is_string() ? rv->as_string() : "";
    wo.field_selector = selector_;
    std::lock_guard lock(st_->mu);
    for (auto& n : names_of(*list))
      st_->add(n);
    st_->ended = false;
    if (st_->stopped)
      return;
    auto st = st_;
    const std::string ns = ns_;
    st_->handle = cli_.watch(
        pods_in(ns_), wo,
        [st](std::string_view line) {
          auto ev = json::parse(line);
          if (!ev)
            return;
          const std::string type = ev->get_string("type");
          const auto* name = ev->at_path({"object", "metadata", "name"});
          const auto* node = ev->at_path({"object", "spec", "nodeName"});
          if (!name || !name->is_string())
            return;
          std::lock_guard lock(st->mu);
          if (type == "DELETED")
            st->bound.erase(name->as_string());
          else if ((type == "ADDED" || type == "MODIFIED") && node && node->is_string() && !node->as_string().empty())
            st->add(name->as_string());
          st->cv.notify_all();
        },
        [st, ns](expected<ok_t> r) {
          std::lock_guard lock(st->mu);
          if (st->stopped)
            return;
          if (!r)
            std::fprintf(stderr, "bind_bench: watch %s ended: %s (relisting)\n", ns.c_str(), r.err().message.c_str());
          st->ended = true;
          st->cv.notify_all();
        });
  }

  client::client& cli_;
  std::string ns_, selector_;
  std::shared_ptr<state> st_;
};

int cmd_wait(const std::string& kc, const std::string& ns, std::size_t count, int timeout_s) {
  auto cli = make_client(kc, 4);
  bound_watch w(*cli, ns, "");
  w.mark(count);
  w.start();
  std::printf("watching %s\n", ns.c_str());
  std::fflush(stdout);
  const auto got = w.wait_for(count, std::chrono::seconds(timeout_s), [&](std::size_t n) {
    std::fprintf(stderr, "bind_bench: %s: %zu/%zu bound\n", ns.c_str(), n, count);
  });
  std::printf("first %.6f\n", w.first_bind_epoch());
  if (got < count) {
    std::printf("timeout %zu %zu\n", got, count);
    return 1;
  }
  std::printf("done %.6f %zu\n", w.count_reached_epoch(count), count);
  return 0;
}

int cmd_pod(const std::string& kc, const std::string& ns, const std::string& name, const std::string& sched, int timeout_s) {
  auto cli = make_client(kc, 4);
  auto body = json::parse(pod_json(ns, name, sched));
  auto r = cli->create(pods_in(ns), *body);
  const double created = epoch_now();
  if (!r) {
    std::fprintf(stderr, "bind_bench: create %s/%s: %s\n", ns.c_str(), name.c_str(), r.err().message.c_str());
    return 1;
  }
  std::printf("created %.6f\n", created);
  std::fflush(stdout);
  bound_watch w(*cli, ns, "metadata.name=" + name);
  w.mark(1);
  w.start();
  if (w.wait_for(1, std::chrono::seconds(timeout_s)) < 1) {
    std::printf("timeout\n");
    return 1;
  }
  std::printf("bound %.6f\n", w.count_reached_epoch(1));
  return 0;
}

// The pods a controller that follows only these lists reads: a consistent LIST, then one from the
// watch cache, both decoded; their milliseconds appended.
bool list_selected(client::client& cli, const std::string& selector, std::vector<double>& sel_ms,
                   std::vector<double>& sel_cache_ms, std::size_t& items) {
  auto t = steady::now();
  auto selected = cli.list({"", "v1", "pods", "", "", ""}, {.field_selector = selector});
  sel_ms.push_back(seconds_since(t) * 1000);
  t = steady::now();
  auto sel_cached = cli.list({"", "v1", "pods", "", "", ""}, {.field_selector = selector, .resource_version = "0"});
  sel_cache_ms.push_back(seconds_since(t) * 1000);
  if (!selected || !sel_cached) {
    std::fprintf(stderr, "bind_bench: list pods %s: %s\n", selector.c_str(),
                 (!selected ? selected.err() : sel_cached.err()).message.c_str());
    return false;
  }
  items = selected->find("items")->as_array().size();
  return true;
}

std::string all_ms(const std::vector<double>& v) {
  std::string s;
  for (double x : v)
    s += " " + std::to_string(static_cast<long>(x));
  return s;
}

void print_selected(const std::string& selector, std::vector<double> sel_ms, std::vector<double> sel_cache_ms,
                    std::size_t items) {
  std::sort(sel_ms.begin(), sel_ms.end());
  std::sort(sel_cache_ms.begin(), sel_cache_ms.end());
  std::printf("list-selected %.1f %zu %.1f   (ms min, pods, ms min from the watch cache; %s, decoded; all ms:%s; from the cache:%s)\n",
              sel_ms.front(), items, sel_cache_ms.front(), selector.c_str(), all_ms(sel_ms).c_str(),
              all_ms(sel_cache_ms).c_str());
}

// Only the LISTs of the pods FIELD_SELECTOR picks (what the head-to-head compares a restart with,
// between restarts: the LISTs of every pod, 50 MiB of JSON each, leave the API server garbage that
// the next restart would pay for).
int cmd_list_selected(const std::string& kc, const std::string& selector) {
  auto cli = make_client(kc, 4);
  std::vector<double> sel_ms, sel_cache_ms;
  std::size_t items = 0;
  if (!list_selected(*cli, selector, sel_ms, sel_cache_ms, items))
    return 1;
  print_selected(selector, sel_ms, sel_cache_ms, items);
  return 0;
}

int cmd_list(const std::string& kc, int repeat, const std::string& selector) {
  auto cli = make_client(kc, 4);
  std::vector<double> raw_ms, dec_ms, paged_ms, cache_ms, sel_ms, sel_cache_ms;
  std::size_t bytes = 0, items = 0, sel_items = 0;
  expected<json::value> last = error{"not listed"};
  for (int i = 0; i < repeat; ++i) {
    auto t = steady::now();
    auto r = cli->send_sync({.method = "GET", .path = "/api/v1/pods"});
    raw_ms.push_back(seconds_since(t) * 1000);
    if (!r || r->status != 200) {
      std::fprintf(stderr, "bind_bench: GET /api/v1/pods: %s\n", r ? std::to_string(r->status).c_str() : r.err().message.c_str());
      return 1;
    }
    bytes = r->body.size();
    t = steady::now();
    last = cli->list({"", "v1", "pods", "", "", ""});
    dec_ms.push_back(seconds_since(t) * 1000);
    if (!last) {
      std::fprintf(stderr, "bind_bench: list pods: %s\n", last.err().message.c_str());
      return 1;
    }
    items = last->find("items")->as_array().size();
    // As an informer without resourceVersion=0 pages it (limit 500, consistent reads from etcd).
    t = steady::now();
    auto paged = cli->list_all({"", "v1", "pods", "", "", ""}, {.limit = 500});
    paged_ms.push_back(seconds_since(t) * 1000);
    // As client-go's reflector starts: resourceVersion=0, served whole from the watch cache.
    t = steady::now();
    auto cached = cli->list({"", "v1", "pods", "", "", ""}, {.resource_version = "0"});
    cache_ms.push_back(seconds_since(t) * 1000);
    if (!paged || !cached) {
      std::fprintf(stderr, "bind_bench: list pods: %s\n", (!paged ? paged.err() : cached.err()).message.c_str());
      return 1;
    }
    if (selector.empty())
      continue;
    if (!list_selected(*cli, selector, sel_ms, sel_cache_ms, sel_items))
      return 1;
  }
  std::sort(raw_ms.begin(), raw_ms.end());
  std::sort(dec_ms.begin(), dec_ms.end());
  std::sort(paged_ms.begin(), paged_ms.end());
  std::sort(cache_ms.begin(), cache_ms.end());
  std::printf("list-raw %.1f %zu %zu   (ms min, bytes, pods; all ms:%s)\n", raw_ms.front(), bytes, items, all_ms(raw_ms).c_str());
  std::printf("list-decoded %.1f %zu   (ms min, pods; all ms:%s)\n", dec_ms.front(), items, all_ms(dec_ms).c_str());
  std::printf("list-paged %.1f   (ms min, decoded, pages of 500; all ms:%s)\n", paged_ms.front(), all_ms(paged_ms).c_str());
  std::printf("list-rv0 %.1f   (ms min, decoded, resourceVersion=0; all ms:%s)\n", cache_ms.front(), all_ms(cache_ms).c_str());
  if (!selector.empty())
    print_selected(selector, sel_ms, sel_cache_ms, sel_items);
  // GPUs requested per node by the bound pods: all of them, and those bound by Kozmo (with
  // HiveD's bind-info annotation) alone.
  std::map<std::string, long> gpus, kozmo_gpus;
  for (const auto& p : last->find("items")->as_array()) {
    const auto* node = p.at_path({"spec", "nodeName"});
    if (!node || !node->is_string() || node->as_string().empty())
      continue;
    long n = 0;
    if (const auto* cs = p.at_path({"spec", "containers"}); cs && cs->is_array())
      for (const auto& c : cs->as_array())
        if (const auto* g = c.at_path({"resources", "limits", "nvidia.com/gpu"}))
          n += std::atol(json::scalar_text(*g).c_str());
    gpus[node->as_string()] += n;
    if (const auto* a = p.at_path({"metadata", "annotations"}); a && a->find("hivedscheduler.microsoft.com/pod-bind-info"))
      kozmo_gpus[node->as_string()] += n;
  }
  long over = 0, worst = 0, kozmo_worst = 0;
  for (const auto& [node, n] : gpus) {
    over += n > 8 ? 1 : 0;
    worst = std::max(worst, n);
  }
  for (const auto& [node, n] : kozmo_gpus)
    kozmo_worst = std::max(kozmo_worst, n);
  std::printf("overcommit %ld %ld %zu %ld %zu   (nodes asked for more than 8 GPUs, the most on one node, nodes with pods;"
              " the most on one node from Kozmo's pods alone, nodes with Kozmo's pods)\n",
              over, worst, gpus.size(), kozmo_worst, kozmo_gpus.size());
  return 0;
}

std::vector<int> int_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ','))
    if (int v = std::atoi(part.c_str()); v > 0)
      out.push_back(v);
  return out;
}

int usage() {
  std::fprintf(stderr, "usage: bind_bench setup KC NODES PODS NS:SCHEDULER...\n"
                       "       bind_bench bind KC NS CONC[,CONC...]\n"
                       "       bind_bench wait KC NS COUNT [TIMEOUT_S]\n"
                       "       bind_bench pod KC NS NAME SCHEDULER [TIMEOUT_S]\n"
                       "       bind_bench list KC [REPEAT] [FIELD_SELECTOR]\n"
                       "       bind_bench list-selected KC FIELD_SELECTOR\n");
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3)
    return usage();
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string cmd = argv[1], kc = argv[2];
  if (cmd == "setup" && argc >= 6) {
    std::vector<std::pair<std::string, std::string>> spaces;
    for (int i = 5; i < argc; ++i) {
      std::string a = argv[i];
      auto colon = a.find(':');
      if (colon == std::string::npos)
        return usage();
      spaces.emplace_back(a.substr(0, colon), a.substr(colon + 1));
    }
    return cmd_setup(kc, std::atoi(argv[3]), std::atoi(argv[4]), spaces);
  }
  if (cmd == "bind" && argc == 5) {
    auto concs = int_list(argv[4]);
    if (concs.empty())
      return usage();
    return cmd_bind(kc, argv[3], concs);
  }
  if (cmd == "wait" && argc >= 5)
    return cmd_wait(kc, argv[3], std::strtoul(argv[4], nullptr, 10), argc > 5 ? std::atoi(argv[5]) : 1800);
  if (cmd == "pod" && argc >= 6)
    return cmd_pod(kc, argv[3], argv[4], argv[5], argc > 6 ? std::atoi(argv[6]) : 600);
  if (cmd == "list-selected" && argc == 4)
    return cmd_list_selected(kc, argv[3]);
  if (cmd == "list" && argc >= 3)
    return cmd_list(kc, argc > 3 ? std::atoi(argv[3]) : 3, argc > 4 ? argv[4] : "");
  return usage();
}
