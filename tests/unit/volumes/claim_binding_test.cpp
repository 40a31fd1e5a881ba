// kozmo local's PersistentVolume controller rules (actors/volumes/claim_binding.hpp) and the
// quota usage count (actors/quota/quota_usage.hpp), as a user of claims, volumes and quotas
// would see them: which volume a claim gets, why it waits, what a quota says is used.
#include "tests/support/json_doc.hpp"
#include "actors/quota/quota_usage.hpp"
#include "actors/volumes/claim_binding.hpp"
#include "k8s/model/codec.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using test::doc;
using namespace kozmo::volumes;

namespace {

claim pvc(const std::string& name, const std::string& size, const std::string& extra_spec = "",
          const std::string& modes = R"(["ReadWriteOnce"])") {
  return claim_from(doc(R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":"uid-)" + name +
                        R"("},"spec":{"accessModes":)" + modes + R"(,"resources":{"requests":{"storage":")" + size + "\"}}" +
                        extra_spec + R"(},"status":{"phase":"Pending"}})"));
}

volume pv(const std::string& name, const std::string& size, const std::string& extra_spec = "",
          const std::string& labels = "{}", const std::string& modes = R"(["ReadWriteOnce","ReadWriteMany"])") {
  return volume_from(doc(R"({"metadata":{"name":")" + name + R"(","uid":"uid-)" + name + R"(","labels":)" + labels +
                         R"(},"spec":{"accessModes":)" + modes + R"(,"capacity":{"storage":")" + size +
                         R"("},"hostPath":{"path":"/d"})" + extra_spec + R"(},"status":{"phase":"Available"}})"));
}

std::string bound_volume(const pass_result& r, const std::string& claim_key) {
  for (const auto& b : r.binds)
    if (b.claim_key == claim_key)
      return b.volume;
  return "<none>";
}

std::string wait_of(const pass_result& r, const std::string& claim_key) {
  for (const auto& w : r.waits)
    if (w.claim_key == claim_key)
      return w.reason + ": " + w.message;
  return "<none>";
}

} // namespace

TEST_CASE("a claim binds to the smallest free volume that holds its request") {
  auto r = plan_pass({pvc("data", "5Gi")}, {pv("big", "100Gi"), pv("fits", "10Gi"), pv("small", "1Gi")});
  CHECK(bound_volume(r, "ml/data") == "fits");
  CHECK(r.waits.empty());
}

TEST_CASE("two claims never get the same volume in one pass") {
  auto r = plan_pass({pvc("a", "1Gi"), pvc("b", "1Gi")}, {pv("only", "10Gi")});
  CHECK(r.binds.size() == 1);
  CHECK(wait_of(r, r.binds[0].claim_key == "ml/a" ? "ml/b" : "ml/a") ==
        "FailedBinding: no persistent volumes available for this claim and no storage class is set");
}

TEST_CASE("storage class, access modes, volume mode and selector must all match") {
  auto cls = plan_pass({pvc("c", "1Gi", R"(,"storageClassName":"fast")")}, {pv("slow", "10Gi", R"(,"storageClassName":"slow")")});
  CHECK(cls.binds.empty());
  CHECK(wait_of(cls, "ml/c") == "ProvisioningFailed: storageclass.storage.k8s.io \"fast\" not found");

  auto modes = plan_pass({pvc("m", "1Gi", "", R"(["ReadOnlyMany"])")}, {pv("rw", "10Gi")});
  CHECK(modes.binds.empty());

  auto block = plan_pass({pvc("b", "1Gi", R"(,"volumeMode":"Block")")}, {pv("fs", "10Gi")});
  CHECK(block.binds.empty());

  auto sel = plan_pass({pvc("s", "1Gi", R"(,"selector":{"matchLabels":{"app":"tfjob"}})")},
                       {pv("other", "10Gi", "", R"({"app":"web"})"), pv("mine", "20Gi", "", R"({"app":"tfjob"})")});
  CHECK(bound_volume(sel, "ml/s") == "mine");
}

