// Building a task's pod: resource overrides, GPU selectors and partitions, interruptible
// placement and the failure threshold, pod template merging, identity env.
#include "actors/tasks/placement.hpp"
#include "actors/tasks/pod_template_merge.hpp"
#include "actors/tasks/resources.hpp"
#include "actors/tasks/task_pod.hpp"
#include "fixture.hpp"

using namespace tasks_test;

namespace {

k8s::quantity q(const char* text) { return k8s::quantity::parse(text).value(); }

std::string res(const json::value& r, const char* part, const char* name) {
  const auto* v = r.at_path({part, name});
  return v && v->is_string() ? v->as_string() : "";
}

json::value build(const k8s::custom_object& task, const platform_config& cfg, int attempt = 0,
                  bool interruptible = false, const json::value* templ = nullptr) {
  auto spec = decode_task(task, {"container", "pod"});
  REQUIRE(spec.has_value());
  attempt_pod_input in{&task, &*spec, &cfg, attempt, interruptible, templ};
  auto pod = build_attempt_pod(in);
  INFO((pod ? "" : pod.err().message));
  REQUIRE(pod.has_value());
  return *pod;
}

const json::value& container0(const json::value& pod) { return pod.at_path({"spec"})->find("containers")->as_array()[0]; }

} // namespace

TEST_CASE("adjust_or_default: the peer's examples with default 10 and platform limit 20") {
  auto check = [](const char* r, const char* l, const char* want_r, const char* want_l) {
    auto got = adjust_or_default(q(r), q(l), q("10"), q("20"));
    INFO(r << "/" << l);
    CHECK(got.request == q(want_r));
    CHECK(got.limit == q(want_l));
  };
  check("0", "0", "10", "10");
  check("1", "40", "1", "20");
  check("40", "50", "20", "20");
  check("10", "2", "2", "2");
  check("0", "5", "5", "5");
  check("5", "0", "5", "5");
}

TEST_CASE("a zero platform limit caps nothing") {
  auto got = adjust_or_default(q("64"), q("0"), q("1"), q("0"));
  CHECK(got.request == q("64"));
  CHECK(got.limit == q("64"));
}

TEST_CASE("assign: a container without resources gets the platform's defaults for cpu and memory") {
  platform_config cfg;
  auto r = apply_resources(json::value(), json::value(), resource_mode::assign, cfg);
  CHECK(res(r, "requests", "cpu") == "1");
  CHECK(res(r, "limits", "cpu") == "1");
  CHECK(res(r, "requests", "memory") == "1Gi");
  CHECK(res(r, "limits", "memory") == "1Gi");
  CHECK(r.at_path({"requests", "nvidia.com/gpu"}) == nullptr);
}

TEST_CASE("assign: gpu is renamed to the platform's GPU resource and capped by the platform") {
  platform_config cfg;
  cfg.resource_limits["gpu"] = q("4");
  cfg.resource_limits["cpu"] = q("8");
  auto r = apply_resources(parse_json(R"({"limits":{"gpu":"8","cpu":"16"},"requests":{"storage":"1Gi"}})"),
                           json::value(), resource_mode::assign, cfg);
  CHECK(res(r, "limits", "nvidia.com/gpu") == "4");
  CHECK(res(r, "requests", "nvidia.com/gpu") == "4");
  CHECK(r.at_path({"limits", "gpu"}) == nullptr);
  CHECK(res(r, "limits", "cpu") == "8");
  CHECK(res(r, "requests", "cpu") == "8");
  CHECK(r.at_path({"requests", "storage"}) == nullptr); // no cluster enforces it
}

TEST_CASE("assign: a configured GPU resource name is used for gpu") {
  platform_config cfg;
  cfg.gpu_resource_name = "amd.com/gpu";
  auto r = apply_resources(parse_json(R"({"limits":{"gpu":"2"}})"), json::value(), resource_mode::assign, cfg);
  CHECK(res(r, "limits", "amd.com/gpu") == "2");
}

TEST_CASE("assign: a zero GPU asks for nothing and is left out") {
  platform_config cfg;
  auto r = apply_resources(parse_json(R"({"limits":{"gpu":"0"}})"), json::value(), resource_mode::assign, cfg);
  CHECK(r.at_path({"limits", "nvidia.com/gpu"}) == nullptr);
}

