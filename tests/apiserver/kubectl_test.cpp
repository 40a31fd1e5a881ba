// The real kubectl (with its default client-side settings: validation on, its own discovery,
// OpenAPI, Table printing, strategic merge patches and protobuf bodies) against the server.
#include "tests/apiserver/fixture.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace kozmo;
using namespace kozmo::test;
namespace fs = std::filesystem;

namespace {

struct kubectl_env {
  explicit kubectl_env(std::uint16_t port) {
    dir = fs::temp_directory_path() / ("kozmo-kubectl-" + std::to_string(::getpid()) + "-" + std::to_string(port));
    fs::create_directories(dir);
    std::ofstream(dir / "kubeconfig") << "apiVersion: v1\nkind: Config\nclusters:\n- name: kozmo\n  cluster:\n"
                                         "    server: http://127.0.0.1:" << port
                                      << "\ncontexts:\n- name: kozmo\n  context:\n    cluster: kozmo\n"
                                         "    namespace: default\ncurrent-context: kozmo\nusers: []\n";
  }
  ~kubectl_env() { fs::remove_all(dir); }

  struct result {
    int rc;
    std::string out;
  };
  result run(const std::string& args, const std::string& prefix = {}) const {
    std::string cmd = prefix + "kubectl --kubeconfig " + (dir / "kubeconfig").string() + " --cache-dir " +
                      (dir / "cache").string() + " " + args + " 2>&1";
    result r{-1, {}};
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p)
      return r;
    std::array<char, 4096> buf;
    while (std::fgets(buf.data(), buf.size(), p))
      r.out += buf.data();
    int status = ::pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
  }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(dir / name) << content;
    return (dir / name).string();
  }
  fs::path dir;
};

bool have_kubectl() { return std::system("command -v kubectl >/dev/null 2>&1") == 0; }

const char* const pod_v1 = R"(apiVersion: v1
kind: Pod
metadata:
  name: p1
  labels:
    app: demo
spec:
  containers:
  - name: c
    image: busybox:1.36
)";

const char* const crd_yaml = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.wire.example.com
spec:
  group: wire.example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, shortNames: [gz]}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
)";

} // namespace