TEST_CASE("a claim naming its volume gets that one or says why not") {
  auto named = plan_pass({pvc("n", "1Gi", R"(,"volumeName":"big")")}, {pv("small", "2Gi"), pv("big", "100Gi")});
  CHECK(bound_volume(named, "ml/n") == "big");
  auto missing = plan_pass({pvc("n", "1Gi", R"(,"volumeName":"nope")")}, {pv("small", "2Gi")});
  CHECK(wait_of(missing, "ml/n") == "FailedBinding: volume \"nope\" not found");
  auto too_small = plan_pass({pvc("n", "5Gi", R"(,"volumeName":"small")")}, {pv("small", "2Gi")});
  CHECK(wait_of(too_small, "ml/n") == "VolumeMismatch: Cannot bind to requested volume \"small\": requested PV is too small");
}

TEST_CASE("a volume pre-bound to a claim goes to that claim only") {
  auto reserved = pv("reserved", "10Gi", R"(,"claimRef":{"namespace":"ml","name":"owner"})");
  auto r = plan_pass({pvc("stranger", "1Gi"), pvc("owner", "1Gi")}, {reserved});
  CHECK(bound_volume(r, "ml/owner") == "reserved");
  CHECK(bound_volume(r, "ml/stranger") == "<none>");
}

TEST_CASE("new volumes become Available; a volume whose claim is gone is Released or deleted") {
  auto fresh = pv("fresh", "1Gi");
  fresh.phase = "Pending";
  auto kept = pv("kept", "1Gi", R"(,"claimRef":{"namespace":"ml","name":"gone","uid":"uid-gone"})");
  kept.phase = "Bound";
  auto dropped = pv("dropped", "1Gi",
                    R"(,"persistentVolumeReclaimPolicy":"Delete","claimRef":{"namespace":"ml","name":"gone2","uid":"u2"})");
  dropped.phase = "Bound";
  auto r = plan_pass({}, {fresh, kept, dropped});
  REQUIRE(r.volume_phases.size() == 2);
  CHECK(r.volume_phases[0].key == "fresh");
  CHECK(r.volume_phases[0].phase == "Available");
  CHECK(r.volume_phases[1].key == "kept");
  CHECK(r.volume_phases[1].phase == "Released");
  CHECK(r.delete_volumes == std::vector<std::string>{"dropped"});
}

TEST_CASE("a bound claim whose volume was deleted is Lost") {
  auto c = pvc("orphan", "1Gi", R"(,"volumeName":"vanished")");
  c.phase = "Bound";
  auto r = plan_pass({c}, {});
  REQUIRE(r.claim_phases.size() == 1);
  CHECK(r.claim_phases[0].phase == "Lost");
}

namespace {

provisioning local_path(const std::string& dir = "/work/volumes") {
  provisioning p;
  p.classes = {storage_class{"standard", local_path_provisioner, "Delete"},
               storage_class{"ebs", "ebs.csi.aws.com", "Delete"}};
  p.volumes_dir = dir;
  return p;
}

claim standard_pvc(const std::string& name, const std::string& size, const std::string& extra_spec = "") {
  return pvc(name, size, R"(,"storageClassName":"standard")" + extra_spec, R"(["ReadWriteMany"])");
}

} // namespace

