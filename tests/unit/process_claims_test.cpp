// The process runtime's persistentVolumeClaim and hostPath volumes (actors/kubelet/process_spec.hpp):
// which claims a pod makes the kubelet read, and which host directory a volume mounts, or the
// FailedMount message a user sees while the claim is not Bound.
#include "actors/kubelet/process_spec.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::kubelet;

namespace {

json::value parsed(const std::string& text) {
  auto v = json::parse(text);
  REQUIRE(v);
  return *v;
}

pod_run_spec trainer_pod() {
  auto spec = parse_run_spec(parsed(R"json({
    "metadata": {"name": "job-node-0-0", "namespace": "ml", "uid": "u"},
    "spec": {"containers": [{"name": "node", "image": "x", "command": ["true"],
               "volumeMounts": [{"name": "initializer", "mountPath": "/workspace"},
                                {"name": "models", "mountPath": "/models"}]}],
             "volumes": [{"name": "initializer", "persistentVolumeClaim": {"claimName": "initializer-job"}},
                         {"name": "models", "persistentVolumeClaim": {"claimName": "models", "readOnly": true}},
                         {"name": "scratch", "hostPath": {"path": "/var/tmp/scratch", "type": "DirectoryOrCreate"}},
                         {"name": "relative", "hostPath": {"path": "tmp"}}]}})json"));
  REQUIRE(spec);
  return *spec;
}

json::value claim(const std::string& phase, const std::string& volume) {
  return parsed(R"({"spec":{"volumeName":")" + volume + R"("},"status":{"phase":")" + phase + R"("}})");
}

} // namespace

TEST_CASE("a pod's claims are read at admission; readOnly on the claim is kept") {
  auto spec = trainer_pod();
  CHECK(referenced_objects(spec) == std::vector<object_ref>{{object_ref::kind::claim, "initializer-job"},
                                                            {object_ref::kind::claim, "models"}});
  CHECK_FALSE(spec.volumes[0].read_only);
  CHECK(spec.volumes[1].read_only);
  fetched_objects none;
  for (const auto& v : spec.volumes)
    if (v.what == volume_spec::kind::claim || v.what == volume_spec::kind::host_path)
      CHECK(volume_files(v, none)->empty()); // no files of their own: a directory is mounted
}

TEST_CASE("a Bound claim mounts its volume's hostPath directory") {
  auto spec = trainer_pod();
  fetched_objects objects;
  objects[{object_ref::kind::claim, "initializer-job"}] = claim("Bound", "pvc-1");
  objects[{object_ref::kind::volume, "pvc-1"}] = parsed(R"({"spec":{"hostPath":{"path":"/data/volumes/pvc-1"}}})");
  CHECK(host_directory(spec.volumes[0], objects).value() == "/data/volumes/pvc-1");
  CHECK(host_directory(spec.volumes[2], objects).value() == "/var/tmp/scratch");
}

TEST_CASE("a claim that cannot be mounted yet says why, naming the claim") {
  auto spec = trainer_pod();
  const auto& v = spec.volumes[0];
  fetched_objects objects;
  objects[{object_ref::kind::claim, "initializer-job"}] = std::nullopt;
  CHECK(host_directory(v, objects).err().message ==
        "MountVolume.SetUp failed for volume \"initializer\" : persistentvolumeclaim \"initializer-job\" not found");
  objects[{object_ref::kind::claim, "initializer-job"}] = claim("Pending", "");
  CHECK(host_directory(v, objects).err().message == "MountVolume.SetUp failed for volume \"initializer\" : "
                                                    "persistentvolumeclaim \"initializer-job\" is not bound (phase Pending)");
  objects[{object_ref::kind::claim, "initializer-job"}] = claim("Bound", "gone");
  objects[{object_ref::kind::volume, "gone"}] = std::nullopt;
  CHECK(host_directory(v, objects).err().message ==
        "MountVolume.SetUp failed for volume \"initializer\" : persistentvolume \"gone\" of claim \"initializer-job\" not found");
  objects[{object_ref::kind::volume, "gone"}] = parsed(R"({"spec":{"nfs":{"server":"nas","path":"/x"}}})");
  CHECK_THAT(host_directory(v, objects).err().message,
             Catch::EndsWith("is not a hostPath volume (the process runtime mounts hostPath volumes only)"));
  CHECK_THAT(host_directory(spec.volumes[3], objects).err().message,
             Catch::EndsWith("hostPath \"tmp\" is not an absolute path"));
}
