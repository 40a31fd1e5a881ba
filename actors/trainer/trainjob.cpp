#include "actors/trainer/trainjob.hpp"

#include "k8s/model/codec.hpp"

#include <algorithm>
#include <cctype>

namespace kozmo::trainer {
namespace {

std::string where(std::string_view path) { return std::string(path); }

// A whole number in [lo, hi] at `v`, or an error naming `path`.
expected<int> bounded_int(const json::value& v, std::string_view path, std::int64_t lo, std::int64_t hi) {
  if (!v.is_int())
    return error::invalid(where(path) + " must be a whole number from " + std::to_string(lo) +
                                               " to " + std::to_string(hi));
  auto n = v.as_int();
  if (n < lo || n > hi)
    return error::invalid(where(path) + " is " + std::to_string(n) + ": use " + std::to_string(lo) +
                                               " to " + std::to_string(hi));
  return static_cast<int>(n);
}

// numProcPerNode: a number 1..1024, or "auto", "cpu", "gpu" (a number may come as a string).
expected<std::string> proc_per_node(const json::value& v, std::string_view path) {
  std::string text = json::scalar_text(v);
  if (text == "auto" || text == "cpu" || text == "gpu")
    return text;
  bool digits = !text.empty() && text.size() <= 6 &&
                std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (digits) {
    int n = std::stoi(text);
    if (n >= 1 && n <= max_proc_per_node)
      return std::to_string(n);
  }
  return error::invalid(where(path) + " is \"" + text.substr(0, 40) + "\": use auto, cpu, gpu or 1 to " +
                                             std::to_string(max_proc_per_node));
}

expected<initializer> decode_initializer(const json::value& v, std::string_view path) {
  initializer out;
  if (!v.is_object())
    return error::invalid(where(path) + " must be an object");
  out.storage_uri = v.get_string("storageUri");
  if (const auto* env = v.find("env"); env && !env->is_null()) {
    if (!env->is_array())
      return error::invalid(where(path) + ".env must be a list of {name, value}");
    out.env = *env;
  }
  if (const auto* s = v.find("secretRef"); s && s->is_object())
    out.secret_ref = s->get_string("name");
  return out;
}

expected<trainer_override> decode_trainer(const json::value& v) {
  trainer_override t;
  if (!v.is_object())
    return error::invalid("spec.trainer must be an object");
  t.image = v.get_string("image");
  for (const char* key : {"command", "args"}) {
    const auto* list = v.find(key);
    if (list == nullptr || list->is_null())
      continue;
    if (!list->is_array())
      return error::invalid(std::string("spec.trainer.") + key + " must be a list of strings");
    (std::string_view(key) == "command" ? t.command : t.args) = *list;
  }
  if (const auto* env = v.find("env"); env && !env->is_null()) {
    if (!env->is_array())
      return error::invalid("spec.trainer.env must be a list of {name, value}");
    t.env = *env;
  }
  if (const auto* n = v.find("numNodes"); n && !n->is_null()) {
    auto nodes = bounded_int(*n, "spec.trainer.numNodes", 1, max_nodes);
    if (!nodes)
      return nodes.err();
    t.num_nodes = *nodes;
  }
  if (const auto* r = v.find("resourcesPerNode"); r && r->is_object())
    t.resources_per_node = *r;
  if (const auto* p = v.find("numProcPerNode"); p && !p->is_null()) {
    auto procs = proc_per_node(*p, "spec.trainer.numProcPerNode");
    if (!procs)
      return procs.err();
    t.num_proc_per_node = *procs;
  }
  return t;
}

} // namespace

std::string_view to_string(framework f) {
  switch (f) {
  case framework::torch: return "torch";
  case framework::mpi: return "mpi";
  case framework::jax: return "jax";
  case framework::xgboost: return "xgboost";
  case framework::none: break;
  }
  return "none";
}

std::optional<std::string> name_problem(std::string_view name) {
  if (name.empty() || name.size() > 63)
    return "a TrainJob's name must be 1 to 63 characters (an RFC 1035 label), \"" + std::string(name.substr(0, 80)) +
           "\" has " + std::to_string(name.size());
  bool ok = std::isalpha(static_cast<unsigned char>(name.front())) && std::islower(static_cast<unsigned char>(name.front())) &&
            name.back() != '-';
  for (char c : name)
    ok = ok && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-');
  if (!ok)
    return "a TrainJob's name must be an RFC 1035 label (lower-case letters, digits and '-', starting with a letter, "
           "ending with a letter or digit): \"" +
           std::string(name) + "\"";
  return std::nullopt;
}

std::string managed_by_of(const json::value& document) {
  const auto* spec = document.find("spec");
  return spec ? spec->get_string("managedBy") : std::string();
}

bool managed_here(const std::string& managed_by) { return managed_by.empty() || managed_by == managed_by_trainer; }

expected<train_job> decode_train_job(const k8s::custom_object& object) {
  train_job job;
  job.metadata = object.metadata;
  if (auto problem = name_problem(object.metadata.name))
    return error::invalid(*problem);
  const auto* spec = object.document.find("spec");
  if (spec == nullptr || !spec->is_object())
    return error::invalid("spec is missing");
  const auto* ref = spec->find("runtimeRef");
  if (ref == nullptr || !ref->is_object() || ref->get_string("name").empty())
    return error::invalid("spec.runtimeRef.name is missing: name a ClusterTrainingRuntime such as "
                                           "torch-distributed");
  job.runtime.name = ref->get_string("name");
  job.runtime.api_group = ref->get_string("apiGroup", group);
  job.runtime.kind = ref->get_string("kind", kind_cluster_runtime);
  if (const auto* init = spec->find("initializer"); init && init->is_object()) {
    for (auto [key, slot] : {std::pair{"dataset", &job.dataset}, std::pair{"model", &job.model}}) {
      const auto* v = init->find(key);
      if (v == nullptr || v->is_null())
        continue;
      auto decoded = decode_initializer(*v, std::string("spec.initializer.") + key);
      if (!decoded)
        return decoded.err();
      *slot = std::move(*decoded);
    }
  }
  if (const auto* t = spec->find("trainer"); t && !t->is_null()) {
    auto decoded = decode_trainer(*t);
    if (!decoded)
      return decoded.err();
    job.trainer = std::move(*decoded);
  }
  if (const auto* patches = spec->find("runtimePatches"); patches && patches->is_array()) {
    int i = 0;
    for (const auto& p : patches->as_array()) {
      std::string path = "spec.runtimePatches[" + std::to_string(i++) + "]";
      if (!p.is_object() || p.get_string("manager").empty())
        return error::invalid(path + ".manager is missing: say who owns the patch");
      runtime_patch rp{p.get_string("manager"), json::value()};
      if (const auto* t = p.at_path({"trainingRuntimeSpec", "template"}); t && t->is_object())
        rp.template_patch = *t;
      job.patches.push_back(std::move(rp));
    }
  }
  job.suspend = spec->get_bool("suspend");
  if (const auto* d = spec->find("activeDeadlineSeconds"); d && !d->is_null()) {
    auto secs = bounded_int(*d, "spec.activeDeadlineSeconds", 1, 10LL * 365 * 86400);
    if (!secs)
      return secs.err();
    job.active_deadline_seconds = *secs;
  }
  return job;
}

namespace {

expected<ml_policy> decode_ml(const json::value* v) {
  ml_policy ml;
  if (v == nullptr || !v->is_object())
    return ml;
  if (const auto* n = v->find("numNodes"); n && !n->is_null()) {
    auto nodes = bounded_int(*n, "spec.mlPolicy.numNodes", 1, max_nodes);
    if (!nodes)
      return nodes.err();
    ml.num_nodes = *nodes;
  }
  int policies = 0;
  auto policy = [&](const char* key) { return v->find(key) && !v->find(key)->is_null() ? (++policies, v->find(key)) : nullptr; };
  if (const auto* torch = policy("torch")) {
    ml.kind = framework::torch;
    ml.num_proc_per_node = "auto";
    if (const auto* p = torch->find("numProcPerNode"); p && !p->is_null()) {
      auto procs = proc_per_node(*p, "spec.mlPolicy.torch.numProcPerNode");
      if (!procs)
        return procs.err();
      ml.num_proc_per_node = *procs;
    }
  }
  if (const auto* mpi = policy("mpi")) {
    ml.kind = framework::mpi;
    ml.num_proc_per_node = "1";
    if (const auto* p = mpi->find("numProcPerNode"); p && !p->is_null()) {
      auto procs = bounded_int(*p, "spec.mlPolicy.mpi.numProcPerNode", 1, max_proc_per_node);
      if (!procs)
        return procs.err();
      ml.num_proc_per_node = std::to_string(*procs);
    }
    ml.mpi_implementation = mpi->get_string("mpiImplementation", "OpenMPI");
    ml.ssh_auth_mount_path = mpi->get_string("sshAuthMountPath", "/root/.ssh");
    ml.run_launcher_as_node = mpi->get_bool("runLauncherAsNode");
  }
  if (policy("jax"))
    ml.kind = framework::jax;
  if (policy("xgboost"))
    ml.kind = framework::xgboost;
  if (policies > 1)
    return error::invalid("spec.mlPolicy names more than one framework: keep one of torch, mpi, jax, "
                                           "xgboost");
  return ml;
}

expected<replicated_job> decode_replicated_job(const json::value& v, std::size_t i) {
  std::string path = "spec.template.spec.replicatedJobs[" + std::to_string(i) + "]";
  if (!v.is_object() || v.get_string("name").empty())
    return error::invalid(path + ".name is missing");
  replicated_job rj;
  rj.name = v.get_string("name");
  if (const auto* r = v.find("replicas"); r && !r->is_null()) {
    auto n = bounded_int(*r, path + ".replicas", 0, max_replicas);
    if (!n)
      return n.err();
    rj.replicas = *n;
  }
  if (const auto* deps = v.find("dependsOn"); deps && deps->is_array()) {
    for (const auto& d : deps->as_array()) {
      std::string status = d.get_string("status", "Complete");
      if (status != "Complete" && status != "Ready")
        return error::invalid(path + ".dependsOn status is \"" + status + "\": use Complete or Ready");
      rj.after.push_back({d.get_string("name"), status});
    }
  }
  rj.job_template = v.find("template") && v.find("template")->is_object() ? *v.find("template") : json::object{};
  for (const char* key : {"parallelism", "completions", "backoffLimit"}) {
    if (const auto* n = rj.job_template.at_path({"spec", key}); n && !n->is_null()) {
      auto ok = bounded_int(*n, path + ".template.spec." + key, 0, max_replicas);
      if (!ok)
        return ok.err();
    }
  }
  return rj;
}

} // namespace

expected<runtime_spec> decode_runtime(const json::value& document) {
  runtime_spec rt;
  rt.kind = document.get_string("kind");
  if (const auto* meta = document.find("metadata")) {
    rt.name = meta->get_string("name");
    if (const auto* labels = meta->find("labels"))
      rt.framework_label = labels->get_string(label::framework);
  }
  const auto* spec = document.find("spec");
  if (spec == nullptr || !spec->is_object())
    return error::invalid("the runtime has no spec");
  auto ml = decode_ml(spec->find("mlPolicy"));
  if (!ml)
    return ml.err();
  rt.ml = std::move(*ml);
  if (const auto* co = spec->at_path({"podGroupPolicy", "coscheduling"}); co && co->is_object()) {
    rt.coscheduling = true;
    if (const auto* t = co->find("scheduleTimeoutSeconds"); t && t->is_int())
      rt.schedule_timeout_seconds = static_cast<int>(std::clamp<std::int64_t>(t->as_int(), 0, 86400 * 365));
  }
  const auto* tmpl = spec->find("template");
  if (tmpl == nullptr || !tmpl->is_object())
    return error::invalid("spec.template is missing: a runtime is a JobSet template");
  if (const auto* m = tmpl->find("metadata"); m && m->is_object())
    rt.template_metadata = *m;
  const auto* jobs = tmpl->at_path({"spec", "replicatedJobs"});
  if (jobs == nullptr || !jobs->is_array() || jobs->as_array().empty())
    return error::invalid("spec.template.spec.replicatedJobs is empty");
  if (jobs->as_array().size() > 32)
    return error::invalid("spec.template.spec.replicatedJobs has more than 32 entries");
  for (std::size_t i = 0; i < jobs->as_array().size(); ++i) {
    auto rj = decode_replicated_job(jobs->as_array()[i], i);
    if (!rj)
      return rj.err();
    for (const auto& d : rj->after) {
      bool earlier = std::any_of(rt.jobs.begin(), rt.jobs.end(), [&](const auto& j) { return j.name == d.name; });
      if (!earlier)
        return error::invalid("replicated job " + rj->name + " depends on \"" + d.name +
                                                   "\", which is not a replicated job before it");
    }
    rt.jobs.push_back(std::move(*rj));
  }
  const auto* jspec = tmpl->find("spec");
  if (const auto* v = jspec->find("volumeClaimPolicies"); v && !v->is_null())
    rt.volume_claim_policies = *v;
  if (const auto* s = jspec->find("successPolicy"); s && s->is_object())
    rt.success_policy = *s;
  if (const auto* m = jspec->at_path({"failurePolicy", "maxRestarts"}); m && !m->is_null()) {
    auto n = bounded_int(*m, "spec.template.spec.failurePolicy.maxRestarts", 0, 1000);
    if (!n)
      return n.err();
    rt.max_restarts = *n;
  }
  return rt;
}

json::value owner_reference(const std::string& name, const std::string& uid) {
  return json::object{{"apiVersion", std::string(api_version)}, {"kind", std::string(kind_trainjob)},
                      {"name", name},         {"uid", uid},
                      {"controller", true},   {"blockOwnerDeletion", true}};
}

json::value snapshot_document(const json::value& runtime_document) {
  json::value out = json::object{};
  out["apiVersion"] = std::string(api_version);
  out["kind"] = runtime_document.get_string("kind");
  json::value meta = json::object{};
  if (const auto* m = runtime_document.find("metadata")) {
    meta["name"] = m->get_string("name");
    if (const auto* labels = m->find("labels"); labels && labels->is_object())
      meta["labels"] = *labels;
    if (!m->get_string("resourceVersion").empty())
      meta["resourceVersion"] = m->get_string("resourceVersion");
  }
  out["metadata"] = std::move(meta);
  if (const auto* spec = runtime_document.find("spec"))
    out["spec"] = *spec;
  return out;
}

} // namespace kozmo::trainer