TEST_CASE("assign: the task's overrides replace a container task's resources") {
  platform_config cfg;
  auto r = apply_resources(parse_json(R"({"requests":{"cpu":"2","memory":"8Gi"}})"),
                           parse_json(R"({"requests":{"cpu":"4"}})"), resource_mode::assign, cfg);
  CHECK(res(r, "requests", "cpu") == "4");
  CHECK(res(r, "requests", "memory") == "1Gi"); // replaced wholesale, then defaulted
}

TEST_CASE("merge existing: overrides win over the primary container's own values, key by key") {
  platform_config cfg;
  auto r = apply_resources(parse_json(R"({"requests":{"cpu":"2","memory":"8Gi"}})"),
                           parse_json(R"({"requests":{"cpu":"4"}})"), resource_mode::merge_existing, cfg);
  CHECK(res(r, "requests", "cpu") == "4");
  CHECK(res(r, "requests", "memory") == "8Gi");
  CHECK(res(r, "limits", "memory") == "8Gi");
}

TEST_CASE("ensure in range: a secondary container keeps what it set, capped, and gets no defaults") {
  platform_config cfg;
  cfg.resource_limits["memory"] = q("4Gi");
  auto r = apply_resources(parse_json(R"({"limits":{"memory":"16Gi"}})"), json::value(), resource_mode::ensure_in_range,
                           cfg);
  CHECK(res(r, "limits", "memory") == "4Gi");
  CHECK(r.at_path({"requests", "memory"}) == nullptr);
  CHECK(r.at_path({"requests", "cpu"}) == nullptr);
  auto empty = apply_resources(json::value(), json::value(), resource_mode::ensure_in_range, cfg);
  CHECK(empty.as_object().empty());
}

TEST_CASE("node selector requirements are ANDed into every existing term") {
  auto spec = parse_json(R"({"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
    "nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]},
                         {"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}]}}}})");
  add_required_node_selector_requirements(spec, {parse_json(R"({"key":"gpu","operator":"Exists"})")});
  const auto& terms = spec.at_path({"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"})
                          ->find("nodeSelectorTerms")
                          ->as_array();
  REQUIRE(terms.size() == 2);
  for (const auto& t : terms) {
    REQUIRE(t.find("matchExpressions")->as_array().size() == 2);
    CHECK(t.find("matchExpressions")->as_array()[1].get_string("key") == "gpu");
  }
}

TEST_CASE("node selector requirements make a first term when there is none") {
  json::value spec = json::object{};
  add_required_node_selector_requirements(spec, {parse_json(R"({"key":"gpu","operator":"Exists"})")});
  const auto* terms = spec.at_path({"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"});
  REQUIRE(terms != nullptr);
  CHECK(terms->find("nodeSelectorTerms")->as_array().size() == 1);
}

TEST_CASE("GPU accelerator: device and partition size as node affinity and tolerations") {
  platform_config cfg;
  auto spec = parse_json(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]})");
  apply_gpu_selectors(spec, {"nvidia-tesla-a100", "1g.5gb", false}, cfg);
  const auto& exprs = spec.at_path({"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"})
                          ->find("nodeSelectorTerms")
                          ->as_array()[0]
                          .find("matchExpressions")
                          ->as_array();
  REQUIRE(exprs.size() == 2);
  CHECK(json::dump(exprs[0]) ==
        R"({"key":"k8s.amazonaws.com/accelerator","operator":"In","values":["nvidia-tesla-a100"]})");
  CHECK(json::dump(exprs[1]) == R"({"key":"k8s.amazonaws.com/gpu-partition-size","operator":"In","values":["1g.5gb"]})");
  const auto& tols = spec.find("tolerations")->as_array();
  REQUIRE(tols.size() == 2);
  CHECK(json::dump(tols[0]) ==
        R"({"key":"k8s.amazonaws.com/accelerator","operator":"Equal","value":"nvidia-tesla-a100","effect":"NoSchedule"})");
  CHECK(json::dump(tols[1]) ==
        R"({"key":"k8s.amazonaws.com/gpu-partition-size","operator":"Equal","value":"1g.5gb","effect":"NoSchedule"})");
}

TEST_CASE("GPU accelerator: unpartitioned asks for nodes without a partition label") {
  platform_config cfg;
  auto spec = parse_json(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]})");
  apply_gpu_selectors(spec, {"nvidia-tesla-a100", "", true}, cfg);
  const auto& exprs = spec.at_path({"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"})
                          ->find("nodeSelectorTerms")
                          ->as_array()[0]
                          .find("matchExpressions")
                          ->as_array();
  CHECK(json::dump(exprs[1]) == R"({"key":"k8s.amazonaws.com/gpu-partition-size","operator":"DoesNotExist"})");
  CHECK(spec.find("tolerations")->as_array().size() == 1); // only the device's
}

