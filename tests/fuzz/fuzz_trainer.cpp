// What a user's TrainJob and training runtime become (actors/trainer): the input is a TrainJob and
// a runtime as JSON, separated by a line "---" (either may be broken, either may be missing: the
// other side is then a fixed, valid one). Whatever decodes is realised as pods and passed through
// the reconcile step twice (once new, once with its pods Running); every pod built must be valid
// JSON and no number may size more pods than the bounds allow.
#include "actors/trainer/trainjob_reconcile.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/codec.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kozmo;

namespace {

const char* fixed_job = R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","metadata":{"name":"j",
"namespace":"ns","uid":"u","creationTimestamp":"2027-01-01T00:00:00Z"},"spec":{"runtimeRef":{"name":"rt"},
"initializer":{"dataset":{"storageUri":"s3://b/d/"}},"trainer":{"numNodes":2,"resourcesPerNode":{"limits":{"nvidia.com/gpu":2}}}}})";

const char* fixed_runtime = R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"ClusterTrainingRuntime",
"metadata":{"name":"rt"},"spec":{"mlPolicy":{"numNodes":1,"mpi":{"runLauncherAsNode":true}},"template":{"spec":{
"replicatedJobs":[{"name":"dataset-initializer","template":{"metadata":{"labels":{"trainer.kubeflow.org/trainjob-ancestor-step":"dataset-initializer"}},
"spec":{"template":{"spec":{"containers":[{"name":"dataset-initializer"}]}}}}},{"name":"launcher","dependsOn":[{"name":"dataset-initializer"}],
"template":{"metadata":{"labels":{"trainer.kubeflow.org/trainjob-ancestor-step":"trainer"}},"spec":{"template":{"spec":{"containers":[{"name":"node"}]}}}}},
{"name":"node","template":{"spec":{"template":{"spec":{"containers":[{"name":"node"}]}}}}}]}}}})";

std::optional<k8s::custom_object> object_of(std::string_view text) {
  auto doc = json::parse(text);
  if (!doc || !doc->is_object())
    return std::nullopt;
  auto o = k8s::from_json<k8s::custom_object>(*doc);
  if (!o)
    return std::nullopt;
  o->document = std::move(*doc);
  return std::move(*o);
}

void run(const k8s::custom_object& job, const k8s::custom_object& runtime) {
  trainer::options opt;
  opt.native_initializers = true;
  trainer::observed w;
  w.job = job;
  w.runtime = runtime;
  w.now = k8s::time_point{std::chrono::seconds{1'900'000'000}};
  w.ssh_keys = trainer::ssh_key_pair{"priv", "pub"};
  auto first = trainer::reconcile(w, opt);
  std::size_t pods = 0;
  for (const auto& s : first.plan.steps)
    if (const auto* c = std::get_if<controller::create_step>(&s)) {
      fuzz::require(json::parse(json::dump(c->object)).has_value(), "a created object is valid JSON");
      if (c->where.resource == "pods") {
        ++pods;
        if (auto p = k8s::from_json<k8s::pod>(c->object)) {
          p->status.phase = "Running";
          w.pods.push_back(std::move(*p));
        }
      }
    }
  fuzz::require(pods <= static_cast<std::size_t>(opt.max_creates_per_pass), "a pass creates at most its burst");
  (void)trainer::reconcile(w, opt);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto job_fixed = object_of(fixed_job);
  static const auto runtime_fixed = object_of(fixed_runtime);
  auto [first, second] = fuzz::split_once(fuzz::as_text(data, size), "\n---\n");
  auto job = object_of(first);
  auto runtime = object_of(second);
  if (job && job->document.get_string("kind") != "TrainJob") { // a runtime alone
    runtime = job;
    job.reset();
  }
  (void)trainer::managed_by_of(job ? job->document : job_fixed->document);
  if (job)
    (void)trainer::decode_train_job(*job);
  if (runtime)
    (void)trainer::decode_runtime(runtime->document);
  run(job ? *job : *job_fixed, runtime ? *runtime : *runtime_fixed);
  return 0;
}
