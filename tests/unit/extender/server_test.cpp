// The extender server over a real socket, answered by a backend that drives a real scheduler
// core through extender_logic (only the API server's binding write is recorded instead of sent).
#include "actors/extender/extender_logic.hpp"
#include "actors/extender/extender_server.hpp"
#include "tests/unit/extender/cluster.hpp"
#include "tests/support/raw_http.hpp"

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <thread>

using namespace kozmo;
using namespace kozmo::extender;
using kozmo::extender::test::cluster_yaml;
using kozmo::test::raw_connection;

namespace {


// Serialises calls with a mutex, as the actor serialises them with its mailbox. Inspect is
// answered from another thread, later, to exercise the server's asynchronous hand-back.
class direct_backend final : public extender_backend {
public:
  explicit direct_backend(extender_logic logic) : logic_(std::move(logic)) {}
  ~direct_backend() override {
    for (auto& t : threads_) t.join();
  }

  void filter(filter_args args, reply_fn<filter_result> done) override {
    std::lock_guard<std::mutex> lock(m_);
    auto out = logic_.filter(args, 1000);
    if (out.warning) warnings.push_back(*out.warning);
    done(std::move(out.result));
  }
  void preempt(preempt_args args, reply_fn<preempt_result> done) override {
    std::lock_guard<std::mutex> lock(m_);
    done(logic_.preempt(args, 1000));
  }
  void bind(bind_args args, reply_fn<bind_result> done) override {
    std::lock_guard<std::mutex> lock(m_);
    auto b = logic_.bind(args);
    if (!b) return done(b.err());
    written.push_back(*b);
    logic_.bind_done(b->pod_uid, true);
    done(bind_result{});
  }
  void inspect(std::string path, inspect_fn done) override {
    std::lock_guard<std::mutex> lock(m_);
    threads_.emplace_back([this, path, done] {
      std::lock_guard<std::mutex> inner(m_);
      done(logic_.inspect(path));
    });
  }
  void feed(const k8s::node& n) {
    std::lock_guard<std::mutex> lock(m_);
    logic_.on_node(n, false);
  }

  std::vector<client::binding> written;
  std::vector<pod_warning> warnings;

private:
  std::mutex m_;
  extender_logic logic_;
  std::vector<std::thread> threads_;
};

k8s::node ready_node(const std::string& name) {
  k8s::node n;
  n.metadata.name = name;
  n.status.conditions.push_back({"Ready", "True", "", "", {}, {}, {}});
  return n;
}

k8s::pod gang_pod(const std::string& name, const std::string& uid, const std::string& spec) {
  k8s::pod p;
  p.metadata.name = name;
  p.metadata.namespace_ = "team";
  p.metadata.uid = uid;
  p.metadata.annotations["hivedscheduler.microsoft.com/pod-scheduling-spec"] = spec;
  p.spec.scheduler_name = "kozmo-extender";
  return p;
}

constexpr const char* gang_spec = R"(virtualCluster: vc1
priority: 10
leafCellNumber: 2
affinityGroup:
  name: team/job1
  members: [{podNumber: 2, leafCellNumber: 2}]
)";

std::string filter_body(const k8s::pod& p) { return encode(filter_args{p, {"node-a", "node-b"}, false}); }

struct fixture {
  std::shared_ptr<direct_backend> backend;
  std::unique_ptr<extender_server> server;
  unsigned short port = 0;

  explicit fixture(server_options opts = {}) {
    auto core = scheduler::scheduler_core::load(cluster_yaml);
    REQUIRE(core);
    backend = std::make_shared<direct_backend>(extender_logic(std::move(*core)));
    backend->feed(ready_node("node-a"));
    backend->feed(ready_node("node-b"));
    server = std::make_unique<extender_server>(backend, opts);
    auto p = server->start();
    REQUIRE(p);
    port = *p;
  }
};

std::vector<int> indices(const std::string& csv) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos < csv.size()) {
    auto end = csv.find(',', pos);
    if (end == std::string::npos) end = csv.size();
    out.push_back(std::stoi(csv.substr(pos, end - pos)));
    pos = end + 1;
  }
  return out;
}

} // namespace

