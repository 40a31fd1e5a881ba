#include "k8s/apiserver/strategy.hpp"
#include "k8s/apiserver/structural.hpp"
#include "k8s/apiserver/strategy_storage.hpp"
#include "k8s/apiserver/json_util.hpp"

#include "k8s/apiserver/request_util.hpp"
#include "k8s/apiserver/store.hpp"
#include "k8s/model/quantity.hpp"
#include "k8s/model/selector.hpp"

#include <algorithm>
#include <set>

namespace kozmo::apiserver {
namespace {

bool is(const resource_type& rt, std::string_view kind) { return rt.is_builtin(kind); }

// ---- pods --------------------------------------------------------------------------------

void default_container(json::value& c) {
  if (!c.is_object())
    return;
  set_default(c, "terminationMessagePath", "/dev/termination-log");
  set_default(c, "terminationMessagePolicy", "File");
  std::string image = c.get_string("image");
  // kube's defaulting: ":latest" or no tag means always pull.
  auto slash = image.rfind('/');
  auto colon = image.rfind(':');
  bool tagged = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  bool digest = image.find('@') != std::string::npos;
  bool latest = !digest && (!tagged || image.substr(colon + 1) == "latest");
  set_default(c, "imagePullPolicy", latest ? "Always" : "IfNotPresent");
  set_default(c, "resources", json::object{});
  if (auto* ports = c.find("ports"); ports && ports->is_array())
    for (auto& p : ports->as_array())
      set_default(p, "protocol", "TCP");
}

void default_pod_spec(json::value& spec) {
  set_default(spec, "restartPolicy", "Always");
  set_default(spec, "terminationGracePeriodSeconds", 30);
  set_default(spec, "dnsPolicy", "ClusterFirst");
  set_default(spec, "securityContext", json::object{});
  set_default(spec, "schedulerName", "default-scheduler");
  for (auto key : {"containers", "initContainers"})
    if (auto* list = spec.find(key); list && list->is_array())
      for (auto& c : list->as_array())
        default_container(c);
}

void default_pod(json::value& pod) {
  json::value& spec = member_object(pod, "spec");
  default_pod_spec(spec);
  // Admission plugins of a default kube-apiserver: ServiceAccount, Priority,
  // DefaultTolerationSeconds.
  set_default(spec, "serviceAccountName", "default");
  set_default(spec, "serviceAccount", spec.get_string("serviceAccountName", "default"));
  set_default(spec, "priority", 0);
  set_default(spec, "enableServiceLinks", true);
  set_default(spec, "preemptionPolicy", "PreemptLowerPriority");
  json::value& tolerations = spec["tolerations"];
  if (!tolerations.is_array())
    tolerations = json::array{};
  for (auto key : {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    bool present = std::any_of(tolerations.as_array().begin(), tolerations.as_array().end(), [&](const json::value& t) {
      return t.get_string("key") == key || (t.get_string("key").empty() && t.get_string("operator") == "Exists");
    });
    if (!present)
      tolerations.as_array().push_back(json::object{
          {"key", key}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}});
  }
}

std::optional<k8s::quantity> quantity_at(const json::value* list, std::string_view name) {
  if (!list || !list->is_object())
    return std::nullopt;
  const json::value* v = list->find(name);
  if (!v)
    return std::nullopt;
  std::string text = v->is_string() ? v->as_string() : v->is_int() ? std::to_string(v->as_int()) : std::string();
  auto q = k8s::quantity::parse(text);
  return q ? std::optional<k8s::quantity>(*q) : std::nullopt;
}

// A resource name outside kubernetes.io's own (cpu, memory, hugepages-*, ...) with a domain,
// such as nvidia.com/gpu: Kubernetes' extended resources.
bool is_extended_resource(std::string_view name) {
  auto slash = name.find('/');
  if (slash == std::string_view::npos || name.rfind("requests.", 0) == 0)
    return false;
  std::string_view domain = name.substr(0, slash);
  return domain != "kubernetes.io" && (domain.size() < 14 || domain.substr(domain.size() - 14) != ".kubernetes.io");
}

// How a value of the wrong JSON type shows in an Invalid message.
std::string type_name(const json::value& v) {
  switch (v.type()) {
  case json::value::kind::array: return "\"array\"";
  case json::value::kind::object: return "\"object\"";
  case json::value::kind::boolean: return v.as_bool() ? "true" : "false";
  case json::value::kind::null: return "null";
  default: return go_quote(json::dump(v));
  }
}

// ---- names -------------------------------------------------------------------------------

bool is_alnum_lower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool dns_label_ok(std::string_view s) {
  if (s.empty() || !is_alnum_lower(s.front()) || !is_alnum_lower(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_alnum_lower(c) || c == '-'; });
}

const char* const subdomain_msg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const char* const label_msg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const char* const dns1035_msg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, "
    "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
    "'[a-z]([-a-z0-9]*[a-z0-9])?')";

std::vector<std::string> check_subdomain(std::string_view s) {
  std::vector<std::string> out;
  if (s.size() > 253)
    out.push_back("must be no more than 253 characters");
  std::size_t start = 0;
  bool ok = !s.empty();
  while (ok && start <= s.size()) {
    auto dot = s.find('.', start);
    if (!dns_label_ok(s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start)))
      ok = false;
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  if (!ok)
    out.push_back(subdomain_msg);
  return out;
}

std::vector<std::string> check_label(std::string_view s, bool dns1035) {
  std::vector<std::string> out;
  if (s.size() > 63)
    out.push_back("must be no more than 63 characters");
  bool ok = dns_label_ok(s) && (!dns1035 || (s.front() >= 'a' && s.front() <= 'z'));
  if (!ok)
    out.push_back(dns1035 ? dns1035_msg : label_msg);
  return out;
}

std::vector<std::string> check_path_segment(std::string_view s) {
  std::vector<std::string> out;
  if (s == "." || s == "..")
    out.push_back("may not be '" + std::string(s) + "'");
  if (s.find('/') != std::string_view::npos)
    out.push_back("may not contain '/'");
  if (s.find('%') != std::string_view::npos)
    out.push_back("may not contain '%'");
  return out;
}

std::vector<std::string> check_name(const resource_type& rt, std::string_view name) {
  if (!rt.builtin)
    return check_path_segment(name);
  if (rt.kind == "Namespace")
    return check_label(name, false);
  if (rt.kind == "Service")
    return check_label(name, true);
  if (rt.kind == "CustomResourceDefinition" || rt.kind == "Event" || rt.kind == "Lease")
    return check_subdomain(name);
  return check_subdomain(name);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out += (i ? std::string(sep) : std::string()) + parts[i];
  return out;
}

void validate_metadata(const resource_type& rt, const json::value& obj, std::vector<field_error>& errs) {
  const json::value* meta = obj.find("metadata");
  std::string name = meta ? meta->get_string("name") : std::string();
  std::string generate = meta ? meta->get_string("generateName") : std::string();
  if (name.empty() && generate.empty()) {
    errs.push_back(field_error::required("metadata.name", "name or generateName is required"));
  } else if (!name.empty()) {
    if (auto problems = check_name(rt, name); !problems.empty())
      errs.push_back(field_error::invalid("metadata.name", go_quote(name), join(problems, "; ")));
  } else if (auto problems = check_name(rt, generate + "x"); !problems.empty()) {
    errs.push_back(field_error::invalid("metadata.generateName", go_quote(generate), join(problems, "; ")));
  }
  if (!meta)
    return;
  if (const auto* annotations = meta->find("annotations"); annotations && annotations->is_object()) {
    // ObjectMeta's total annotation size (keys and values), as kube-apiserver counts it.
    std::size_t total = 0;
    for (const auto& [k, v] : annotations->as_object())
      total += k.size() + (v.is_string() ? v.as_string().size() : 0);
    if (total > 256 * 1024)
      errs.push_back({"metadata.annotations", "FieldValueTooLong", "Too long: must have at most 262144 bytes"});
  }
  if (const auto* labels = meta->find("labels"); labels && labels->is_object()) {
    for (const auto& [k, v] : labels->as_object()) {
      auto key_problems = k8s::validate_qualified_name(k);
      if (!key_problems.empty())
        errs.push_back(field_error::invalid("metadata.labels", go_quote(k), join(key_problems, "; ")));
      if (!v.is_string()) {
        errs.push_back(field_error::invalid("metadata.labels", go_quote(k), "label values must be strings"));
        continue;
      }
      auto value_problems = k8s::validate_label_value(v.as_string());
      if (!value_problems.empty())
        errs.push_back(field_error::invalid("metadata.labels", go_quote(v.as_string()), join(value_problems, "; ")));
    }
  }
}

void validate_container(const json::value& c, const std::string& path, std::set<std::string>& names,
                        std::vector<field_error>& errs) {
  std::string name = c.get_string("name");
  if (name.empty())
    errs.push_back(field_error::required(path + ".name"));
  else if (auto p = check_label(name, false); !p.empty())
    errs.push_back(field_error::invalid(path + ".name", go_quote(name), join(p, "; ")));
  else if (!names.insert(name).second)
    errs.push_back(field_error::duplicate(path + ".name", name));
  if (c.get_string("image").empty())
    errs.push_back(field_error::required(path + ".image"));
  const json::value* resources = c.find("resources");
  if (resources && !resources->is_object() && !resources->is_null()) {
    errs.push_back(field_error::invalid(path + ".resources", type_name(*resources),
                                        "must be an object with limits and requests"));
    resources = nullptr;
  }
  for (auto section : {"limits", "requests"}) {
    const json::value* list = resources ? resources->find(section) : nullptr;
    if (list && !list->is_object() && !list->is_null())
      errs.push_back(field_error::invalid(path + ".resources." + section, type_name(*list),
                                          "must be a map of resource names to quantities"));
    if (!list || !list->is_object())
      continue;
    for (const auto& [res, q] : list->as_object()) {
      std::string field = path + ".resources." + section + "[" + res + "]";
      if (!q.is_string() && !q.is_number()) {
        errs.push_back(field_error::invalid(field, type_name(q), "must be a quantity (a string or a number)"));
        continue;
      }
      std::string text = q.is_string() ? q.as_string() : json::dump(q);
      auto parsed = k8s::quantity::parse(text);
      if (!parsed)
        errs.push_back(field_error::invalid(field, go_quote(text), parsed.err().message));
      else if (parsed->sign() < 0)
        errs.push_back(field_error::invalid(field, go_quote(text), "must be greater than or equal to 0"));
      else if (is_extended_resource(res) && parsed->nanos() % 1000000000 != 0)
        errs.push_back(field_error::invalid(field, go_quote(parsed->to_string()), "must be an integer"));
    }
  }
  // Extended resources (nvidia.com/gpu) cannot be overcommitted: a request needs the limit, and
  // both say the same.
  if (const json::value* requests = resources ? resources->find("requests") : nullptr;
      requests && requests->is_object()) {
    const json::value* limits = resources->find("limits");
    for (const auto& [res, q] : requests->as_object()) {
      if (!is_extended_resource(res))
        continue;
      auto limit = quantity_at(limits, res);
      auto request = quantity_at(requests, res);
      if (!limit)
        errs.push_back(field_error::required(path + ".resources.limits",
                                             "Limit must be set for non overcommitable resources"));
      else if (request && *request != *limit)
        errs.push_back(field_error::invalid(path + ".resources.requests", go_quote(request->to_string()),
                                            "must be equal to " + res + " limit"));
    }
  }
  if (resources) {
    for (auto res : {"cpu", "memory"}) {
      auto limit = quantity_at(resources->find("limits"), res);
      auto request = quantity_at(resources->find("requests"), res);
      if (limit && request && *request > *limit)
        errs.push_back(field_error::invalid(path + ".resources.requests", go_quote(request->to_string()),
                                            std::string("must be less than or equal to ") + res + " limit of " +
                                                limit->to_string()));
    }
  }
  if (const auto* ports = c.find("ports"); ports && ports->is_array())
    for (std::size_t i = 0; i < ports->as_array().size(); ++i) {
      std::int64_t port = ports->as_array()[i].get_int("containerPort", 0);
      if (port < 1 || port > 65535)
        errs.push_back(field_error::invalid(path + ".ports[" + std::to_string(i) + "].containerPort",
                                            std::to_string(port), "must be between 1 and 65535, inclusive"));
    }
}

void validate_pod_spec(const json::value* spec, const std::string& path, std::vector<field_error>& errs) {
  const json::value* containers = spec ? spec->find("containers") : nullptr;
  if (!containers || !containers->is_array() || containers->as_array().empty()) {
    errs.push_back(field_error::required(path + ".containers"));
  }
  std::set<std::string> names;
  for (auto key : {"initContainers", "containers"}) {
    const json::value* list = spec ? spec->find(key) : nullptr;
    if (!list || !list->is_array())
      continue;
    for (std::size_t i = 0; i < list->as_array().size(); ++i)
      validate_container(list->as_array()[i], path + "." + key + "[" + std::to_string(i) + "]", names, errs);
  }
  if (!spec)
    return;
  std::string restart = spec->get_string("restartPolicy");
  if (!restart.empty() && restart != "Always" && restart != "OnFailure" && restart != "Never")
    errs.push_back(field_error::not_supported(path + ".restartPolicy", restart, {"Always", "OnFailure", "Never"}));
  std::string dns = spec->get_string("dnsPolicy");
  if (!dns.empty() && dns != "ClusterFirstWithHostNet" && dns != "ClusterFirst" && dns != "Default" && dns != "None")
    errs.push_back(field_error::not_supported(path + ".dnsPolicy", dns,
                                              {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"}));
}

// Pod specs are immutable but for a few fields (kube-apiserver's ValidatePodUpdate).
void validate_pod_update(const json::value& pod, const json::value& old, std::vector<field_error>& errs) {
  auto masked = [](const json::value* spec) {
    json::value s = spec ? *spec : json::value(json::object{});
    if (!s.is_object())
      return s;
    for (auto key : {"containers", "initContainers"})
      if (auto* list = s.find(key); list && list->is_array())
        for (auto& c : list->as_array())
          if (c.is_object())
            c.as_object().erase("image");
    for (auto key : {"activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates"})
      s.as_object().erase(key);
    return s;
  };
  if (masked(pod.find("spec")) != masked(old.find("spec")))
    errs.push_back(field_error::forbidden(
        "spec", "pod updates may not change fields other than `spec.containers[*].image`,"
                "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                "previously negative)"));
}

void validate_service(const json::value& svc, std::vector<field_error>& errs) {
  const json::value* spec = svc.find("spec");
  std::string type = spec ? spec->get_string("type", "ClusterIP") : "ClusterIP";
  static const std::vector<std::string> types = {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"};
  if (std::find(types.begin(), types.end(), type) == types.end())
    errs.push_back(field_error::not_supported("spec.type", type, types));
  const json::value* ports = spec ? spec->find("ports") : nullptr;
  bool headless = spec && spec->get_string("clusterIP") == "None";
  if ((!ports || !ports->is_array() || ports->as_array().empty()) && type != "ExternalName" && !headless)
    errs.push_back(field_error::required("spec.ports"));
  if (ports && ports->is_array())
    for (std::size_t i = 0; i < ports->as_array().size(); ++i) {
      std::int64_t port = ports->as_array()[i].get_int("port", 0);
      if (port < 1 || port > 65535)
        errs.push_back(field_error::invalid("spec.ports[" + std::to_string(i) + "].port", std::to_string(port),
                                            "must be between 1 and 65535, inclusive"));
    }
}

void fold_string_data(json::value& secret) {
  const json::value* sd = secret.find("stringData");
  if (!sd)
    return;
  json::value string_data = *sd;
  secret.as_object().erase("stringData");
  if (!string_data.is_object())
    return;
  json::value& data = member_object(secret, "data");
  for (const auto& [k, v] : string_data.as_object())
    if (v.is_string())
      data.as_object().set(k, base64_encode(v.as_string()));
}

void keep_status(json::value& next, const json::value& old) {
  if (const auto* st = old.find("status"))
    next.as_object().set("status", *st);
  else
    next.as_object().erase("status");
}

} // namespace

std::string pod_qos_class(const json::value& pod) {
  bool best_effort = true;
  bool guaranteed = true;
  for (auto key : {"initContainers", "containers"}) {
    const json::value* list = pod.at_path({"spec", key});
    if (!list || !list->is_array())
      continue;
    for (const auto& c : list->as_array()) {
      const json::value* resources = c.find("resources");
      const json::value* limits = resources ? resources->find("limits") : nullptr;
      const json::value* requests = resources ? resources->find("requests") : nullptr;
      for (auto res : {"cpu", "memory"}) {
        auto l = quantity_at(limits, res);
        auto r = quantity_at(requests, res);
        if ((l && !l->is_zero()) || (r && !r->is_zero()))
          best_effort = false;
        if (!l || (r && *r != *l))
          guaranteed = false;
      }
    }
  }
  if (best_effort)
    return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

void prepare_for_create(const resource_type& rt, json::value& obj) {
  if (storage_kind(rt))
    return prepare_storage_for_create(rt, obj);
  if (is(rt, "Pod")) {
    default_pod(obj);
    obj.as_object().set("status", json::object{{"phase", "Pending"}, {"qosClass", pod_qos_class(obj)}});
    return;
  }
  if (is(rt, "Node")) {
    // Nodes may carry status on create (kubelet registration). Allocatable defaults to capacity.
    if (auto* st = obj.find("status"); st && st->is_object() && st->find("capacity") && !st->find("allocatable"))
      st->as_object().set("allocatable", *st->find("capacity"));
    return;
  }
  if (is(rt, "Service")) {
    json::value& spec = member_object(obj, "spec");
    set_default(spec, "type", "ClusterIP");
    set_default(spec, "sessionAffinity", "None");
    if (spec.get_string("type") != "ExternalName") {
      set_default(spec, "internalTrafficPolicy", "Cluster");
      set_default(spec, "ipFamilies", json::array{"IPv4"});
      set_default(spec, "ipFamilyPolicy", "SingleStack");
    }
    if (auto* ports = spec.find("ports"); ports && ports->is_array())
      for (auto& p : ports->as_array()) {
        set_default(p, "protocol", "TCP");
        if (p.is_object() && p.find("port"))
          set_default(p, "targetPort", *p.find("port"));
      }
    obj.as_object().set("status", json::object{{"loadBalancer", json::object{}}});
    return;
  }
  if (is(rt, "Secret")) {
    set_default(obj, "type", "Opaque");
    fold_string_data(obj);
    return;
  }
  if (is(rt, "PodTemplate")) {
    if (auto* spec = obj.at_path({"template", "spec"}))
      default_pod_spec(*spec);
    return;
  }
  if (rt.status_subresource && !rt.builtin)
    obj.as_object().erase("status");  // custom resources: status only through /status
  if (is(rt, "Namespace") || is(rt, "CustomResourceDefinition"))
    obj.as_object().erase("status");  // set by the store
}

void prepare_for_update(const resource_type& rt, json::value& next, const json::value& old) {
  if (is(rt, "Secret"))
    fold_string_data(next);
  if (is(rt, "Pod")) {
    // Scheme defaults apply to every write; what admission set on create is carried over
    // when the new body leaves it out (a client that round-trips a subset of the spec).
    json::value& spec = member_object(next, "spec");
    default_pod_spec(spec);
    for (auto key : {"serviceAccountName", "serviceAccount", "priority", "enableServiceLinks", "preemptionPolicy",
                     "tolerations", "nodeName"})
      if (const auto* v = old.at_path({"spec", key}); v && !spec.find(key))
        spec.as_object().set(key, *v);
  }
  if (is(rt, "PodTemplate"))
    if (auto* spec = next.at_path({"template", "spec"}))
      default_pod_spec(*spec);
  if (is(rt, "Service"))
    if (auto* ports = next.at_path({"spec", "ports"}); ports && ports->is_array())
      for (auto& p : ports->as_array()) {
        set_default(p, "protocol", "TCP");
        if (p.is_object() && p.find("port"))
          set_default(p, "targetPort", *p.find("port"));
      }
  if (is(rt, "Service")) {
    // Allocated addresses survive a PUT that leaves them out.
    json::value& spec = member_object(next, "spec");
    for (auto key : {"clusterIP", "clusterIPs"})
      if (const auto* v = old.at_path({"spec", key}); v && (!spec.find(key) || spec.find(key)->is_null()))
        spec.as_object().set(key, *v);
  }
  if (is(rt, "Namespace")) {
    if (const auto* f = old.at_path({"spec", "finalizers"}))
      member_object(next, "spec").as_object().set("finalizers", *f);
  }
  if (rt.status_subresource)
    keep_status(next, old);
}

void prepare_for_status_update(const resource_type& rt, json::value& next, const json::value& old) {
  (void)rt;
  json::value result = old;
  if (const auto* st = next.find("status"))
    result.as_object().set("status", *st);
  else
    result.as_object().erase("status");
  // Labels and annotations may change through /status; the rest of metadata is the stored one
  // except the resourceVersion precondition.
  json::value& meta = member_object(result, "metadata");
  for (auto key : {"labels", "annotations", "resourceVersion"}) {
    const json::value* v = next.at_path({"metadata", key});
    if (v)
      meta.as_object().set(key, *v);
    else if (std::string_view(key) != "resourceVersion")
      meta.as_object().erase(key);
    else
      meta.as_object().erase("resourceVersion");
  }
  if (is(rt, "Pod")) {
    // podIPs follows podIP when a client sets only the latter.
    json::value& st = member_object(result, "status");
    std::string ip = st.get_string("podIP");
    if (!ip.empty() && !st.find("podIPs"))
      st.as_object().set("podIPs", json::array{json::object{{"ip", ip}}});
  }
  next = std::move(result);
}

std::vector<field_error> validate_object(const resource_type& rt, const json::value& obj, const json::value* old) {
  std::vector<field_error> errs;
  validate_metadata(rt, obj, errs);
  if (storage_kind(rt)) {
    validate_storage(rt, obj, old, errs);
  } else if (is(rt, "Pod")) {
    validate_pod_spec(obj.find("spec"), "spec", errs);
    if (old)
      validate_pod_update(obj, *old, errs);
  } else if (is(rt, "PodTemplate")) {
    validate_pod_spec(obj.at_path({"template", "spec"}), "template.spec", errs);
  } else if (is(rt, "Service")) {
    validate_service(obj, errs);
    if (old) {
      std::string before = old->at_path({"spec", "clusterIP"}) ? old->at_path({"spec", "clusterIP"})->as_string() : "";
      std::string after = obj.at_path({"spec", "clusterIP"}) && obj.at_path({"spec", "clusterIP"})->is_string()
                              ? obj.at_path({"spec", "clusterIP"})->as_string()
                              : "";
      if (!before.empty() && before != after)
        errs.push_back(field_error::invalid("spec.clusterIPs[0]", go_quote(after), "may not change once set"));
    }
  } else if (is(rt, "CustomResourceDefinition")) {
    auto more = check_crd_schemas(obj);
    errs.insert(errs.end(), more.begin(), more.end());
  } else if (is(rt, "ConfigMap") || is(rt, "Secret")) {
    if (old && old->get_bool("immutable") && (obj.find("data") ? *obj.find("data") : json::value()) !=
                                                 (old->find("data") ? *old->find("data") : json::value()))
      errs.push_back(field_error::forbidden("data", "field is immutable when `immutable` is set"));
  }
  return errs;
}

} // namespace kozmo::apiserver
