// The small pieces: generated names, command templates, phases and versions, the resource
// manager's allocation rules, the platform configuration and the spec's validation.
#include "actors/tasks/command_template.hpp"
#include "actors/tasks/names.hpp"
#include "actors/tasks/resource_pools.hpp"
#include "fixture.hpp"

using namespace tasks_test;

TEST_CASE("generated names: short ids are kept, long ones hashed to 'f' and base32 of FNV-1a") {
  CHECK(generated_name("my-task-0").value() == "my-task-0");
  // Vectors worked out from the rule: FNV-1a 32 of the id, its 4 big-endian bytes in base32
  // with the alphabet a-z1-6, no padding.
  CHECK(generated_name(std::string(60, 'a')).value() == "fsk35cei"); // 0x92b9e111
  CHECK(generated_name("my-very-long-workflow-execution-identifier-that-goes-on-n0-0").value() == "fllwg3vi");
  CHECK(generated_name("abc", 0, 2).has_value() == false); // the hash itself does not fit
  CHECK(generated_name("abc", 0, 8).value() == "abc");
  CHECK(generated_name("abcdefghi", 0, 8).value().size() == 8);
  CHECK(generated_name("ab", 5).value() == "ab000"); // padded to the minimum
}

TEST_CASE("attempt pods are named after the task and the attempt") {
  CHECK(attempt_pod_name("train", 0) == "train-0");
  CHECK(attempt_pod_name("train", 12) == "train-12");
  CHECK(attempt_pod_name(std::string(49, 'x'), 1).size() == 8);
}

TEST_CASE("templates: every variable, case-insensitive, with . or $ and spaces") {
  template_values v;
  v.input = "/in/inputs.json";
  v.input_prefix = "/in";
  v.output_prefix = "s3://o";
  v.raw_output_data_prefix = "s3://o/raw";
  v.checkpoint_output_prefix = "s3://o/checkpoints/1";
  v.prev_checkpoint_prefix = "s3://o/checkpoints/0";
  v.per_retry_unique_key = "t-1";
  v.task_template_path = "/apis/x";
  v.namespace_ = "ml";
  v.inputs = {{"train", "s3://d/train"}};
  CHECK(render_template("{{ .Input }} {{.InputPrefix}} {{ $OutputPrefix }}", v).value() == "/in/inputs.json /in s3://o");
  CHECK(render_template("{{.rawoutputdataprefix}}|{{ .CheckpointOutputPrefix }}|{{ .PrevCheckpointPrefix }}", v).value() ==
        "s3://o/raw|s3://o/checkpoints/1|s3://o/checkpoints/0");
  CHECK(render_template("{{ .PerRetryUniqueKey }} {{ .TaskTemplatePath }} {{ .Namespace }}", v).value() ==
        "t_1 /apis/x ml");
  CHECK(render_template("--data={{ .Inputs.train }}", v).value() == "--data=s3://d/train");
  CHECK(render_template("--data={{ .inputs.TRAIN }}", v).value() == "--data=s3://d/train");
}

TEST_CASE("templates: unknown variables and inputs are errors naming them; other braces stay") {
  template_values v;
  auto bad = render_template("{{ .Outputprefx }}", v);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.err().message.find("{{ .Outputprefx }}: unknown template variable (known: Input, ") != std::string::npos);
  auto missing = render_template("{{ .Inputs.nope }}", v);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.err().message.find("no input named \"nope\"") != std::string::npos);
  CHECK(render_template("echo {{ not a variable }} and {{", v).value() == "echo {{ not a variable }} and {{");
  CHECK(render_template("awk '{print $1}'", v).value() == "awk '{print $1}'");
}

TEST_CASE("templates: the per-retry key is an identifier, as the peer makes it") {
  template_values v;
  v.per_retry_unique_key = "per-retry-unique-key";
  CHECK(render_template("{{ .PerretryuNIqueKey }}", v).value() == "per_retry_unique_key");
  v.per_retry_unique_key = "33 per retry-unique-key";
  CHECK(render_template("{{ .perRetryUniqueKey }}", v).value() == "aper_retry_unique_key");
}

TEST_CASE("templates: a prefix may name the namespace") {
  template_values v;
  v.namespace_ = "test-namespace";
  v.raw_output_data_prefix = "s3://raw-data/prefix/{{ .Namespace }}";
  v.checkpoint_output_prefix = "s3://ckpt/{{.namespace}}";
  CHECK(render_template("{{ .RawOutputDataPrefix }} {{ .CheckpointOutputPrefix }}", v).value() ==
        "s3://raw-data/prefix/test-namespace s3://ckpt/test-namespace");
}