TEST_CASE("a claim of a local-path class that no volume satisfies gets a volume of its own, pre-bound to it") {
  auto r = plan_pass({standard_pvc("initializer-job", "20Gi")}, {pv("small", "1Gi", R"(,"storageClassName":"standard")")},
                     local_path());
  CHECK(r.binds.empty());
  CHECK(r.waits.empty());
  REQUIRE(r.provisions.size() == 1);
  const auto& made = r.provisions[0];
  CHECK(made.claim_key == "ml/initializer-job");
  CHECK(made.volume == "pvc-uid-initializer-job");
  CHECK(made.directory == "/work/volumes/pvc-uid-initializer-job");
  auto v = volume_from(made.object);
  CHECK(v.name == "pvc-uid-initializer-job");
  CHECK(v.storage_class == "standard");
  CHECK(v.capacity == *k8s::quantity::parse("20Gi"));
  CHECK(v.access_modes == std::vector<std::string>{"ReadWriteMany"});
  CHECK(v.reclaim_policy == "Delete");
  CHECK(v.host_path == made.directory);
  CHECK(v.provisioned_by == "kozmo.io/local-path");
  REQUIRE(v.bound_to);
  CHECK(v.bound_to->ns == "ml");
  CHECK(v.bound_to->name == "initializer-job");
  CHECK(v.bound_to->uid == "uid-initializer-job");

  SECTION("the next pass binds the claim to it, and makes nothing more") {
    v.phase = "Pending";
    auto next = plan_pass({standard_pvc("initializer-job", "20Gi")}, {v}, local_path());
    CHECK(bound_volume(next, "ml/initializer-job") == "pvc-uid-initializer-job");
    CHECK(next.provisions.empty());
  }
  SECTION("a volume of that name being deleted is not made again meanwhile") {
    v.deleting = true;
    auto next = plan_pass({standard_pvc("initializer-job", "20Gi")}, {v}, local_path());
    CHECK(next.provisions.empty());
    CHECK(next.binds.empty());
  }
}

TEST_CASE("a free volume that satisfies the claim is used before one is provisioned") {
  auto r = plan_pass({standard_pvc("data", "5Gi")},
                     {pv("made-by-hand", "10Gi", R"(,"storageClassName":"standard")")}, local_path());
  CHECK(bound_volume(r, "ml/data") == "made-by-hand");
  CHECK(r.provisions.empty());
}

TEST_CASE("claims the local-path provisioner cannot serve wait and say why, and nothing is made") {
  auto ext = plan_pass({pvc("e", "1Gi", R"(,"storageClassName":"ebs")")}, {}, local_path());
  CHECK_THAT(wait_of(ext, "ml/e"), Catch::StartsWith("ExternalProvisioning: Waiting for a volume to be created either "
                                                     "by the external provisioner 'ebs.csi.aws.com'"));
  auto block = plan_pass({standard_pvc("b", "1Gi", R"(,"volumeMode":"Block")")}, {}, local_path());
  CHECK(wait_of(block, "ml/b") == "ProvisioningFailed: failed to provision volume with StorageClass \"standard\": "
                                  "kozmo.io/local-path provisions Filesystem volumes only, not Block");
  auto sel = plan_pass({standard_pvc("s", "1Gi", R"(,"selector":{"matchLabels":{"a":"b"}})")}, {}, local_path());
  CHECK_THAT(wait_of(sel, "ml/s"), Catch::EndsWith("claim Selector is not supported"));
  auto huge = plan_pass({standard_pvc("h", "2Pi")}, {}, local_path());
  CHECK_THAT(wait_of(huge, "ml/h"), Catch::Contains("is more than kozmo.io/local-path accepts (1Pi)"));
  auto at_limit = plan_pass({standard_pvc("l", "1Pi")}, {}, local_path());
  CHECK(at_limit.provisions.size() == 1);
  auto no_dir = plan_pass({standard_pvc("d", "1Gi")}, {}, local_path(""));
  CHECK_THAT(wait_of(no_dir, "ml/d"), Catch::Contains("has no directory for volumes"));
  auto no_class = plan_pass({pvc("n", "1Gi")}, {}, local_path());
  CHECK(wait_of(no_class, "ml/n") ==
        "FailedBinding: no persistent volumes available for this claim and no storage class is set");
  for (const auto* r : {&ext, &block, &sel, &huge, &no_dir, &no_class})
    CHECK(r->provisions.empty());
}

