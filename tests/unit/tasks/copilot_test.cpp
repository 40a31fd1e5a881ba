// Data loading (the co-pilot): spec.dataLoading's decoding, the copilot configuration keys, the
// pod additions (volumes, mounts, the wrapped command, the two containers, credentials by
// reference), and how a failed copilot container reads as the task's end.
#include "actors/tasks/copilot.hpp"
#include "actors/tasks/task_pod.hpp"
#include "fixture.hpp"

using namespace tasks_test;

namespace {

const std::string loading_spec =
    R"({"type":"container","container":{"image":"busybox","command":["sh","-c","tr a-z A-Z < /var/kozmo/inputs/text > /var/kozmo/outputs/upper"],
        "resources":{"requests":{"ephemeral-storage":"2Gi"}}},
        "inputs":{"text":"file:///tmp/in/text.txt","data":"s3://bucket/data/"},"outputPrefix":"file:///tmp/out/",
        "dataLoading":{}})";

expected<task_spec> decode(const std::string& spec) { return decode_task(make_task("t", spec), {"container", "pod"}); }

std::string decode_error(const std::string& spec) {
  auto s = decode(spec);
  return s ? "" : s.err().message;
}

json::value build(const std::string& spec_json, const platform_config& cfg) {
  auto task = make_task("t", spec_json);
  auto spec = decode_task(task, {"container", "pod"});
  INFO((spec ? "" : spec.err().message));
  REQUIRE(spec.has_value());
  attempt_pod_input in{&task, &*spec, &cfg, 0, false, nullptr};
  auto pod = build_attempt_pod(in);
  INFO((pod ? "" : pod.err().message));
  REQUIRE(pod.has_value());
  return *pod;
}

const json::value* named(const json::value& pod, const char* list, const std::string& name) {
  const auto* l = pod.at_path({"spec", list});
  if (!l)
    return nullptr;
  for (const auto& c : l->as_array())
    if (c.get_string("name") == name)
      return &c;
  return nullptr;
}

std::vector<std::string> strings(const json::value* list) {
  std::vector<std::string> out;
  if (list)
    for (const auto& v : list->as_array())
      out.push_back(v.as_string());
  return out;
}

} // namespace

TEST_CASE("dataLoading: an empty block turns it on with the peer's layout under /var/kozmo") {
  auto s = decode(loading_spec);
  REQUIRE(s.has_value());
  REQUIRE(s->data_loading.has_value());
  CHECK(s->data_loading->input_path == "/var/kozmo/inputs");
  CHECK(s->data_loading->output_path == "/var/kozmo/outputs");
  auto off = decode(container_spec(R"("dataLoading":{"enabled":false,"inputPath":"/x"})"));
  REQUIRE(off.has_value());
  CHECK_FALSE(off->data_loading.has_value());
  auto custom = decode(container_spec(R"("dataLoading":{"inputPath":"/data/in","outputPath":"/data/out"})"));
  REQUIRE(custom.has_value());
  CHECK(custom->data_loading->input_path == "/data/in");
  CHECK_FALSE(decode(container_spec())->data_loading.has_value());
}