TEST_CASE("templates: the peer's matching cases") {
  template_values v;
  v.input = "input/blah";
  v.output_prefix = "output/blah";
  v.raw_output_data_prefix = "s3://custom-bucket";
  for (const char* yes : {"{{$input}}", "{{ $Input }}", "{{.input}}", "{{  .Input }}", "{{.Input }}"})
    CHECK(render_template(yes, v).value() == "input/blah");
  CHECK(render_template("--something={{.Input}}", v).value() == "--something=input/blah");
  CHECK(render_template("{{input}}", v).value() == "{{input}}");
  CHECK(render_template("{$input}}", v).value() == "{$input}}");
  CHECK(render_template("${{input}}", v).value() == "${{input}}");
  CHECK(render_template("--switch {{ .rawOutputDataPrefix }}", v).value() == "--switch s3://custom-bucket");
}

TEST_CASE("templates: an empty previous checkpoint renders as an empty quoted string") {
  template_values v;
  CHECK(render_template("--prev {{ .PrevCheckpointPrefix }}", v).value() == "--prev \"\"");
}

TEST_CASE("phase versions: 0 in a new phase, +1 when the reason changes, unchanged otherwise") {
  std::optional<recorded_phase> none;
  CHECK(stamp(none, task_phase::queued, "Scheduling", 0).version == 0);
  CHECK(stamp(none, task_phase::queued, "Scheduling", 0).changed);
  recorded_phase q{task_phase::queued, 0, "Scheduling", 0};
  auto same = stamp(q, task_phase::queued, "Scheduling", 0);
  CHECK_FALSE(same.changed);
  CHECK(same.version == 0);
  auto reason = stamp(q, task_phase::queued, "Unschedulable", 0);
  CHECK(reason.changed);
  CHECK(reason.version == 1);
  auto phase = stamp(recorded_phase{task_phase::queued, 3, "x", 0}, task_phase::running, "", 0);
  CHECK(phase.changed);
  CHECK(phase.version == 0);
  auto attempt = stamp(q, task_phase::queued, "Scheduling", 1);
  CHECK(attempt.changed);
  CHECK(attempt.version == 1);
}

TEST_CASE("phases: names, terminal ones, and how plugin phases show") {
  CHECK(to_string(task_phase::waiting_for_resources) == "WaitingForResources");
  CHECK(task_phase_from("Succeeded") == task_phase::succeeded);
  CHECK_FALSE(task_phase_from("Success").has_value());
  CHECK(is_terminal(task_phase::aborted));
  CHECK_FALSE(is_terminal(task_phase::running));
  CHECK(shown_as(plugin_phase::not_ready) == task_phase::queued);
  CHECK(shown_as(plugin_phase::initializing) == task_phase::initializing);
}

TEST_CASE("resource manager: allocation is idempotent per token and never over quota") {
  pool_book book;
  book.set_pool("p", {2, std::nullopt, std::nullopt});
  pool_request a{"a", "ns1", "proj", "ns1/a", 1}, b{"b", "ns1", "proj", "ns1/b", 2}, c{"c", "ns2", "proj", "ns2/c", 3};
  CHECK(book.allocate("p", a).what == allocation::granted);
  CHECK(book.allocate("p", a).what == allocation::granted); // already held
  CHECK(book.usage("p").in_use == 1);
  CHECK(book.allocate("p", b).what == allocation::granted);
  auto full = book.allocate("p", c);
  CHECK(full.what == allocation::exhausted);
  CHECK(full.message.find("has all 2 tokens in use") != std::string::npos);
  CHECK(book.usage("p").waiting == 1);
  CHECK(book.allocate("p", c).what == allocation::exhausted); // asking again does not queue twice
  CHECK(book.usage("p").waiting == 1);
  auto granted = book.release("p", "a");
  REQUIRE(granted.size() == 1);
  CHECK(granted[0].token == "c");
  CHECK(book.usage("p").in_use == 2);
  CHECK(book.release("p", "nope").empty());
}