TEST_CASE("kube-scheduler's filter and bind place both pods of a gang on GPUs that do not overlap") {
  fixture f;
  raw_connection c(f.port);
  REQUIRE(c.connected());

  auto first = c.request("POST", "/v1/extender/filter", filter_body(gang_pod("w-0", "u-0", gang_spec)));
  REQUIRE(first.status == 200);
  CHECK(first.headers["content-type"] == "application/json");
  auto r0 = decode_filter_result(first.body);
  REQUIRE(r0);
  CHECK(r0->error.empty());
  REQUIRE(r0->node_names.size() == 1);

  // The same connection, kept alive, serves the next calls.
  auto bound0 = c.request("POST", "/v1/extender/bind", encode(bind_args{"w-0", "team", "u-0", r0->node_names[0]}));
  REQUIRE(bound0.status == 200);
  CHECK(decode_bind_result(bound0.body)->error.empty());

  auto second = c.request("POST", "/v1/extender/filter", filter_body(gang_pod("w-1", "u-1", gang_spec)));
  REQUIRE(second.status == 200);
  auto r1 = decode_filter_result(second.body);
  REQUIRE(r1);
  REQUIRE(r1->node_names.size() == 1);
  auto bound1 = c.request("POST", "/v1/extender/bind", encode(bind_args{"w-1", "team", "u-1", r1->node_names[0]}));
  REQUIRE(bound1.status == 200);
  CHECK(decode_bind_result(bound1.body)->error.empty());

  REQUIRE(f.backend->written.size() == 2);
  const auto& b0 = f.backend->written[0];
  const auto& b1 = f.backend->written[1];
  CHECK(b0.pod == "w-0");
  CHECK(b0.node == r0->node_names[0]);
  CHECK(b0.pod_uid == "u-0");
  CHECK(b0.annotations.count("hivedscheduler.microsoft.com/pod-bind-info") == 1);
  auto iso0 = indices(b0.annotations.at("hivedscheduler.microsoft.com/pod-leaf-cell-isolation"));
  auto iso1 = indices(b1.annotations.at("hivedscheduler.microsoft.com/pod-leaf-cell-isolation"));
  CHECK(iso0.size() == 2);
  CHECK(iso1.size() == 2);
  // The second pod binds to the placement the gang kept for it: named in the first pod's bind-info.
  CHECK_THAT(b0.annotations.at("hivedscheduler.microsoft.com/pod-bind-info"), Catch::Contains(b1.node));
  if (b0.node == b1.node)
    for (int i : iso0) CHECK(std::find(iso1.begin(), iso1.end(), i) == iso1.end());
}

TEST_CASE("a filter repeated for a pod already placed returns the same node") {
  fixture f;
  raw_connection c(f.port);
  auto body = filter_body(gang_pod("w-0", "u-0", gang_spec));
  auto a = decode_filter_result(c.request("POST", "/v1/extender/filter", body).body);
  auto b = decode_filter_result(c.request("POST", "/v1/extender/filter", body).body);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(a->node_names.size() == 1);
  CHECK(b->node_names == a->node_names);
}

TEST_CASE("a bind to a node other than the one the GPU scheduler chose is refused with 400") {
  fixture f;
  raw_connection c(f.port);
  auto r = decode_filter_result(c.request("POST", "/v1/extender/filter", filter_body(gang_pod("w-0", "u-0", gang_spec))).body);
  REQUIRE(r);
  REQUIRE(r->node_names.size() == 1);
  std::string other = r->node_names[0] == "node-a" ? "node-b" : "node-a";
  auto reply = c.request("POST", "/v1/extender/bind", encode(bind_args{"w-0", "team", "u-0", other}));
  CHECK(reply.status == 400);
  auto body = json::parse(reply.body);
  REQUIRE(body);
  CHECK(body->get_int("code") == 400);
  CHECK_THAT(body->get_string("message"), Catch::Contains("placed it on node " + r->node_names[0]));
  CHECK(f.backend->written.empty());

  SECTION("and so is a bind for a pod that never passed filter") {
    auto unknown = c.request("POST", "/v1/extender/bind", encode(bind_args{"x", "team", "u-x", "node-a"}));
    CHECK(unknown.status == 400);
    CHECK_THAT(unknown.body, Catch::Contains("filter"));
  }
}

TEST_CASE("a gang larger than the cluster waits, and every node says why") {
  fixture f;
  raw_connection c(f.port);
  auto big = gang_pod("big-0", "u-big", R"(virtualCluster: vc1
leafCellNumber: 4
affinityGroup: {name: team/big, members: [{podNumber: 3, leafCellNumber: 4}]}
)");
  auto reply = c.request("POST", "/v1/extender/filter", filter_body(big));
  REQUIRE(reply.status == 200);
  auto r = decode_filter_result(reply.body);
  REQUIRE(r);
  CHECK(r->node_names.empty());
  CHECK(r->error.empty());
  REQUIRE(r->failed_nodes.size() == 2);
  for (const auto& [node, why] : r->failed_nodes)
    CHECK_THAT(why, Catch::StartsWith("Pod is waiting for preemptible or free resource to appear: "));
}

