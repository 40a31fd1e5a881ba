// The example jobs in examples/ decode, and the pods Kozmo builds from them are accepted by
// the GPU scheduler's annotation parser and the simulated kubelet's script parser.
#include "fixtures.hpp"

#include "actors/kubelet/pod_script.hpp"
#include "actors/scheduler/pod_scheduling_spec.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>

using namespace training_test;

namespace {

// YAML → JSON the way kubectl reads a manifest: plain scalars that look like numbers or
// booleans become them, quoted scalars stay strings.
json::value to_json_value(const YAML::Node& n) {
  switch (n.Type()) {
  case YAML::NodeType::Map: {
    json::value out = json::object{};
    for (const auto& kv : n)
      out[kv.first.as<std::string>()] = to_json_value(kv.second);
    return out;
  }
  case YAML::NodeType::Sequence: {
    json::array out;
    for (const auto& item : n)
      out.push_back(to_json_value(item));
    return out;
  }
  case YAML::NodeType::Scalar: {
    const std::string& s = n.Scalar();
    if (n.Tag() != "!") {
      if (s == "true" || s == "false")
        return s == "true";
      char* end = nullptr;
      long long v = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && end == s.c_str() + s.size())
        return v;
    }
    return s;
  }
  default: return nullptr;
  }
}

cluster load_example(const std::string& file) {
  std::string dir = KOZMO_EXAMPLES_DIR;
  json::value doc = to_json_value(YAML::LoadFile(dir + "/" + file));
  doc["metadata"]["namespace"] = "default";
  doc["metadata"]["uid"] = "example-uid";
  return cluster(doc);
}

} // namespace

TEST_CASE("every example job creates its pods, which the scheduler and the simulated kubelet accept") {
  struct expect {
    const char* file;
    std::size_t pods;
    bool gang;
  };
  for (const expect& e : {expect{"pytorch-simple.yaml", 2, false}, expect{"pytorch-4gpu.yaml", 4, true},
                          expect{"pytorch-elastic.yaml", 2, false}, expect{"tfjob-ps-worker.yaml", 3, true},
                          expect{"mpijob.yaml", 3, true}, expect{"caffe2job.yaml", 2, true},
                          expect{"mpijob-v1.yaml", 3, false}, expect{"xgboostjob.yaml", 3, false},
                          expect{"paddlejob.yaml", 2, false}, expect{"jaxjob.yaml", 2, false}}) {
    INFO(e.file);
    cluster c = load_example(e.file);
    c.step();
    c.step(); // an MPI launcher comes one pass after its ServiceAccount
    CHECK_FALSE(c.condition("Failed"));
    CHECK(c.pods.size() == e.pods);
    for (const auto& p : c.pods) {
      INFO(p.metadata.name);
      auto script = kubelet::parse_pod_script(p.metadata.annotations);
      CHECK(script.has_value());
      auto spec = scheduler::parse_pod_scheduling_spec(p.metadata.annotations, p.metadata.namespace_, p.metadata.name);
      bool gpu = !p.spec.containers.empty() && p.spec.containers[0].resources.limits.count("nvidia.com/gpu") > 0;
      if (e.gang && gpu) {
        REQUIRE(spec.has_value());
        CHECK(spec->affinity_group == "default/" + c.job.metadata.name);
        CHECK(p.spec.scheduler_name == "kozmo");
      } else {
        CHECK_FALSE(spec.has_value());
      }
    }
  }
}

TEST_CASE("the 4-GPU example asks for one gang of four pods with two GPUs each") {
  cluster c = load_example("pytorch-4gpu.yaml");
  c.step();
  auto spec = scheduler::parse_pod_scheduling_spec(c.pod("pytorch-4gpu-worker-2").metadata.annotations, "default",
                                                   "pytorch-4gpu-worker-2");
  REQUIRE(spec.has_value());
  CHECK(spec->members == std::vector<scheduler::affinity_member>{{4, 2}});
  CHECK(spec->leaf_cell_number == 2);
  CHECK(spec->virtual_cluster == "default");
  CHECK(spec->priority == 100);
}