TEST_CASE("a provisioned volume goes with its claim, and only its own directory is removed") {
  auto made = plan_pass({standard_pvc("data", "1Gi")}, {}, local_path()).provisions.at(0);
  auto v = volume_from(made.object);
  v.phase = "Bound";
  auto after = plan_pass({}, {v}, local_path());
  CHECK(after.delete_volumes == std::vector<std::string>{"pvc-uid-data"});
  CHECK(directory_of_deleted(v, "/work/volumes") == std::optional<std::string>("/work/volumes/pvc-uid-data"));

  auto by_hand = pv("mine", "1Gi", R"(,"persistentVolumeReclaimPolicy":"Delete")");
  CHECK_FALSE(directory_of_deleted(by_hand, "/work/volumes")); // hostPath /d is the user's
  auto elsewhere = v;
  elsewhere.host_path = "/home/me/data";
  CHECK_FALSE(directory_of_deleted(elsewhere, "/work/volumes"));
  auto sneaky = v;
  sneaky.name = "..";
  sneaky.host_path = "/work/volumes/..";
  CHECK_FALSE(directory_of_deleted(sneaky, "/work/volumes"));
  CHECK_FALSE(directory_of_deleted(v, ""));
}

TEST_CASE("a StorageClass reads as its name, provisioner and reclaim policy") {
  auto sc = class_from(doc(R"({"metadata":{"name":"standard"},"provisioner":"kozmo.io/local-path"})"));
  CHECK(sc.name == "standard");
  CHECK(sc.provisioner == "kozmo.io/local-path");
  CHECK(sc.reclaim_policy == "Delete");
  CHECK(class_from(doc(R"({"metadata":{"name":"k"},"provisioner":"p","reclaimPolicy":"Retain"})")).reclaim_policy == "Retain");
}

TEST_CASE("a quota counts live pods' requests and limits, and claims' storage") {
  auto pod = [](const std::string& phase, const std::string& containers) {
    auto p = k8s::from_json<k8s::pod>(doc(R"({"metadata":{"name":"p","namespace":"ml"},"spec":{"containers":)" +
                                          containers + R"(},"status":{"phase":")" + phase + "\"}}"));
    REQUIRE(p.has_value());
    return *p;
  };
  auto running = pod("Running", R"([{"name":"a","resources":{"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"cpu":"1","memory":"2Gi"}}},
                                    {"name":"b","resources":{"limits":{"cpu":"250m","nvidia.com/gpu":"2"}}}])");
  auto done = pod("Succeeded", R"([{"name":"a","resources":{"requests":{"cpu":"4"}}}])");
  auto claim = doc(R"({"spec":{"storageClassName":"fast","resources":{"requests":{"storage":"10Gi"}}}})");
  auto other = doc(R"({"spec":{"resources":{"requests":{"storage":"5Gi"}}}})");
  auto svc = doc(R"({"spec":{"type":"NodePort"}})");
  quota::namespace_objects o;
  o.pods = {&running, &done};
  o.claims = {&claim, &other};
  o.services = {&svc};
  auto hard = doc(R"({"pods":"10","requests.cpu":"4","cpu":"4","limits.cpu":"8","requests.memory":"8Gi",
                      "limits.memory":"8Gi","requests.nvidia.com/gpu":"8","persistentvolumeclaims":"5",
                      "requests.storage":"100Gi","fast.storageclass.storage.k8s.io/requests.storage":"50Gi",
                      "services.nodeports":"2","count/configmaps":"3","requests.example.com/unknown":"1"})");
  auto used = quota::used_of(hard, o);
  CHECK(used.get_string("pods") == "1");
  CHECK(used.get_string("requests.cpu") == "750m"); // 500m, and 250m from the limit of b
  CHECK(used.get_string("cpu") == "750m");
  CHECK(used.get_string("limits.cpu") == "1250m");
  CHECK(used.get_string("requests.memory") == "1Gi");
  CHECK(used.get_string("limits.memory") == "2Gi");
  CHECK(used.get_string("requests.nvidia.com/gpu") == "2");
  CHECK(used.get_string("persistentvolumeclaims") == "2");
  CHECK(used.get_string("requests.storage") == "15Gi");
  CHECK(used.get_string("fast.storageclass.storage.k8s.io/requests.storage") == "10Gi");
  CHECK(used.get_string("services.nodeports") == "1");
  CHECK(used.get_string("count/configmaps") == "0");
  CHECK(used.get_string("requests.example.com/unknown") == "0");
}