TEST_CASE("a malformed scheduling spec fails the filter with its message and asks for a Warning event") {
  fixture f;
  raw_connection c(f.port);
  auto bad = gang_pod("bad-0", "u-bad", "virtualCluster: vc1\nleafCellNumber: [oops\n");
  auto reply = c.request("POST", "/v1/extender/filter", filter_body(bad));
  REQUIRE(reply.status == 200);
  auto r = decode_filter_result(reply.body);
  REQUIRE(r);
  CHECK(r->node_names.empty());
  CHECK_THAT(r->error, Catch::Contains("team/bad-0"));
  REQUIRE(f.backend->warnings.size() == 1);
  CHECK(f.backend->warnings[0].uid == "u-bad");
  CHECK(f.backend->warnings[0].message == r->error);

  // Asked again, the same message is not posted twice.
  c.request("POST", "/v1/extender/filter", filter_body(bad));
  CHECK(f.backend->warnings.size() == 1);
}

TEST_CASE("bodies that are not extender requests get 400 with HiveD's error object") {
  fixture f;
  raw_connection c(f.port);
  auto reply = c.request("POST", "/v1/extender/filter", "{\"Pod\": {");
  CHECK(reply.status == 400);
  auto body = json::parse(reply.body);
  REQUIRE(body);
  CHECK(body->get_int("code") == 400);
  CHECK_THAT(body->get_string("message"), Catch::Contains("malformed JSON"));
  // The connection stays usable.
  CHECK(c.request("GET", "/healthz").status == 200);
}

