// The core kinds users' manifests bring along beside their jobs: PersistentVolumeClaim,
// PersistentVolume, ResourceQuota and LimitRange, stored with Kubernetes' defaults, refused
// with its messages, printed with kubectl's columns.
#include "tests/apiserver/fixture.hpp"

using namespace kozmo;
using namespace kozmo::test;

namespace {

const std::string claims = "/api/v1/namespaces/default/persistentvolumeclaims";
const std::string volumes = "/api/v1/persistentvolumes";
const std::string quotas = "/api/v1/namespaces/default/resourcequotas";

const header_list table_accept = {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}};

std::vector<std::string> cells(const json::value& table) {
  std::vector<std::string> out;
  for (const auto& c : table.find("rows")->as_array().at(0).find("cells")->as_array())
    out.push_back(c.is_string() ? c.as_string() : json::dump(c));
  return out;
}

} // namespace

TEST_CASE("a claim and a volume are stored Pending with Kubernetes' defaults") {
  running_server s;
  auto c = s.http->post(claims, R"({"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],
                                    "resources":{"requests":{"storage":"1Gi"}}}})");
  REQUIRE(c.status == 201);
  CHECK(str(c.json(), {"spec", "volumeMode"}) == "Filesystem");
  CHECK(str(c.json(), {"status", "phase"}) == "Pending");
  auto v = s.http->post(volumes, R"({"metadata":{"name":"disk"},"spec":{"accessModes":["ReadWriteOnce"],
                                     "capacity":{"storage":"10Gi"},"hostPath":{"path":"/data"}}})");
  REQUIRE(v.status == 201);
  CHECK(str(v.json(), {"spec", "persistentVolumeReclaimPolicy"}) == "Retain");
  CHECK(str(v.json(), {"status", "phase"}) == "Pending");
  CHECK(s.http->get("/api/v1/persistentvolumes/disk").status == 200);
}

TEST_CASE("a claim without access modes or a storage request is refused with Kubernetes' messages") {
  running_server s;
  auto r = s.http->post(claims, R"({"metadata":{"name":"bad"},"spec":{"resources":{}}})");
  REQUIRE(r.status == 422);
  auto msg = str(r.json(), {"message"});
  CHECK_THAT(msg, Catch::Contains("spec.accessModes: Required value: at least 1 access mode is required"));
  CHECK_THAT(msg, Catch::Contains("spec.resources[storage]: Required value"));
}

TEST_CASE("a volume needs a capacity and exactly one volume source") {
  running_server s;
  auto none = s.http->post(volumes, R"({"metadata":{"name":"v"},"spec":{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"}}})");
  REQUIRE(none.status == 422);
  CHECK_THAT(str(none.json(), {"message"}), Catch::Contains("spec: Required value: must specify a volume type"));
  auto two = s.http->post(volumes, R"({"metadata":{"name":"v"},"spec":{"accessModes":["ReadWriteOnce"],
                                       "capacity":{"storage":"1Gi"},"hostPath":{"path":"/a"},"nfs":{"server":"x","path":"/"}}})");
  REQUIRE(two.status == 422);
  CHECK_THAT(str(two.json(), {"message"}), Catch::Contains("may not specify more than 1 volume type"));
  auto nocap = s.http->post(volumes, R"({"metadata":{"name":"v"},"spec":{"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/a"}}})");
  REQUIRE(nocap.status == 422);
  CHECK_THAT(str(nocap.json(), {"message"}), Catch::Contains("spec.capacity: Required value"));
}

TEST_CASE("a claim's spec is fixed once made, but for its storage request and its volume") {
  running_server s;
  REQUIRE(s.http->post(claims, R"({"metadata":{"name":"c"},"spec":{"accessModes":["ReadWriteOnce"],
                                   "resources":{"requests":{"storage":"1Gi"}}}})").status == 201);
  auto bind = s.http->request("PATCH", claims + "/c", R"({"spec":{"volumeName":"disk"}})",
                              {{"Content-Type", "application/merge-patch+json"}});
  CHECK(bind.status == 200);
  auto change = s.http->request("PATCH", claims + "/c", R"({"spec":{"accessModes":["ReadWriteMany"]}})",
                                {{"Content-Type", "application/merge-patch+json"}});
  REQUIRE(change.status == 422);
  CHECK_THAT(str(change.json(), {"message"}), Catch::Contains("spec is immutable after creation"));
}

TEST_CASE("kubectl get pv and pvc print Kubernetes' columns") {
  running_server s;
  REQUIRE(s.http->post(volumes, R"({"metadata":{"name":"disk"},"spec":{"accessModes":["ReadWriteOnce","ReadWriteMany"],
                                    "capacity":{"storage":"10Gi"},"storageClassName":"standard","hostPath":{"path":"/d"},
                                    "claimRef":{"namespace":"default","name":"data"}}})").status == 201);
  auto pv = s.http->get(volumes, table_accept);
  REQUIRE(pv.status == 200);
  auto row = cells(pv.json());
  REQUIRE(row.size() >= 8);
  CHECK(row[1] == "10Gi");
  CHECK(row[2] == "RWO,RWX");
  CHECK(row[3] == "Retain");
  CHECK(row[5] == "default/data");
  CHECK(row[6] == "standard");
  REQUIRE(s.http->post(claims, R"({"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],
                                   "resources":{"requests":{"storage":"1Gi"}}}})").status == 201);
  auto pvc = s.http->get(claims, table_accept);
  REQUIRE(pvc.status == 200);
  CHECK(cells(pvc.json())[1] == "Pending");
}