TEST_CASE("resource manager: waiting tasks are served first come, first served") {
  pool_book book;
  book.set_pool("p", {1, std::nullopt, std::nullopt});
  book.allocate("p", {"holder", "n", "n", "n/holder", 0});
  book.allocate("p", {"late", "n", "n", "n/late", 30});
  book.allocate("p", {"early", "n", "n", "n/early", 10}); // asked first, before a restart
  auto g = book.release("p", "holder");
  REQUIRE(g.size() == 1);
  CHECK(g[0].token == "early");
}

TEST_CASE("resource manager: namespace and project limits, without holding up others") {
  pool_book book;
  book.set_pool("p", {10, 1, std::nullopt});
  CHECK(book.allocate("p", {"a", "ns1", "x", "ns1/a", 1}).what == allocation::granted);
  auto blocked = book.allocate("p", {"b", "ns1", "x", "ns1/b", 2});
  CHECK(blocked.what == allocation::exhausted);
  CHECK(blocked.message.find("1 token(s) per namespace and namespace \"ns1\"") != std::string::npos);
  CHECK(book.allocate("p", {"c", "ns2", "x", "ns2/c", 3}).what == allocation::granted); // not behind b
  book.set_pool("q", {10, std::nullopt, 2});
  CHECK(book.allocate("q", {"d", "n1", "vision", "n1/d", 1}).what == allocation::granted);
  CHECK(book.allocate("q", {"e", "n2", "vision", "n2/e", 2}).what == allocation::granted);
  auto proj = book.allocate("q", {"f", "n3", "vision", "n3/f", 3});
  CHECK(proj.what == allocation::exhausted);
  CHECK(proj.message.find("per project and project \"vision\"") != std::string::npos);
  CHECK(book.allocate("q", {"g", "n3", "nlp", "n3/g", 4}).what == allocation::granted);
}

TEST_CASE("resource manager: a missing pool waits until it appears; a lowered quota revokes nothing") {
  pool_book book;
  auto none = book.allocate("later", {"a", "n", "n", "n/a", 1});
  CHECK(none.what == allocation::no_pool);
  CHECK(none.message.find("does not exist") != std::string::npos);
  auto granted = book.set_pool("later", {1, std::nullopt, std::nullopt});
  REQUIRE(granted.size() == 1);
  CHECK(granted[0].token == "a");
  book.restore("later", {"b", "n", "n", "n/b", 0}); // held before a restart
  CHECK(book.usage("later").in_use == 2);
  book.set_pool("later", {1, std::nullopt, std::nullopt});
  CHECK(book.usage("later").in_use == 2);
  CHECK(book.allocate("later", {"c", "n", "n", "n/c", 2}).what == allocation::exhausted);
  book.release("later", "a");
  CHECK(book.usage("later").in_use == 1);
  CHECK(book.usage("later").waiting == 1); // still at quota: c waits
  auto g = book.release("later", "b");
  REQUIRE(g.size() == 1);
  CHECK(g[0].token == "c");
  CHECK(book.holders("later") == std::vector<std::string>{"n/c"});
}

TEST_CASE("platform configuration: defaults, the peer's keys, and errors naming the key") {
  auto defaults = parse_platform_config(json::value()).value();
  CHECK(defaults.gpu_resource_name == "nvidia.com/gpu");
  CHECK(defaults.image_pull_backoff_grace_period == std::chrono::minutes(3));
  CHECK(defaults.create_container_config_error_grace_period == std::chrono::minutes(3));
  CHECK(defaults.pod_pending_timeout.count() == 0);
  CHECK(defaults.max_system_failures == 3);
  CHECK(defaults.default_annotations.at("cluster-autoscaler.kubernetes.io/safe-to-evict") == "false");

  auto cfg = parse_platform_config(parse_json(R"({"default-cpus":"500m","default-memory":"2Gi",
    "gpu-resource-name":"amd.com/gpu","image-pull-backoff-grace-period":"30s","pod-pending-timeout":"10m",
    "interruptible-tolerations":[{"key":"spot","operator":"Exists","effect":"NoSchedule"}],
    "interruptible-node-selector-requirement":{"key":"spot","operator":"In","values":["true"]},
    "resource-limits":{"cpu":"8","gpu":4},"max-system-failures":5,"interruptible-failure-threshold":2,
    "default-labels":{"a":"b"},"scheduler-name":"kozmo"})"));
  REQUIRE(cfg.has_value());
  CHECK(cfg->default_cpus == k8s::quantity::parse("500m").value());
  CHECK(cfg->gpu_resource_name == "amd.com/gpu");
  CHECK(cfg->image_pull_backoff_grace_period == std::chrono::seconds(30));
  CHECK(cfg->pod_pending_timeout == std::chrono::minutes(10));
  CHECK(cfg->resource_limits.at("gpu") == k8s::quantity::from_int(4));
  CHECK(cfg->max_system_failures == 5);
  CHECK(cfg->scheduler_name == "kozmo");

  auto unknown = parse_platform_config(parse_json(R"({"default-cpu":"1"})"));
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.err().message.rfind("tasks.default-cpu: unknown setting (known: default-cpus, ", 0) == 0);
  auto bad_duration = parse_platform_config(parse_json(R"({"pod-pending-timeout":"soon"})"));
  REQUIRE_FALSE(bad_duration.has_value());
  CHECK(bad_duration.err().message.rfind("tasks.pod-pending-timeout: \"soon\" is not a duration", 0) == 0);
  auto bad_op = parse_platform_config(parse_json(R"({"non-interruptible-node-selector-requirement":{"key":"k","operator":"Is"}})"));
  REQUIRE_FALSE(bad_op.has_value());
  CHECK(bad_op.err().message.find("operator: Unsupported value: \"Is\"") != std::string::npos);
}