TEST_CASE("GPU accelerator: a pod that asks for no GPU is left alone") {
  platform_config cfg;
  auto spec = parse_json(R"({"containers":[{"name":"c"}]})");
  apply_gpu_selectors(spec, {"nvidia-tesla-a100", "", false}, cfg);
  CHECK(spec.find("affinity") == nullptr);
  CHECK(spec.find("tolerations") == nullptr);
}

TEST_CASE("GPU accelerator: configured labels are used") {
  platform_config cfg;
  cfg.gpu_device_node_label = "gpu.example.com/model";
  auto spec = parse_json(R"({"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]})");
  apply_gpu_selectors(spec, {"h100", "", false}, cfg);
  CHECK(json::dump(spec).find("gpu.example.com/model") != std::string::npos);
}

TEST_CASE("interruptible: tolerations and node selector requirement, or the non-interruptible requirement") {
  platform_config cfg;
  cfg.interruptible_tolerations = parse_json(R"([{"key":"spot","operator":"Exists","effect":"NoSchedule"}])");
  cfg.default_tolerations = parse_json(R"([{"key":"team","operator":"Equal","value":"ml","effect":"NoSchedule"}])");
  cfg.interruptible_node_selector_requirement = parse_json(R"({"key":"spot","operator":"In","values":["true"]})");
  cfg.non_interruptible_node_selector_requirement = parse_json(R"({"key":"spot","operator":"DoesNotExist"})");
  cfg.default_node_selector = {{"pool", "tasks"}};

  auto spot = parse_json(R"({"tolerations":[{"key":"own","operator":"Exists"}],"nodeSelector":{"pool":"mine"}})");
  apply_interruptible_and_defaults(spot, true, cfg);
  const auto& tols = spot.find("tolerations")->as_array();
  REQUIRE(tols.size() == 3);
  CHECK(tols[0].get_string("key") == "spot");
  CHECK(tols[1].get_string("key") == "team");
  CHECK(tols[2].get_string("key") == "own");
  CHECK(spot.find("nodeSelector")->get_string("pool") == "mine"); // the pod's own value wins
  CHECK(json::dump(spot).find(R"("operator":"In","values":["true"])") != std::string::npos);

  auto on_demand = parse_json("{}");
  apply_interruptible_and_defaults(on_demand, false, cfg);
  CHECK(on_demand.find("tolerations")->as_array().size() == 1);
  CHECK(on_demand.find("nodeSelector")->get_string("pool") == "tasks");
  CHECK(json::dump(on_demand).find(R"({"key":"spot","operator":"DoesNotExist"})") != std::string::npos);
}

TEST_CASE("the interruptible failure threshold: the peer's table, counted in system failures") {
  auto task = make_task("spot", container_spec(R"("interruptible": true, "retries": 3)"));
  auto spec = decode_task(task, {"container", "pod"}).value();
  platform_config cfg;
  // (system failures so far, max-system-failures, threshold) → interruptible
  auto on_spot = [&](int failures, int max_failures, int threshold) {
    cfg.max_system_failures = max_failures;
    cfg.interruptible_failure_threshold = threshold;
    return attempt_interruptible(spec, cfg, failures);
  };
  CHECK(on_spot(0, 1, 1));        // Interruptible
  CHECK_FALSE(on_spot(1, 1, 1));  // NonInterruptible
  CHECK(on_spot(0, 1, -1));       // InterruptibleNegativeThreshold
  CHECK(on_spot(3, 4, -1));       // InterruptibleNegativeThreshold2
  CHECK_FALSE(on_spot(1, 1, -1)); // NonInterruptibleNegativeThreshold
  // The default (-1 with 3 system failures allowed): the fourth, last attempt runs on demand.
  cfg = platform_config{};
  CHECK(attempt_interruptible(spec, cfg, 2));
  CHECK_FALSE(attempt_interruptible(spec, cfg, 3));
  spec.interruptible = false;
  CHECK_FALSE(attempt_interruptible(spec, cfg, 0));
}