TEST_CASE("a quota with a bad quantity is refused; a good one prints its use in kubectl get") {
  running_server s;
  auto bad = s.http->post(quotas, R"({"metadata":{"name":"q"},"spec":{"hard":{"pods":"lots"}}})");
  REQUIRE(bad.status == 422);
  CHECK_THAT(str(bad.json(), {"message"}), Catch::Contains("spec.hard[pods]: Invalid value: \"lots\""));
  REQUIRE(s.http->post(quotas, R"({"metadata":{"name":"q"},"spec":{"hard":{"pods":"4","limits.cpu":"2"}}})").status == 201);
  auto row = cells(s.http->get(quotas, table_accept).json());
  CHECK(row[2] == "pods: 0/4");
  CHECK(row[3] == "limits.cpu: 0/2");
}

TEST_CASE("a limit range's limit types are Pod, Container or PersistentVolumeClaim") {
  running_server s;
  auto r = s.http->post("/api/v1/namespaces/default/limitranges",
                        R"({"metadata":{"name":"lr"},"spec":{"limits":[{"type":"Node","max":{"cpu":"2"}}]}})");
  REQUIRE(r.status == 422);
  CHECK_THAT(str(r.json(), {"message"}), Catch::Contains("spec.limits[0].type: Unsupported value: \"Node\""));
  CHECK(s.http->post("/api/v1/namespaces/default/limitranges",
                     R"({"metadata":{"name":"lr"},"spec":{"limits":[{"type":"Container","default":{"cpu":"500m"}}]}})")
            .status == 201);
}

namespace {
const std::string classes = "/apis/storage.k8s.io/v1/storageclasses";
std::string class_body(const std::string& name, bool is_default, const std::string& extra = "") {
  return R"({"metadata":{"name":")" + name + R"(")" +
         (is_default ? R"(,"annotations":{"storageclass.kubernetes.io/is-default-class":"true"})" : "") +
         R"(},"provisioner":"kozmo.io/local-path")" + extra + "}";
}
std::string claim_body(const std::string& name, const std::string& extra_spec = "") {
  return R"({"metadata":{"name":")" + name + R"("},"spec":{"accessModes":["ReadWriteOnce"],)" + extra_spec +
         R"("resources":{"requests":{"storage":"1Gi"}}}})";
}
} // namespace

TEST_CASE("a StorageClass gets Kubernetes' defaults, needs a provisioner, and keeps it") {
  running_server s;
  auto made = s.http->post(classes, class_body("standard", true));
  REQUIRE(made.status == 201);
  CHECK(str(made.json(), {"reclaimPolicy"}) == "Delete");
  CHECK(str(made.json(), {"volumeBindingMode"}) == "Immediate");
  auto table = s.http->get(classes, table_accept);
  REQUIRE(table.status == 200);
  CHECK(cells(table.json()) ==
        std::vector<std::string>{"standard (default)", "kozmo.io/local-path", "Delete", "Immediate", "false", cells(table.json())[5]});

  auto none = s.http->post(classes, R"({"metadata":{"name":"x"}})");
  REQUIRE(none.status == 422);
  CHECK_THAT(str(none.json(), {"message"}), Catch::Contains("provisioner: Required value"));
  auto policy = s.http->post(classes, class_body("y", false, R"(,"reclaimPolicy":"Recycle","volumeBindingMode":"Later")"));
  REQUIRE(policy.status == 422);
  CHECK_THAT(str(policy.json(), {"message"}), Catch::Contains("reclaimPolicy: Unsupported value: \"Recycle\""));
  CHECK_THAT(str(policy.json(), {"message"}), Catch::Contains("volumeBindingMode: Unsupported value: \"Later\""));
  std::string many = R"(,"parameters":{)";
  for (int i = 0; i < 513; ++i)
    many += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":\"v\"";
  auto params = s.http->post(classes, class_body("z", false, many + "}"));
  REQUIRE(params.status == 422);
  CHECK_THAT(str(params.json(), {"message"}), Catch::Contains("may not have more than 512 entries"));

  auto moved = s.http->patch(classes + "/standard", R"({"provisioner":"example.com/nfs"})", "application/merge-patch+json");
  REQUIRE(moved.status == 422);
  CHECK_THAT(str(moved.json(), {"message"}), Catch::Contains("updates to provisioner are forbidden."));
}

TEST_CASE("a claim created without storageClassName gets the default class; \"\" asks for none") {
  running_server s;
  auto before = s.http->post(claims, claim_body("early"));
  REQUIRE(before.status == 201);
  CHECK(before.json().at_path({"spec", "storageClassName"}) == nullptr); // no default class yet
  REQUIRE(s.http->post(classes, class_body("fast", false)).status == 201);
  REQUIRE(s.http->post(classes, class_body("standard", true)).status == 201);
  auto plain = s.http->post(claims, claim_body("plain"));
  REQUIRE(plain.status == 201);
  CHECK(str(plain.json(), {"spec", "storageClassName"}) == "standard");
  auto none = s.http->post(claims, claim_body("none", R"("storageClassName":"",)"));
  REQUIRE(none.status == 201);
  CHECK(str(none.json(), {"spec", "storageClassName"}).empty());
  auto chosen = s.http->post(claims, claim_body("chosen", R"("storageClassName":"fast",)"));
  REQUIRE(chosen.status == 201);
  CHECK(str(chosen.json(), {"spec", "storageClassName"}) == "fast");
}