TEST_CASE("kubectl with default validation creates, applies, lists, watches, cordons and deletes") {
  if (!have_kubectl()) {
    WARN("kubectl not found: skipped");
    return;
  }
  running_server s;
  kubectl_env k(s.srv.port());

  auto created = k.run("create -f " + k.write("pod.yaml", pod_v1));
  INFO(created.out);
  CHECK(created.rc == 0);
  CHECK(created.out.find("pod/p1 created") != std::string::npos);

  auto bogus = k.run("create -f " + k.write("bogus.yaml", std::string(pod_v1) + "    bogusField: 1\n"));
  INFO(bogus.out);
  CHECK(bogus.rc != 0);
  CHECK(bogus.out.find("unknown field \"spec.containers[0].bogusField\"") != std::string::npos);

  auto apply_new = k.run("apply -f " + k.write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n"));
  INFO(apply_new.out);
  CHECK(apply_new.out.find("configmap/cm created") != std::string::npos);
  auto apply_changed = k.run("apply -f " + k.write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v2\n"));
  INFO(apply_changed.out);
  CHECK(apply_changed.out.find("configmap/cm configured") != std::string::npos);
  CHECK(str(s.http->get(configmaps + "/cm").json(), {"data", "k"}) == "v2");
  auto apply_same = k.run("apply -f " + (k.dir / "cm.yaml").string());
  CHECK(apply_same.out.find("configmap/cm unchanged") != std::string::npos);

  auto apply_pod = k.run("apply -f " + k.write("pod2.yaml", std::string(pod_v1).replace(std::string(pod_v1).find("busybox:1.36"), 12, "busybox:1.37")));
  INFO(apply_pod.out);
  CHECK(apply_pod.rc == 0);
  CHECK(apply_pod.out.find("pod/p1 configured") != std::string::npos);
  CHECK(s.http->get(pods + "/p1").json().at_path({"spec", "containers"})->as_array().at(0).get_string("image") == "busybox:1.37");

  auto get = k.run("get pods");
  INFO(get.out);
  CHECK(get.out.find("NAME") != std::string::npos);
  CHECK(get.out.find("READY") != std::string::npos);
  CHECK(get.out.find("p1") != std::string::npos);
  CHECK(get.out.find("Pending") != std::string::npos);

  auto watch = k.run("get pods -w", "timeout 3 ");
  INFO(watch.out);
  CHECK(watch.out.find("p1") != std::string::npos);

  auto ns = k.run("create namespace team-a");
  INFO(ns.out);
  CHECK(ns.out.find("namespace/team-a created") != std::string::npos);
  auto cm = k.run("create configmap lit --from-literal=k=v");
  INFO(cm.out);
  CHECK(cm.out.find("configmap/lit created") != std::string::npos);
  auto secret = k.run("create secret generic sec --from-literal=password=x");
  INFO(secret.out);
  CHECK(secret.out.find("secret/sec created") != std::string::npos);

  s.http->post("/api/v1/nodes", R"({"metadata":{"name":"n1"},"status":{"conditions":[{"type":"Ready","status":"True"}]}})");
  auto cordon = k.run("cordon n1");
  INFO(cordon.out);
  CHECK(cordon.out.find("node/n1 cordoned") != std::string::npos);
  auto nodes = k.run("get nodes");
  INFO(nodes.out);
  CHECK(nodes.out.find("Ready,SchedulingDisabled") != std::string::npos);

  auto describe = k.run("describe pod p1");
  INFO(describe.out);
  CHECK(describe.rc == 0);
  CHECK(describe.out.find("busybox:1.37") != std::string::npos);

  auto del = k.run("delete pod p1");
  INFO(del.out);
  CHECK(del.out.find("pod \"p1\" deleted") != std::string::npos);
  CHECK(s.http->get(pods + "/p1").status == 404);
}

TEST_CASE("kubectl creates a CRD, applies a custom resource twice and lists it by plural and short name") {
  if (!have_kubectl()) {
    WARN("kubectl not found: skipped");
    return;
  }
  running_server s;
  kubectl_env k(s.srv.port());
  auto crd = k.run("create -f " + k.write("crd.yaml", crd_yaml));
  INFO(crd.out);
  CHECK(crd.out.find("customresourcedefinition.apiextensions.k8s.io/gizmos.wire.example.com created") != std::string::npos);

  std::string cr = "apiVersion: wire.example.com/v1\nkind: Gizmo\nmetadata:\n  name: g1\nspec:\n  size: 1\n";
  auto first = k.run("apply -f " + k.write("cr.yaml", cr));
  INFO(first.out);
  CHECK(first.out.find("gizmo.wire.example.com/g1 created") != std::string::npos);
  auto second = k.run("apply -f " + k.write("cr.yaml", "apiVersion: wire.example.com/v1\nkind: Gizmo\nmetadata:\n  name: g1\nspec:\n  size: 2\n"));
  INFO(second.out);
  CHECK(second.out.find("gizmo.wire.example.com/g1 configured") != std::string::npos);

  auto get = k.run("get gizmos");
  INFO(get.out);
  CHECK(get.out.find("SIZE") != std::string::npos);
  CHECK(get.out.find("g1") != std::string::npos);
  CHECK(get.out.find("2") != std::string::npos);
  CHECK(k.run("get gz").out.find("g1") != std::string::npos);

  auto bogus = k.run("apply -f " + k.write("bad.yaml", "apiVersion: wire.example.com/v1\nkind: Gizmo\nmetadata:\n  name: g2\nspec:\n  size: 1\n  bogus: 2\n"));
  INFO(bogus.out);
  CHECK(bogus.rc != 0);
  CHECK(bogus.out.find("unknown field \"spec.bogus\"") != std::string::npos);

  auto del = k.run("delete gizmo g1");
  CHECK(del.out.find("deleted") != std::string::npos);
}