TEST_CASE("pod template: default and primary containers are the base, the task's values win") {
  auto templ = parse_json(R"({"template":{"metadata":{"labels":{"a":"templ","b":"templ"}},"spec":{
    "nodeSelector":{"disk":"ssd"},"tolerations":[{"key":"t1","operator":"Exists"}],
    "containers":[
      {"name":"default","image":"default-image","env":[{"name":"D","value":"1"}],"resources":{"limits":{"cpu":"1"}}},
      {"name":"primary","workingDir":"/primary","env":[{"name":"P","value":"1"}]},
      {"name":"unrelated","image":"never-copied"}]}}})");
  auto pod = parse_json(R"({"metadata":{"labels":{"b":"task"}},"spec":{
    "tolerations":[{"key":"t2","operator":"Exists"}],
    "containers":[{"name":"main","image":"task-image","env":[{"name":"T","value":"1"}],"resources":{"limits":{"memory":"1Gi"}}},
                  {"name":"side","image":"side-image"}]}})");
  auto merged = merge_pod_template(templ, pod, "main");
  CHECK(merged.at_path({"metadata", "labels"})->get_string("a") == "templ");
  CHECK(merged.at_path({"metadata", "labels"})->get_string("b") == "task");
  CHECK(merged.at_path({"spec", "nodeSelector"})->get_string("disk") == "ssd");
  CHECK(merged.at_path({"spec", "tolerations"})->as_array().size() == 2); // lists: template then task
  const auto& cs = merged.at_path({"spec", "containers"})->as_array();
  REQUIRE(cs.size() == 2);
  CHECK(cs[0].get_string("name") == "main");
  CHECK(cs[0].get_string("image") == "task-image");
  CHECK(cs[0].get_string("workingDir") == "/primary");
  CHECK(cs[0].find("env")->as_array().size() == 3); // D, P, T
  CHECK(cs[0].at_path({"resources", "limits"})->get_string("cpu") == "1");
  CHECK(cs[0].at_path({"resources", "limits"})->get_string("memory") == "1Gi");
  CHECK(cs[1].get_string("name") == "side");
  CHECK(cs[1].get_string("image") == "side-image");
  CHECK(cs[1].find("workingDir") == nullptr); // "primary" is only the primary's base
  CHECK(cs[1].find("env")->as_array().size() == 1);
}

TEST_CASE("pod template: empty task values do not override the template's") {
  auto merged = merge_values(parse_json(R"({"a":"x","b":true,"c":3})"), parse_json(R"({"a":"","b":false,"c":0})"));
  CHECK(json::dump(merged) == R"({"a":"x","b":true,"c":3})");
}

TEST_CASE("the attempt's pod: names, labels, annotations, owner, identity env, rendered args") {
  auto task = make_task("train", R"({"type":"container","container":{"image":"trainer:1",
      "args":["--data","{{ .Inputs.train }}","--out","{{.OutputPrefix}}","--ckpt","{{ .PrevCheckpointPrefix }}",
              "--key","{{ $PerRetryUniqueKey }}"]},
      "inputs":{"train":"s3://data/train"},"outputPrefix":"s3://out/train","environment":{"MODE":"fast"}})",
                        R"({"kozmo.io/project":"vision"})");
  task.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{...}";
  task.metadata.annotations["note"] = "hi";
  platform_config cfg;
  cfg.default_labels = {{"platform", "kozmo"}};
  cfg.scheduler_name = "kozmo";
  auto pod = build(task, cfg, 1);
  const auto& meta = *pod.find("metadata");
  CHECK(meta.get_string("name") == "train-1");
  CHECK(meta.find("labels")->get_string("platform") == "kozmo");
  CHECK(meta.find("labels")->get_string("kozmo.io/project") == "vision");
  CHECK(meta.find("labels")->get_string("kozmo.io/task-attempt") == "1");
  CHECK(meta.find("annotations")->get_string("note") == "hi");
  CHECK(meta.find("annotations")->get_string("cluster-autoscaler.kubernetes.io/safe-to-evict") == "false");
  CHECK(meta.find("annotations")->find("kubectl.kubernetes.io/last-applied-configuration") == nullptr);
  CHECK(meta.find("ownerReferences")->as_array()[0].get_string("kind") == "TaskExecution");
  CHECK(pod.at_path({"spec"})->get_string("restartPolicy") == "Never");
  CHECK(pod.at_path({"spec"})->get_string("schedulerName") == "kozmo");
  const auto& c = container0(pod);
  CHECK(c.get_string("name") == "primary");
  const auto& args = c.find("args")->as_array();
  CHECK(args[1].as_string() == "s3://data/train");
  CHECK(args[3].as_string() == "s3://out/train");
  CHECK(args[5].as_string() == "s3://out/train/checkpoints/0");
  CHECK(args[7].as_string() == "train_1");
  std::map<std::string, std::string> env;
  for (const auto& e : c.find("env")->as_array())
    env[e.get_string("name")] = e.get_string("value");
  CHECK(env["KOZMO_TASK_NAME"] == "train");
  CHECK(env["KOZMO_ATTEMPT_NUMBER"] == "1");
  CHECK(env["KOZMO_PROJECT"] == "vision");
  CHECK(env["MODE"] == "fast");
  CHECK(res(*c.find("resources"), "requests", "cpu") == "1");
}