TEST_CASE("dataLoading: malformed blocks are errors that name the field") {
  CHECK(decode_error(container_spec(R"("dataLoading":true)")).starts_with("spec.dataLoading: Invalid value: true"));
  CHECK(decode_error(container_spec(R"("dataLoading":{"enabled":"yes"})")).starts_with("spec.dataLoading.enabled: Invalid value"));
  CHECK(decode_error(container_spec(R"("dataLoading":{"inputPath":"relative"})")).starts_with("spec.dataLoading.inputPath: Invalid value: \"relative\""));
  CHECK(decode_error(container_spec(R"("dataLoading":{"inputPath":"/a/../b"})")).starts_with("spec.dataLoading.inputPath"));
  CHECK(decode_error(container_spec(R"("dataLoading":{"inputPath":"/a'b"})")).starts_with("spec.dataLoading.inputPath"));
  CHECK(decode_error(container_spec(R"("dataLoading":{"inputPath":"/d","outputPath":"/d/out"})"))
            .starts_with("spec.dataLoading.outputPath: Invalid value: \"/d/out\": must be apart from inputPath"));
  CHECK(decode_error(container_spec(R"("inputs":{"_x":"file:///a"},"dataLoading":{})")).starts_with("spec.inputs: Invalid value: \"_x\""));
  CHECK(decode_error(container_spec(R"("inputs":{"a/b":"file:///a"},"dataLoading":{})")).starts_with("spec.inputs: Invalid value: \"a/b\""));
  CHECK(decode_error(container_spec(R"("inputs":{"a":"gs://b/k"},"dataLoading":{})")) ==
        "spec.inputs[a]: Invalid value: \"gs://b/k\": supported schemes: file:///path, s3://bucket/key");
  CHECK(decode_error(container_spec(R"("inputs":{"a":"s3:///k"},"dataLoading":{})")).find("names a bucket") != std::string::npos);
  CHECK(decode_error(container_spec(R"("outputPrefix":"http://x/","dataLoading":{})")).starts_with("spec.outputPrefix: Invalid value"));
  CHECK(decode_error(R"({"type":"container","container":{"image":"x"},"dataLoading":{}})")
            .starts_with("spec.container.command: Required value: dataLoading runs the command under a wrapper"));
  CHECK(decode_error(R"({"type":"pod","pod":{"primaryContainerName":"m","spec":{"containers":[{"name":"m","image":"x"}]}},"dataLoading":{}})")
            .starts_with("spec.dataLoading: Invalid value: {...}: only type container takes it"));
  // Without dataLoading, inputs are names for templates only: any name goes.
  CHECK(decode_error(container_spec(R"("inputs":{"_x":"gs://b/k"})")).empty());
}

TEST_CASE("tasks.copilot: every key parsed, bad values named") {
  auto section = parse_json(R"({"copilot":{"image":"reg/kozmo:1","command":"/usr/bin/kozmo","cpu":"250m","memory":"64Mi",
      "max-dataset-size":"10Gi","timeout":"30m","s3-endpoint":"http://minio:9000","s3-region":"eu-west-1",
      "s3-path-style":false,"s3-credentials-secret":"store","s3-access-key-id-key":"id","s3-secret-access-key-key":"key"}})");
  auto c = parse_platform_config(section);
  REQUIRE(c.has_value());
  const auto& cp = c->copilot;
  CHECK(cp.image == "reg/kozmo:1");
  CHECK(cp.command == "/usr/bin/kozmo");
  CHECK(cp.cpu.to_string() == "250m");
  CHECK(cp.memory.to_string() == "64Mi");
  REQUIRE(cp.max_dataset_size.has_value());
  CHECK(cp.max_dataset_size->value() == 10LL * 1024 * 1024 * 1024);
  CHECK(cp.timeout == std::chrono::minutes(30));
  CHECK(cp.s3_endpoint == "http://minio:9000");
  CHECK(cp.s3_region == "eu-west-1");
  CHECK_FALSE(cp.s3_path_style);
  CHECK(cp.s3_credentials_secret == "store");
  CHECK(cp.s3_access_key_id_key == "id");
  CHECK(cp.s3_secret_access_key_key == "key");

  platform_config defaults;
  CHECK(defaults.copilot.timeout == std::chrono::hours(1));
  CHECK(defaults.copilot.cpu.to_string() == "500m");
  CHECK(defaults.copilot.memory.to_string() == "128Mi");
  CHECK_FALSE(defaults.copilot.max_dataset_size.has_value());

  auto err = [](const char* text) {
    auto c = parse_platform_config(parse_json(text));
    return c ? std::string() : c.err().message;
  };
  CHECK(err(R"({"copilot":{"timeout":"soon"}})").starts_with("tasks.copilot.timeout: \"soon\" is not a duration"));
  CHECK(err(R"({"copilot":{"max-dataset-size":"-1"}})").starts_with("tasks.copilot.max-dataset-size:"));
  CHECK(err(R"({"copilot":{"image":""}})") == "tasks.copilot.image: must not be empty");
  CHECK(err(R"({"copilot":{"s3-path-style":"yes"}})") == "tasks.copilot.s3-path-style: must be true or false");
  CHECK(err(R"({"copilot":{"bucket":"x"}})").starts_with("tasks.copilot.bucket: unknown setting"));
  CHECK(err(R"({"copilot":[]})").starts_with("tasks.copilot: must be a map"));
}

TEST_CASE("the pod of a task with data loading: volumes sized from ephemeral storage, mounts, wrapper, copilots") {
  platform_config cfg;
  cfg.copilot.image = "kozmo:test";
  cfg.copilot.s3_endpoint = "http://127.0.0.1:4569";
  cfg.copilot.s3_credentials_secret = "store-keys";
  cfg.copilot.max_dataset_size = k8s::quantity::parse("1Gi").value();
  auto pod = build(loading_spec, cfg);

  const auto* volumes = pod.at_path({"spec", "volumes"});
  REQUIRE(volumes);
  REQUIRE(volumes->as_array().size() == 2);
  CHECK(json::dump(volumes->as_array()[0]) == R"({"name":"kozmo-inputs","emptyDir":{"sizeLimit":"2Gi"}})");
  CHECK(json::dump(volumes->as_array()[1]) == R"({"name":"kozmo-outputs","emptyDir":{"sizeLimit":"2Gi"}})");

  const auto* primary = named(pod, "containers", "primary");
  REQUIRE(primary);
  auto cmd = strings(primary->find("command"));
  REQUIRE(cmd.size() == 7);
  CHECK(cmd[0] == "/bin/sh");
  CHECK(cmd[1] == "-c");
  CHECK(cmd[2] == "\"$@\"; rc=$?; echo \"$rc\" > '/var/kozmo/outputs/_EXIT.tmp' && mv '/var/kozmo/outputs/_EXIT.tmp' "
                  "'/var/kozmo/outputs/_EXIT'; exit \"$rc\"");
  CHECK(cmd[3] == "kozmo-wrapped");
  CHECK(cmd[4] == "sh");
  CHECK(cmd[6] == "tr a-z A-Z < /var/kozmo/inputs/text > /var/kozmo/outputs/upper");
  CHECK(primary->find("args") == nullptr);
  CHECK(json::dump(*primary->find("volumeMounts")) ==
        R"([{"name":"kozmo-inputs","mountPath":"/var/kozmo/inputs"},{"name":"kozmo-outputs","mountPath":"/var/kozmo/outputs"}])");

  const auto* down = named(pod, "initContainers", copilot_downloader);
  REQUIRE(down);
  CHECK(down->get_string("image") == "kozmo:test");
  CHECK(strings(down->find("command")) == std::vector<std::string>{"kozmo"});
  CHECK(strings(down->find("args")) ==
        std::vector<std::string>{"copilot", "download", "--input-path", "/var/kozmo/inputs", "--input",
                                 "data=s3://bucket/data/", "--input", "text=file:///tmp/in/text.txt",
                                 "--max-dataset-size", "1073741824", "--s3-endpoint", "http://127.0.0.1:4569",
                                 "--s3-region", "us-east-1"});
  CHECK(json::dump(*down->find("volumeMounts")) == R"([{"name":"kozmo-inputs","mountPath":"/var/kozmo/inputs"}])");
  CHECK(json::dump(*down->find("resources")) ==
        R"({"requests":{"cpu":"500m","memory":"128Mi"},"limits":{"cpu":"500m","memory":"128Mi"}})");
  // Credentials by reference only.
  CHECK(json::dump(*down->find("env")) ==
        R"([{"name":"AWS_ACCESS_KEY_ID","valueFrom":{"secretKeyRef":{"name":"store-keys","key":"AWS_ACCESS_KEY_ID"}}},)"
        R"({"name":"AWS_SECRET_ACCESS_KEY","valueFrom":{"secretKeyRef":{"name":"store-keys","key":"AWS_SECRET_ACCESS_KEY"}}}])");
  // The task's own env does not reach the copilot.
  CHECK(json::dump(*down).find("KOZMO_TASK_NAME") == std::string::npos);

  const auto* up = named(pod, "containers", copilot_uploader);
  REQUIRE(up);
  CHECK(strings(up->find("args")) == std::vector<std::string>{"copilot", "upload", "--output-path", "/var/kozmo/outputs",
                                                              "--output-prefix", "file:///tmp/out/", "--timeout", "1h0m0s"});
  CHECK(up->find("env") == nullptr); // a file:// prefix needs no store credentials
  CHECK(json::dump(*up->find("volumeMounts")) == R"([{"name":"kozmo-outputs","mountPath":"/var/kozmo/outputs"}])");
  CHECK(pod.at_path({"spec", "restartPolicy"})->as_string() == "Never");
}

TEST_CASE("data volumes: the ephemeral-storage limit first, then the request, else no size limit") {
  CHECK(data_volume_size(parse_json(R"({"requests":{"ephemeral-storage":"1Gi"},"limits":{"ephemeral-storage":"4Gi"}})")) == "4Gi");
  CHECK(data_volume_size(parse_json(R"({"requests":{"ephemeral-storage":"1Gi"}})")) == "1Gi");
  CHECK_FALSE(data_volume_size(parse_json(R"({"requests":{"cpu":"1"}})")).has_value());
  auto pod = build(container_spec(R"("outputPrefix":"file:///o/","dataLoading":{})"), platform_config{});
  CHECK(json::dump(*pod.at_path({"spec", "volumes"})) ==
        R"([{"name":"kozmo-inputs","emptyDir":{}},{"name":"kozmo-outputs","emptyDir":{}}])");
  // No inputs: no downloader. An output prefix: an uploader, and args the wrapper carries.
  CHECK(named(pod, "initContainers", copilot_downloader) == nullptr);
  CHECK(named(pod, "containers", copilot_uploader) != nullptr);
}

TEST_CASE("data loading without an output prefix: no uploader and the command is left as written") {
  auto pod = build(container_spec(R"("inputs":{"a":"file:///a"},"dataLoading":{})"), platform_config{});
  CHECK(named(pod, "containers", copilot_uploader) == nullptr);
  CHECK(strings(named(pod, "containers", "primary")->find("command")) == std::vector<std::string>{"sh", "-c", "echo hi"});
  CHECK(named(pod, "initContainers", copilot_downloader) != nullptr);
}

TEST_CASE("the wrapper keeps every word of the command and args as it was, quotes included") {
  auto w = wrapped_command({"python", "-c", "print('a b')", "$HOME"}, "/o");
  CHECK(w == std::vector<std::string>{"/bin/sh", "-c",
                                      "\"$@\"; rc=$?; echo \"$rc\" > '/o/_EXIT.tmp' && mv '/o/_EXIT.tmp' '/o/_EXIT'; exit \"$rc\"",
                                      "kozmo-wrapped", "python", "-c", "print('a b')", "$HOME"});
}

TEST_CASE("termination messages: code, user flag and text; anything else falls back to the container's code") {
  auto f = parse_failure("InputDownloadFailed (user error): input \"a\" file:///x: no such file", "X");
  CHECK(f.code == "InputDownloadFailed");
  CHECK(f.user);
  CHECK(f.message == "input \"a\" file:///x: no such file");
  CHECK(format_failure(f) == "InputDownloadFailed (user error): input \"a\" file:///x: no such file");
  auto g = parse_failure("OutputUploadFailed: PUT http://s3/b/k: 503", "X");
  CHECK(g.code == "OutputUploadFailed");
  CHECK_FALSE(g.user);
  auto h = parse_failure("segmentation fault", "OutputUploadFailed");
  CHECK(h.code == "OutputUploadFailed");
  CHECK(h.message == "segmentation fault");
  CHECK(parse_failure("", "InputDownloadFailed").message == "no termination message");
}

TEST_CASE("an _ERROR text over the limit is cut on a UTF-8 boundary with a note saying where the rest is") {
  CHECK(error_file_message("short", 5, 100, "s3://b/_ERROR") == "short");
  std::string text = "ab\xc3\xa9" "cd"; // é is two bytes at 2..3
  auto cut = error_file_message(text, 6, 3, "s3://b/o/_ERROR");
  CHECK(cut == "ab\n... (truncated: the first 2 of 6 bytes; the whole text is at s3://b/o/_ERROR)");
  // The file was larger than what was read: the note gives its real size.
  CHECK(error_file_message("abc", 5000000, 3, "").ends_with("the first 3 of 5000000 bytes)"));
}

TEST_CASE("copilot verdicts: download, upload and _ERROR failures, and a failed primary while the uploader runs") {
  k8s::pod p;
  p.status.phase = "Failed";
  p.status.init_container_statuses = {terminated(copilot_downloader, 1, "Error",
                                                 "InputDownloadFailed (user error): input \"text\" file:///in/t: does not exist")};
  auto v = copilot_verdict(p, "primary", t0());
  REQUIRE(v.has_value());
  CHECK(v->what == demystify::outcome::permanent_failure);
  CHECK(v->whose == demystify::fault::user);
  CHECK(v->code == "InputDownloadFailed");
  CHECK(v->message == "[kozmo-copilot-downloader] input \"text\" file:///in/t: does not exist");
  CHECK_FALSE(v->cleanup); // the pod has ended: it stays for `kubectl logs`

  p.status.init_container_statuses = {terminated(copilot_downloader, 1, "Error", "InputDownloadFailed: GET http://s3/b/k: connection refused")};
  v = copilot_verdict(p, "primary", t0());
  CHECK(v->what == demystify::outcome::retryable_failure);
  CHECK(v->whose == demystify::fault::system);
  p.status.init_container_statuses = {terminated(copilot_downloader, 137, "OOMKilled")};
  v = copilot_verdict(p, "primary", t0());
  CHECK(v->whose == demystify::fault::system);
  CHECK(v->message.find("raise tasks.copilot.memory") != std::string::npos);

  p.status.init_container_statuses = {terminated(copilot_downloader, 0, "Completed")};
  p.status.container_statuses = {terminated("primary", 3, "Error"),
                                 terminated(copilot_uploader, 1, "Error", "UserError: the model diverged")};
  v = copilot_verdict(p, "primary", t0());
  REQUIRE(v.has_value());
  CHECK(v->code == "UserError");
  CHECK(v->whose == demystify::fault::user);
  CHECK(v->what == demystify::outcome::retryable_failure);
  CHECK(v->message == "the model diverged");

  p.status.phase = "Running";
  p.status.container_statuses = {terminated("primary", 0, "Completed"),
                                 terminated(copilot_uploader, 1, "Error", "OutputUploadFailed: PUT s3://b/o/x: 403 AccessDenied")};
  v = copilot_verdict(p, "primary", t0());
  CHECK(v->code == "OutputUploadFailed");
  CHECK(v->whose == demystify::fault::system);
  CHECK(v->cleanup);

  // The primary failed, the uploader still runs: wait a little for its _ERROR report, then
  // the primary's exit decides and the pod goes.
  auto main = terminated("primary", 2, "Error");
  main.state.terminated->finished_at = t0();
  p.status.container_statuses = {main, running_container(copilot_uploader)};
  v = copilot_verdict(p, "primary", t0() + 5s);
  CHECK(v->what == demystify::outcome::running);
  CHECK(v->deadline == t0() + uploader_grace);
  v = copilot_verdict(p, "primary", t0() + uploader_grace);
  CHECK(v->what == demystify::outcome::retryable_failure);
  CHECK(v->code == "Error");
  CHECK(v->cleanup);

  // Nothing copilot-specific: demystify's reading stands.
  p.status.container_statuses = {running_container("primary"), running_container(copilot_uploader)};
  CHECK_FALSE(copilot_verdict(p, "primary", t0()).has_value());
}

TEST_CASE("a task whose input download fails reports InputDownloadFailed with the downloader's words") {
  fake_cluster c(make_task("dl", loading_spec));
  c.round();
  auto& pod = c.pod_of_attempt(0);
  pod.status.phase = "Failed";
  pod.status.init_container_statuses = {terminated(copilot_downloader, 1, "Error",
                                                   "InputDownloadFailed (user error): input \"text\" file:///tmp/in/text.txt: "
                                                   "does not exist")};
  pod.status.container_statuses = {waiting("primary", "PodInitializing")};
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "InputDownloadFailed");
  CHECK(c.status().message.find("input \"text\" file:///tmp/in/text.txt: does not exist") != std::string::npos);
  CHECK(c.created.size() == 1); // permanent: no retry
}

TEST_CASE("a task whose program writes _ERROR fails with that text as a user error") {
  fake_cluster c(make_task("err", loading_spec));
  c.round();
  auto& pod = c.pod_of_attempt(0);
  pod.status.phase = "Failed";
  pod.status.init_container_statuses = {terminated(copilot_downloader, 0, "Completed")};
  pod.status.container_statuses = {terminated("primary", 1, "Error"),
                                   terminated(copilot_uploader, 1, "Error", "UserError: bad learning rate")};
  c.round();
  CHECK(c.phase() == "Failed");
  CHECK(c.status().reason == "UserError");
  CHECK(c.status().message.find("bad learning rate") != std::string::npos);
}