TEST_CASE("the inspect views answer JSON, and unknown names and paths answer 404") {
  fixture f;
  raw_connection c(f.port);
  c.request("POST", "/v1/extender/filter", filter_body(gang_pod("w-0", "u-0", gang_spec)));

  for (const char* path : {"/v1/inspect/affinitygroups/", "/v1/inspect/clusterstatus",
                           "/v1/inspect/clusterstatus/physicalcluster", "/v1/inspect/clusterstatus/virtualclusters/",
                           "/v1/inspect/clusterstatus/virtualclusters/vc1", "/v1/inspect/affinitygroups/team%2Fjob1"}) {
    INFO(path);
    auto reply = c.request("GET", path);
    CHECK(reply.status == 200);
    CHECK(json::parse(reply.body));
  }
  auto groups = json::parse(c.request("GET", "/v1/inspect/affinitygroups/").body);
  REQUIRE(groups);
  CHECK_THAT(json::dump(*groups), Catch::Contains("team/job1"));
  auto status = json::parse(c.request("GET", "/v1/inspect/clusterstatus").body);
  REQUIRE(status);
  CHECK(status->find("physicalCluster"));
  CHECK(status->find("virtualClusters"));

  auto missing_group = c.request("GET", "/v1/inspect/affinitygroups/nope");
  CHECK(missing_group.status == 404);
  CHECK(json::parse(missing_group.body)->get_int("code") == 404);
  CHECK(c.request("GET", "/v1/inspect/clusterstatus/virtualclusters/nope").status == 404);
  auto unknown = c.request("GET", "/v1/nothing/here");
  CHECK(unknown.status == 404);
  CHECK(json::parse(unknown.body)->get_int("code") == 404);
  CHECK(c.request("GET", "/v1/extender/filter").status == 405);
  auto health = c.request("GET", "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body == "ok");
  // Prometheus scrapes the extender's own port.
  auto metrics = c.request("GET", "/metrics");
  CHECK(metrics.status == 200);
  CHECK_THAT(metrics.body, Catch::Contains("# TYPE kozmo_scheduler_decisions_total counter"));
  CHECK(c.request("POST", "/metrics").status == 405);
}

TEST_CASE("broken clients do not bring the server down") {
  server_options opts;
  opts.body_limit = 1024;
  fixture f(opts);
  SECTION("garbage instead of HTTP is answered 400 and the connection closed") {
    raw_connection c(f.port);
    c.send_raw("this is not http\r\n\r\n");
    CHECK(c.read_reply().status == 400);
    CHECK(c.closed_by_server());
  }
  SECTION("a body over the limit is answered 413") {
    raw_connection c(f.port);
    auto reply = c.request("POST", "/v1/extender/filter", std::string(4096, ' '));
    CHECK(reply.status == 413);
  }
  SECTION("a client that disconnects mid-request") {
    {
      raw_connection c(f.port);
      c.send_raw("POST /v1/extender/filter HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"Pod\"");
    }
  }
  raw_connection after(f.port);
  CHECK(after.request("GET", "/healthz").status == 200);
}

TEST_CASE("stopping the server with answers still pending neither hangs nor crashes") {
  fixture f;
  {
    raw_connection c(f.port);
    c.send_raw("GET /v1/inspect/clusterstatus HTTP/1.1\r\nHost: x\r\n\r\n");
    f.server->stop();
  }
  f.server->stop(); // idempotent
  SUCCEED();
}

TEST_CASE("a fresh extender fed the pods of a half-bound gang gives the other pod the GPUs kept for it") {
  auto core = scheduler::scheduler_core::load(cluster_yaml);
  REQUIRE(core);
  extender_logic before(std::move(*core));
  before.on_node(ready_node("node-a"), false);
  before.on_node(ready_node("node-b"), false);
  auto w0 = gang_pod("w-0", "u-0", gang_spec);
  auto w1 = gang_pod("w-1", "u-1", gang_spec);
  auto first = before.filter(filter_args{w0, {"node-a", "node-b"}, false}, 1000);
  REQUIRE(first.result.node_names.size() == 1);
  auto binding = before.bind(bind_args{"w-0", "team", "u-0", first.result.node_names[0]});
  REQUIRE(binding);

  // What the API server holds after the binding: w-0 on its node with the annotations.
  w0.spec.node_name = binding->node;
  for (const auto& [k, v] : binding->annotations) w0.metadata.annotations[k] = v;

  auto fresh_core = scheduler::scheduler_core::load(cluster_yaml);
  REQUIRE(fresh_core);
  extender_logic after(std::move(*fresh_core));
  after.on_node(ready_node("node-a"), false);
  after.on_node(ready_node("node-b"), false);
  // The watch's first LIST comes in any order: the waiting pod may come before the bound one.
  bool bound_first = GENERATE(true, false);
  if (bound_first) {
    REQUIRE(after.on_pod(w0, false));
    REQUIRE(after.on_pod(w1, false));
  } else {
    REQUIRE(after.on_pod(w1, false));
    REQUIRE(after.on_pod(w0, false));
  }
  auto second = after.filter(filter_args{w1, {"node-a", "node-b"}, false}, 2000);
  REQUIRE(second.result.node_names.size() == 1);
  auto b1 = after.bind(bind_args{"w-1", "team", "u-1", second.result.node_names[0]});
  REQUIRE(b1);
  INFO("w-0 bind-info: " << binding->annotations.at("hivedscheduler.microsoft.com/pod-bind-info"));
  if (b1->node == binding->node)
    CHECK(b1->annotations.at("hivedscheduler.microsoft.com/pod-leaf-cell-isolation") !=
          binding->annotations.at("hivedscheduler.microsoft.com/pod-leaf-cell-isolation"));
}

TEST_CASE("preempt answers the victims per node, none when the pod fits without evicting anyone") {
  fixture f;
  raw_connection c(f.port);
  preempt_args args;
  args.pod = gang_pod("w-0", "u-0", gang_spec);
  args.node_victims["node-a"] = meta_victims{{"someone"}, 0};
  auto reply = c.request("POST", "/v1/extender/preempt", encode(args));
  REQUIRE(reply.status == 200);
  auto r = decode_preempt_result(reply.body);
  REQUIRE(r);
  CHECK(r->node_victims.empty());
  CHECK(c.request("POST", "/v1/extender/preempt", "{}").status == 400);
}

namespace {
// Never answers: the server must answer for it.
struct silent_backend final : extender_backend {
  void filter(filter_args, reply_fn<filter_result>) override {}
  void preempt(preempt_args, reply_fn<preempt_result>) override {}
  void bind(bind_args, reply_fn<bind_result>) override {}
  void inspect(std::string, inspect_fn) override {}
};
} // namespace

TEST_CASE("a backend that never answers gets the request a 504 instead of a hung kube-scheduler") {
  server_options opts;
  opts.backend_timeout = std::chrono::milliseconds(50);
  extender_server server(std::make_shared<silent_backend>(), opts);
  auto port = server.start();
  REQUIRE(port);
  raw_connection c(*port);
  auto reply = c.request("POST", "/v1/extender/bind", encode(bind_args{"p", "ns", "u", "n"}));
  CHECK(reply.status == 504);
  CHECK(json::parse(reply.body)->get_int("code") == 504);
  CHECK(c.request("GET", "/healthz").status == 200);
}

TEST_CASE("the extender's server holds the shared limits: a half-sent head is cut, a connection over the limit "
          "is closed, the rest are served") {
  server_options opts;
  opts.limits.header_timeout = std::chrono::milliseconds(300);
  opts.limits.max_connections = 3;
  fixture f(opts);
  raw_connection slow(f.port);
  slow.send_raw("POST /v1/extender/filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le");
  CHECK(slow.closed_within(5000));

  std::vector<std::unique_ptr<raw_connection>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<raw_connection>(f.port));
    REQUIRE(held.back()->request("GET", "/healthz").status == 200);
  }
  REQUIRE(f.server->open_connections() == 3);
  raw_connection over(f.port);
  CHECK(over.closed_within(5000));
  CHECK(held.front()->request("GET", "/healthz").status == 200);
}