TEST_CASE("the first attempt's previous checkpoint renders as an empty quoted string") {
  auto task = make_task("ck", R"({"type":"container","container":{"image":"x","args":["{{ .PrevCheckpointPrefix }}"]},
      "outputPrefix":"file:///tmp/o"})");
  platform_config cfg;
  auto pod = build(task, cfg, 0);
  CHECK(container0(pod).find("args")->as_array()[0].as_string() == "\"\"");
}

TEST_CASE("an unknown template variable fails the pod build and names it") {
  auto task = make_task("typo", R"({"type":"container","container":{"image":"x","args":["{{ .OutputPrefx }}"]}})");
  auto spec = decode_task(task, {"container", "pod"}).value();
  platform_config cfg;
  attempt_pod_input in{&task, &spec, &cfg, 0, false, nullptr};
  auto pod = build_attempt_pod(in);
  REQUIRE_FALSE(pod.has_value());
  CHECK(pod.err().message.find("spec.container.args[0]") != std::string::npos);
  CHECK(pod.err().message.find("{{ .OutputPrefx }}: unknown template variable") != std::string::npos);
}

TEST_CASE("a GPU task on an accelerator gets the device's affinity on its pod") {
  auto task = make_task("gpu", R"({"type":"container","container":{"image":"x","resources":{"limits":{"gpu":"2"}}},
      "gpuAccelerator":{"device":"nvidia-tesla-v100"}})");
  platform_config cfg;
  auto pod = build(task, cfg);
  CHECK(res(*container0(pod).find("resources"), "limits", "nvidia.com/gpu") == "2");
  CHECK(json::dump(pod).find(R"({"key":"k8s.amazonaws.com/accelerator","operator":"In","values":["nvidia-tesla-v100"]})") !=
        std::string::npos);
}

TEST_CASE("a pod task: the primary merges spec.resources, sidecars are only kept in range") {
  auto task = make_task("pt", R"({"type":"pod","pod":{"primaryContainerName":"main","spec":{"containers":[
      {"name":"main","image":"m","resources":{"requests":{"cpu":"2"}}},
      {"name":"side","image":"s","resources":{"limits":{"cpu":"64"}}}]}},
      "resources":{"requests":{"memory":"2Gi"}}})");
  platform_config cfg;
  cfg.resource_limits["cpu"] = q("16");
  auto pod = build(task, cfg);
  const auto& cs = pod.at_path({"spec"})->find("containers")->as_array();
  CHECK(res(*cs[0].find("resources"), "requests", "cpu") == "2");
  CHECK(res(*cs[0].find("resources"), "requests", "memory") == "2Gi");
  CHECK(res(*cs[1].find("resources"), "limits", "cpu") == "16");
  CHECK(cs[1].at_path({"resources", "requests"}) == nullptr);
}

