#include "actors/trainer/jobset.hpp"

#include "actors/scheduler/pod_scheduling_spec.hpp"
#include "actors/trainer/initializers.hpp"
#include "actors/trainer/mpi.hpp"
#include "actors/training/job_model.hpp"
#include "actors/training/pod_builder.hpp"
#include "k8s/json/patch.hpp"
#include "k8s/model/pod_json.hpp"

#include <algorithm>

namespace kozmo::trainer {
namespace {

json::value& object_at(json::value& parent, std::string_view key) {
  json::value& v = parent[key];
  if (!v.is_object())
    v = json::object{};
  return v;
}

void add_absent(json::value& map, const json::value* from) {
  if (from == nullptr || !from->is_object())
    return;
  for (const auto& [k, v] : from->as_object())
    if (!map.find(k))
      map[k] = v;
}

std::string ancestor_of(const replicated_job& rj) {
  const auto* labels = rj.job_template.at_path({"metadata", "labels"});
  return labels ? labels->get_string(label::ancestor) : std::string();
}

bool is_trainer_step(const runtime_spec& rt, const replicated_job& rj) {
  bool any_labelled = std::any_of(rt.jobs.begin(), rt.jobs.end(),
                                  [](const auto& j) { return ancestor_of(j) == step::trainer; });
  return any_labelled ? ancestor_of(rj) == step::trainer : rj.name == step::node;
}

// Rule 3: the patches' entries for replicated job `name`, laid over its Job template in order.
expected<json::value> patched_job_template(const train_job& job, const replicated_job& rj) {
  json::value tmpl = rj.job_template;
  for (const auto& p : job.patches) {
    const auto* list = p.template_patch.at_path({"spec", "replicatedJobs"});
    if (list == nullptr || !list->is_array())
      continue;
    for (const auto& entry : list->as_array()) {
      if (entry.get_string("name") != rj.name)
        continue;
      const auto* jt = entry.find("template");
      if (jt == nullptr || !jt->is_object())
        continue;
      if (const auto* m = jt->find("metadata"); m && m->is_object()) {
        json::value& meta = object_at(tmpl, "metadata");
        for (const char* key : {"labels", "annotations"})
          if (const auto* add = m->find(key); add && add->is_object())
            for (const auto& [k, v] : add->as_object())
              object_at(meta, key)[k] = v;
      }
      const auto* pod_patch = jt->at_path({"spec", "template"});
      if (pod_patch == nullptr || !pod_patch->is_object())
        continue;
      json::value& pod_tmpl = object_at(object_at(tmpl, "spec"), "template");
      // A PodTemplate's strategic merge rules (containers, env, volumes by name...).
      auto merged = json::apply_strategic_patch(json::object{{"template", pod_tmpl}},
                                                json::object{{"template", *pod_patch}}, "PodTemplate");
      if (!merged)
        return error::invalid("spec.runtimePatches (manager " + p.manager + ") for " + rj.name + ": " +
                              merged.err().message);
      pod_tmpl = std::move((*merged)["template"]);
    }
  }
  return tmpl;
}

expected<bool> check_patch_names(const train_job& job, const runtime_spec& rt) {
  for (const auto& p : job.patches) {
    const auto* list = p.template_patch.at_path({"spec", "replicatedJobs"});
    if (list == nullptr || !list->is_array())
      continue;
    for (const auto& entry : list->as_array()) {
      auto name = entry.get_string("name");
      if (std::none_of(rt.jobs.begin(), rt.jobs.end(), [&](const auto& j) { return j.name == name; }))
        return error::invalid("spec.runtimePatches (manager " + p.manager + ") names replicated job \"" + name +
                              "\", which runtime " + rt.name + " does not have");
    }
  }
  return true;
}

// The container named `name`, else the first; only objects count (a template may hold anything).
json::value* main_container(json::value& pod_spec, std::string_view name) {
  json::value& list = pod_spec["containers"];
  if (!list.is_array())
    return nullptr;
  json::value* first = nullptr;
  for (auto& c : list.as_array()) {
    if (!c.is_object())
      continue;
    if (c.get_string("name") == name)
      return &c;
    first = first ? first : &c;
  }
  return first;
}

void merge_env(json::value& container, const json::value& env) {
  if (!env.is_array())
    return;
  json::value& list = container["env"];
  if (!list.is_array())
    list = json::array{};
  for (const auto& e : env.as_array()) {
    auto name = e.get_string("name");
    auto& items = list.as_array();
    auto it = std::find_if(items.begin(), items.end(), [&](const auto& x) { return x.get_string("name") == name; });
    if (it != items.end())
      *it = e;
    else
      items.push_back(e);
  }
}

// Rule 6: a name the ML policy sets may not be set by the user.
std::optional<std::string> reserved_in(const json::value& env, framework f, const std::string& where) {
  if (!env.is_array())
    return std::nullopt;
  for (const auto& name : reserved_env(f))
    for (const auto& e : env.as_array())
      if (e.get_string("name") == name)
        return where + " sets " + std::string(name) + ", which the " + std::string(to_string(f)) +
               " runtime sets itself: remove it";
  return std::nullopt;
}

void apply_trainer(json::value& container, const trainer_override& t) {
  if (!t.image.empty())
    container["image"] = t.image;
  if (t.command)
    container["command"] = *t.command;
  if (t.args)
    container["args"] = *t.args;
  merge_env(container, t.env);
  if (!t.resources_per_node.is_null())
    container["resources"] = t.resources_per_node;
}

void apply_initializer(json::value& pod_spec, std::string_view name, const initializer& init) {
  json::value* c = main_container(pod_spec, name);
  if (c == nullptr)
    return;
  if (!init.storage_uri.empty())
    merge_env(*c, json::array{json::object{{"name", "STORAGE_URI"}, {"value", init.storage_uri}}});
  merge_env(*c, init.env);
  if (!init.secret_ref.empty()) {
    json::value& from = (*c)["envFrom"];
    if (!from.is_array())
      from = json::array{};
    from.as_array().push_back(json::object{{"secretRef", json::object{{"name", init.secret_ref}}}});
  }
}

std::string cpu_of(const json::value& container) {
  for (const char* key : {"limits", "requests"})
    if (const auto* q = container.at_path({"resources", key, "cpu"}))
      if (auto text = json::scalar_text(*q); !text.empty())
        return text;
  return {};
}

int count_of(const json::value& job_template, int fallback) {
  for (const char* key : {"completions", "parallelism"})
    if (const auto* n = job_template.at_path({"spec", key}); n && n->is_int())
      return static_cast<int>(n->as_int());
  return fallback;
}

std::string annotation(const train_job& job, std::string_view key) {
  auto it = job.metadata.annotations.find(std::string(key));
  return it == job.metadata.annotations.end() ? std::string() : it->second;
}

} // namespace

int num_nodes(const train_job& job, const runtime_spec& runtime) {
  if (job.trainer && job.trainer->num_nodes)
    return *job.trainer->num_nodes;
  return runtime.ml.num_nodes.value_or(1);
}

expected<jobset> realise(const train_job& job, const runtime_spec& rt, const options& opt) {
  jobset out;
  out.success_policy = rt.success_policy;
  out.max_restarts = rt.max_restarts;
  if (auto names = check_patch_names(job, rt); !names)
    return names.err();
  if (job.trainer)
    if (auto r = reserved_in(job.trainer->env, rt.ml.kind, "spec.trainer.env"))
      return error::invalid(*r);
  if (auto inits = check_initializers(job, rt); !inits)
    return inits.err();
  auto claims = plan_claims(job, rt);
  if (!claims)
    return claims.err();
  out.claims = claims->claims;
  const int nodes = num_nodes(job, rt);
  const auto& name = job.metadata.name;
  std::size_t total = 0;
  std::vector<json::value> templates;
  for (const auto& rj : rt.jobs) {
    auto tmpl = patched_job_template(job, rj);
    if (!tmpl)
      return tmpl.err();
    rjob_plan plan;
    plan.name = rj.name;
    plan.replicas = rj.replicas;
    plan.after = rj.after;
    plan.trainer_step = is_trainer_step(rt, rj);
    auto ancestor = ancestor_of(rj);
    plan.initializer = ancestor == step::dataset || ancestor == step::model;
    const bool mpi = rt.ml.kind == framework::mpi;
    if (mpi && rj.name == step::node)
      plan.completions = mpi_node_pods(job, rt);
    else if (mpi && rj.name == step::launcher)
      plan.completions = 1;
    else
      plan.completions = plan.trainer_step ? nodes : count_of(*tmpl, 1);
    // mpi.hpp: the launcher starts once the nodes' sshd are ready.
    bool has_node = std::any_of(rt.jobs.begin(), rt.jobs.end(), [](const auto& j) { return j.name == step::node; });
    if (mpi && rj.name == step::launcher && has_node && plan.after.empty())
      plan.after.push_back({std::string(step::node), "Ready"});
    if (const auto* b = tmpl->at_path({"spec", "backoffLimit"}); b && b->is_int())
      plan.backoff_limit = static_cast<int>(b->as_int());
    total += static_cast<std::size_t>(plan.replicas) * static_cast<std::size_t>(plan.completions);
    if (total > static_cast<std::size_t>(max_pods))
      return error::invalid("the TrainJob would run more than " + std::to_string(max_pods) + " pods: lower numNodes");
    auto host = name + "-" + rj.name + "-" + std::to_string(std::max(0, plan.replicas - 1)) + "-" +
                std::to_string(std::max(0, plan.completions - 1));
    if (host.size() > 63)
      return error::invalid("pod hostname " + host + " would be longer than 63 characters: shorten the TrainJob's name");
    out.rjobs.push_back(std::move(plan));
    templates.push_back(std::move(*tmpl));
  }

  // Rule 7: who is in the gang.
  scheduler::pod_scheduling_spec want;
  want.virtual_cluster = annotation(job, "kozmo.io/virtual-cluster");
  if (want.virtual_cluster.empty())
    want.virtual_cluster = opt.default_virtual_cluster;
  want.priority = training::priority_of(annotation(job, "kozmo.io/priority"), opt.priority_classes);
  std::vector<scheduler::affinity_member> members;

  for (std::size_t r = 0; r < rt.jobs.size(); ++r) {
    const auto& rj = rt.jobs[r];
    const auto& plan = out.rjobs[r];
    const json::value& jt = templates[r];
    const json::value* pod_tmpl = jt.at_path({"spec", "template"});
    for (int j = 0; j < plan.replicas; ++j) {
      for (int i = 0; i < plan.completions; ++i) {
        job_slot slot{rj.name, j, i, name + "-" + rj.name + "-" + std::to_string(j) + "-" + std::to_string(i), 0, {}};
        json::value pod = json::object{{"apiVersion", "v1"}, {"kind", "Pod"}};
        json::value meta = pod_tmpl && pod_tmpl->find("metadata") && pod_tmpl->find("metadata")->is_object()
                               ? *pod_tmpl->find("metadata")
                               : json::value(json::object{});
        meta.as_object().erase("generateName");
        meta["name"] = slot.name;
        meta["namespace"] = job.metadata.namespace_;
        // Both members exist before either is held: adding a member moves the others (the
        // fuzz target found `labels` dangling once `annotations` was added).
        (void)object_at(meta, "annotations");
        json::value& labels = object_at(meta, "labels");
        labels[label::jobset_name] = name;
        labels[label::replicated_job] = rj.name;
        labels[label::job_index] = std::to_string(j);
        labels[label::replicated_job_replicas] = std::to_string(plan.replicas);
        labels[label::job_name] = name + "-" + rj.name + "-" + std::to_string(j);
        labels[label::completion_index] = std::to_string(i);
        add_absent(labels, jt.at_path({"metadata", "labels"}));
        add_absent(labels, rt.template_metadata.find("labels"));
        json::value& ann = object_at(meta, "annotations");
        ann[label::completion_index] = std::to_string(i);
        add_absent(ann, rt.template_metadata.find("annotations"));
        for (const auto& p : job.patches) {
          add_absent(labels, p.template_patch.at_path({"metadata", "labels"}));
          add_absent(ann, p.template_patch.at_path({"metadata", "annotations"}));
        }
        meta["ownerReferences"] = json::array{owner_reference(job)};

        json::value spec = pod_tmpl && pod_tmpl->find("spec") && pod_tmpl->find("spec")->is_object()
                               ? *pod_tmpl->find("spec")
                               : json::value(json::object{});
        if (spec.get_string("restartPolicy").empty())
          spec["restartPolicy"] = "Never";
        spec["hostname"] = slot.name;
        spec["subdomain"] = name;
        auto ancestor = ancestor_of(rj);
        std::string main_name;
        if (plan.trainer_step) {
          json::value* c = main_container(spec, step::node);
          if (c == nullptr)
            return error::invalid("runtime " + rt.name + ": replicated job " + rj.name + " has no container");
          if (auto r = reserved_in((*c)["env"], rt.ml.kind, "runtime " + rt.name + " (container " + c->get_string("name") + ")"))
            return error::invalid(*r);
          if (job.trainer)
            apply_trainer(*c, *job.trainer);
          json::value as_template = json::object{{"spec", spec}};
          int gpus = training::gpus_of_template(as_template);
          c = main_container(spec, step::node);
          env_context ctx{name, nodes, i, gpus, cpu_of(*c),
                          job.trainer && !job.trainer->num_proc_per_node.empty() ? job.trainer->num_proc_per_node
                                                                                 : rt.ml.num_proc_per_node};
          k8s::add_env_if_absent(*c, ml_env(rt, ctx));
          main_name = c->get_string("name");
          if (int port = framework_port(rt.ml.kind); port > 0) {
            json::value& ports = (*c)["ports"];
            if (!ports.is_array())
              ports = json::array{};
            bool has = std::any_of(ports.as_array().begin(), ports.as_array().end(),
                                   [&](const auto& p) { return p.get_int("containerPort") == port; });
            if (!has)
              ports.as_array().push_back(json::object{{"containerPort", port}, {"protocol", "TCP"}});
          }
        } else if ((ancestor == step::dataset && job.dataset) || (ancestor == step::model && job.model)) {
          const auto step_name = ancestor == step::dataset ? step::dataset : step::model;
          const auto& init = ancestor == step::dataset ? *job.dataset : *job.model;
          apply_initializer(spec, step_name, init);
          main_name = std::string(step_name);
          if (json::value* c = main_container(spec, step_name); c && opt.native_initializers)
            if (auto native = native_initializer(*c, init, step_name); !native)
              return native.err();
        }
        attach_claims(spec, *claims, name, main_name);
        if (rt.ml.kind == framework::mpi && (rj.name == step::launcher || rj.name == step::node)) {
          // The nodes run the training processes mpirun starts over ssh: the trainer's image and
          // resources reach them too (not its command: they run sshd).
          if (json::value* c = main_container(spec, step::node); c && !plan.trainer_step && job.trainer) {
            if (!job.trainer->image.empty())
              (*c)["image"] = job.trainer->image;
            if (!job.trainer->resources_per_node.is_null())
              (*c)["resources"] = job.trainer->resources_per_node;
          }
          mpi_attach(spec, job, rt, rj.name == step::launcher);
        }
        pod["metadata"] = std::move(meta);
        pod["spec"] = std::move(spec);
        slot.gpus = training::gpus_of_template(pod);
        slot.pod = std::move(pod);
        if (slot.gpus > 0 && !plan.initializer) {
          auto it = std::find_if(members.begin(), members.end(),
                                 [&](const auto& m) { return m.leaf_cell_number == slot.gpus; });
          if (it == members.end())
            members.push_back({1, slot.gpus});
          else
            ++it->pod_number;
          out.gang_pods += 1;
          out.gang_gpus += slot.gpus;
        }
        out.pods.push_back(std::move(slot));
      }
    }
  }

  if (rt.ml.kind == framework::mpi) {
    out.mpi = true;
    out.launcher_is_node = rt.ml.run_launcher_as_node;
    int gpus = 0;
    for (const auto& slot : out.pods)
      if (slot.rjob == step::node)
        gpus = std::max(gpus, slot.gpus);
    auto slots = mpi_slots(job, rt, gpus);
    out.hostfile = mpi_hostfile(job, out, slots);
    for (auto& slot : out.pods) { // the launcher was built before the nodes' GPUs were known
      json::value& containers = slot.pod["spec"]["containers"];
      if (!containers.is_array())
        continue;
      for (auto& c : containers.as_array())
        if (auto* env = c.is_object() ? c.find("env") : nullptr; env && env->is_array())
          for (auto& e : env->as_array())
            if (e.is_object() && e.get_string("name") == "OMPI_MCA_orte_set_default_slots")
              e["value"] = slots;
    }
  }
  for (std::size_t p = 0; p < out.pods.size(); ++p) {
    auto& slot = out.pods[p];
    if (slot.gpus == 0)
      continue;
    bool init = std::any_of(out.rjobs.begin(), out.rjobs.end(),
                            [&](const auto& r) { return r.name == slot.rjob && r.initializer; });
    scheduler::pod_scheduling_spec s = want;
    s.leaf_cell_number = slot.gpus;
    if (!init) {
      s.affinity_group = job.metadata.namespace_ + "/" + name;
      s.members = members;
    }
    json::value& ann = object_at(slot.pod["metadata"], "annotations");
    for (const auto& [k, v] : scheduler::scheduling_annotations(s))
      if (!ann.find(k))
        ann[k] = v;
    json::value& spec = slot.pod["spec"];
    if (spec.get_string("schedulerName").empty())
      spec["schedulerName"] = opt.scheduler_name;
  }

  out.service = json::object{
      {"apiVersion", "v1"},
      {"kind", "Service"},
      {"metadata", json::object{{"name", name},
                                {"namespace", job.metadata.namespace_},
                                {"labels", json::object{{std::string(label::jobset_name), name}}},
                                {"ownerReferences", json::array{owner_reference(job)}}}},
      {"spec", json::object{{"clusterIP", "None"},
                            {"publishNotReadyAddresses", true},
                            {"selector", json::object{{std::string(label::jobset_name), name}}}}}};
  return out;
}

} // namespace kozmo::trainer