TEST_CASE("spec validation names the field, as kube-apiserver does") {
  auto err = [](const std::string& spec) {
    auto task = make_task("t", spec);
    auto d = decode_task(task, {"container", "pod"});
    REQUIRE_FALSE(d.has_value());
    return d.err().message;
  };
  CHECK(err(R"({"type":"container"})") ==
        "spec.container: Required value: type container needs spec.container with at least an image");
  CHECK(err(container_spec(R"("retries": -1)")) == "spec.retries: Invalid value: -1: must be between 0 and 1000");
  CHECK(err(container_spec(R"("timeout": "forever")")).rfind("spec.timeout: Invalid value: \"forever\":", 0) == 0);
  CHECK(err(R"({"type":"pod","pod":{"primaryContainerName":"x","spec":{"containers":[{"name":"y","image":"i"}]}}})") ==
        "spec.pod.primaryContainerName: Invalid value: \"x\": no container of spec.pod.spec.containers has this name");
  CHECK(err(container_spec(R"("gpuAccelerator": {"partitionSize":"1g.5gb"})")).rfind(
            "spec.gpuAccelerator.device: Required value", 0) == 0);
  CHECK(err(R"({"type":"container","container":{"image":"x","resources":{"limits":{"cpu":"lots"}}}})")
            .rfind("spec.container.resources.limits[cpu]: Invalid value: \"lots\":", 0) == 0);
  CHECK(err(container_spec(R"("environment": {"N": 3})")) ==
        "spec.environment[N]: Invalid value: 3: must be a string (quote numbers and booleans)");

  auto ok = decode_task(make_task("t", container_spec(R"("retries": 2, "timeout": "1h30m", "interruptible": true,
      "resourcePool": "p", "inputs": {"a": "file:///x"}, "outputPrefix": "file:///o")")),
                        {"container", "pod"});
  REQUIRE(ok.has_value());
  CHECK(ok->max_attempts() == 3);
  CHECK(ok->timeout == std::chrono::minutes(90));
  CHECK(ok->primary_container == "primary");
  CHECK(ok->inputs.at("a") == "file:///x");
}

TEST_CASE("a task's project is its kozmo.io/project label, else its namespace") {
  k8s::object_meta m;
  m.namespace_ = "ml";
  CHECK(project_of(m) == "ml");
  m.labels["kozmo.io/project"] = "vision";
  CHECK(project_of(m) == "vision");
}

TEST_CASE("status round-trips through JSON") {
  task_status s;
  s.phase = task_phase::running;
  s.phase_version = 2;
  s.attempt = 1;
  s.system_failures = 1;
  s.reason = "x";
  s.message = "y";
  s.start_time = t0();
  s.pool = "p";
  s.pool_held = true;
  s.attempts.push_back({1, "t-1", "Running", "", "", true, t0(), std::nullopt});
  s.history.push_back({task_phase::running, 2, 1, "x", t0()});
  auto back = status_from_json(status_to_json(s));
  CHECK(status_to_json(back) == status_to_json(s));
  CHECK(back.attempts[0].interruptible);
  CHECK(back.pool_held);
}