TEST_CASE("secrets reach every container by reference: env from secretKeyRef, files from a secret volume") {
  auto task = make_task("s", R"({"type":"pod","pod":{"primaryContainerName":"main","spec":{
      "initContainers":[{"name":"fetch","image":"x"}],
      "containers":[{"name":"main","image":"x","env":[{"name":"DB_PASSWORD","value":"set-by-user"}]},
                    {"name":"side","image":"y"}]}},
    "secrets":[{"name":"db","key":"password","envVar":"DB_PASSWORD"},
               {"name":"db","key":"user"},
               {"name":"tls.certs","key":"ca.crt","mountAs":"file"},
               {"name":"tls.certs","key":"client.key","mountAs":"file","path":"/run/keys/client.key"}]})");
  platform_config cfg;
  auto pod = build(task, cfg);
  const auto& spec = *pod.at_path({"spec"});
  const auto& volumes = spec.find("volumes")->as_array();
  REQUIRE(volumes.size() == 1); // one volume per Secret
  CHECK(volumes[0].get_string("name") == "kozmo-secret-0");
  CHECK(volumes[0].at_path({"secret", "secretName"})->as_string() == "tls.certs");
  std::vector<const json::value*> containers{&spec.find("initContainers")->as_array()[0]};
  for (const auto& c : spec.find("containers")->as_array())
    containers.push_back(&c);
  for (const auto* c : containers) {
    INFO(c->get_string("name"));
    std::map<std::string, json::value> env;
    for (const auto& e : c->find("env")->as_array())
      env[e.get_string("name")] = e;
    // The default variable name, from a secretKeyRef.
    REQUIRE(env.count("KOZMO_SECRET_DB_USER"));
    CHECK(env["KOZMO_SECRET_DB_USER"].at_path({"valueFrom", "secretKeyRef", "name"})->as_string() == "db");
    CHECK(env["KOZMO_SECRET_DB_USER"].at_path({"valueFrom", "secretKeyRef", "key"})->as_string() == "user");
    REQUIRE(env.count("DB_PASSWORD"));
    if (c->get_string("name") == "main") // a container's own variable wins
      CHECK(env["DB_PASSWORD"].get_string("value") == "set-by-user");
    else
      CHECK(env["DB_PASSWORD"].at_path({"valueFrom", "secretKeyRef", "key"})->as_string() == "password");
    std::map<std::string, json::value> mounts;
    for (const auto& m : c->find("volumeMounts")->as_array())
      mounts[m.get_string("mountPath")] = m;
    REQUIRE(mounts.count("/etc/kozmo/secrets/tls.certs/ca.crt"));
    CHECK(mounts["/etc/kozmo/secrets/tls.certs/ca.crt"].get_string("subPath") == "ca.crt");
    CHECK(mounts["/etc/kozmo/secrets/tls.certs/ca.crt"].get_bool("readOnly"));
    REQUIRE(mounts.count("/run/keys/client.key"));
    CHECK(mounts["/run/keys/client.key"].get_string("name") == "kozmo-secret-0");
  }
  // No secret value is in Kozmo's hands: the pod holds references only.
  CHECK(json::dump(pod).find("\"value\":\"set-by-user\"") != std::string::npos);
}

TEST_CASE("every bad secret reference names its field") {
  auto message = [](const std::string& secrets) {
    auto task = make_task("s", container_spec("\"secrets\":" + secrets));
    auto spec = decode_task(task, {"container", "pod"});
    return spec ? std::string("accepted") : spec.err().message;
  };
  CHECK(message(R"([{"key":"k"}])") == "spec.secrets[0].name: Required value: the Secret, in the task's namespace");
  CHECK(message(R"([{"name":"Db","key":"k"}])").rfind("spec.secrets[0].name: Invalid value: \"Db\"", 0) == 0);
  CHECK(message(R"([{"name":"db"}])") == "spec.secrets[0].key: Required value: the key of Secret \"db\"");
  CHECK(message(R"([{"name":"db","key":"k","mountAs":"volume"}])") ==
        "spec.secrets[0].mountAs: Unsupported value: \"volume\": supported values: \"env\", \"file\"");
  CHECK(message(R"([{"name":"db","key":"k","mountAs":"file","envVar":"X"}])") ==
        "spec.secrets[0].envVar: Invalid value: \"X\": mountAs file takes path, not envVar");
  CHECK(message(R"([{"name":"db","key":"k","mountAs":"file","path":"rel/k"}])").rfind(
            "spec.secrets[0].path: Invalid value: \"rel/k\": must be an absolute file path", 0) == 0);
  CHECK(message(R"([{"name":"db","key":"k","mountAs":"file","path":"/etc/../k"}])").rfind(
            "spec.secrets[0].path: Invalid value", 0) == 0);
  CHECK(message(R"([{"name":"db","key":"k","envVar":"1X"}])") ==
        "spec.secrets[0].envVar: Invalid value: \"1X\": must be an environment variable's name");
  CHECK(message(R"([{"name":"db","key":"a","envVar":"X"},{"name":"db","key":"b","envVar":"X"}])") ==
        "spec.secrets[1]: Invalid value: \"$X\": is also where spec.secrets[0] goes");
  CHECK(message(R"({"name":"db"})").rfind("spec.secrets: Invalid value", 0) == 0);
  CHECK(message(R"([{"name":"db","key":"k"}])") == "accepted");
}
