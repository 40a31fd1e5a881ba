// The store's reads, creates, updates and watches. Deletion, garbage collection and namespace
// termination are in store_lifecycle.cpp.
#include "k8s/apiserver/store_impl.hpp"
#include "k8s/apiserver/json_util.hpp"
#include "k8s/apiserver/structural.hpp"

#include <algorithm>

namespace kozmo::apiserver {

namespace {

const char* const initial_namespaces[] = {"default", "kube-system", "kube-public", "kube-node-lease"};

bool spec_changed(const json::value& a, const json::value& b) {
  const json::value* sa = a.find("spec");
  const json::value* sb = b.find("spec");
  if (!sa || !sb)
    return (sa == nullptr) != (sb == nullptr);
  return *sa != *sb;
}

// Equal apart from metadata.resourceVersion (and managedFields, which we do not track).
bool same_content(const json::value& a, const json::value& b) {
  if (!a.is_object() || !b.is_object())
    return a == b;
  json::value ca = a, cb = b;
  for (auto* v : {&ca, &cb})
    if (auto* m = v->find("metadata"); m && m->is_object()) {
      m->as_object().erase("resourceVersion");
      m->as_object().erase("managedFields");
    }
  return ca == cb;
}

bool is_crd(const resource_type& rt) { return rt.builtin && rt.kind == "CustomResourceDefinition"; }
bool is_namespace(const resource_type& rt) { return rt.builtin && rt.kind == "Namespace"; }

} // namespace

bool has_finalizer(const json::value& obj, std::string_view name) {
  const auto* m = meta_of(obj);
  const auto* f = m ? m->find("finalizers") : nullptr;
  if (!f || !f->is_array())
    return false;
  return std::any_of(f->as_array().begin(), f->as_array().end(),
                     [&](const json::value& v) { return v.is_string() && v.as_string() == name; });
}

std::vector<std::string> owner_uids(const json::value& obj) {
  std::vector<std::string> out;
  const auto* m = meta_of(obj);
  const auto* refs = m ? m->find("ownerReferences") : nullptr;
  if (!refs || !refs->is_array())
    return out;
  for (const auto& r : refs->as_array()) {
    std::string uid = r.get_string("uid");
    if (!uid.empty())
      out.push_back(std::move(uid));
  }
  return out;
}

// ---- open --------------------------------------------------------------------------------

store::store(std::unique_ptr<impl> p) : impl_(std::move(p)) {}
store::~store() = default;

expected<std::unique_ptr<store>> store::open(options opts) {
  auto p = std::make_unique<impl>();
  p->opts = opts;
  if (!opts.data_dir.empty()) {
    journal::loaded_state state;
    auto j = journal::open(opts.data_dir, state);
    if (!j)
      return j.err();
    p->log = std::move(*j);
    p->rv = state.rv;
    // CRDs first, so the custom resources they declare are known.
    for (auto& rec : state.objects)
      if (rec.resource == "apiextensions.k8s.io/customresourcedefinitions")
        (void)p->registry.add_crd(rec.object);
    for (auto& rec : state.objects) {
      auto obj = std::make_shared<const json::value>(std::move(rec.object));
      p->index(*obj, {rec.resource, rec.key});
      p->data[rec.resource][rec.key] = std::move(obj);
    }
    // Events before the restart are gone: resuming older watches must relist (410).
    p->compacted = p->rv;
    p->rebuild_after_load();
  }
  auto ns_type = p->registry.find_by_key("/namespaces");
  {
    std::lock_guard lock(p->mu);
    for (const char* name : initial_namespaces) {
      if (p->find(ns_type->key(), name))
        continue;
      json::value ns = json::object{{"metadata", json::object{{"name", name}}}};
      auto created = p->create_locked(*ns_type, "", std::move(ns));
      if (!created)
        return created.err();
    }
    p->settle();
  }
  return std::unique_ptr<store>(new store(std::move(p)));
}

// ---- registry ----------------------------------------------------------------------------

resource_ptr store::resolve(std::string_view group, std::string_view version, std::string_view plural) const {
  std::lock_guard lock(impl_->mu);
  return impl_->registry.find(group, version, plural);
}

resource_ptr store::resolve_kind(std::string_view group, std::string_view kind) const {
  std::lock_guard lock(impl_->mu);
  return impl_->registry.find_by_kind(group, kind);
}

std::vector<resource_ptr> store::resources() const {
  std::lock_guard lock(impl_->mu);
  return impl_->registry.all();
}

std::vector<std::pair<std::string, std::vector<std::string>>> store::groups() const {
  std::lock_guard lock(impl_->mu);
  return impl_->registry.groups();
}

std::uint64_t store::resources_generation() const {
  std::lock_guard lock(impl_->mu);
  return impl_->resources_gen;
}

// ---- reads -------------------------------------------------------------------------------

std::uint64_t store::current_rv() const {
  std::lock_guard lock(impl_->mu);
  return impl_->rv;
}

std::uint64_t store::compacted_rv() const {
  std::lock_guard lock(impl_->mu);
  return impl_->compacted;
}

object_ptr store::impl::find(const std::string& resource, const std::string& key) const {
  auto r = data.find(resource);
  if (r == data.end())
    return nullptr;
  auto it = r->second.find(key);
  return it == r->second.end() ? nullptr : it->second;
}

object_ptr store::impl::find_uid(const std::string& uid) const {
  auto it = by_uid.find(uid);
  return it == by_uid.end() ? nullptr : find(it->second.resource, it->second.key);
}

expected<object_ptr> store::get(const resource_type& rt, const std::string& ns, const std::string& name) const {
  std::lock_guard lock(impl_->mu);
  auto obj = impl_->find(rt.key(), impl::storage_key(rt, ns, name));
  if (!obj)
    return error::not_found(rt.plural + (rt.group.empty() ? "" : "." + rt.group) + " \"" + name + "\" not found");
  return obj;
}

list_page store::list(const resource_type& rt, const std::string& ns, const object_predicate& filter,
                      std::size_t limit, const std::string& start_key) const {
  std::lock_guard lock(impl_->mu);
  list_page page;
  page.rv = impl_->rv;
  auto r = impl_->data.find(rt.key());
  if (r == impl_->data.end())
    return page;
  const auto& objects = r->second;
  std::string prefix = rt.namespaced && !ns.empty() ? ns + "/" : std::string();
  std::string from = std::max(prefix, start_key);
  std::string last_key;
  for (auto it = objects.lower_bound(from); it != objects.end(); ++it) {
    if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0)
      break;
    if (filter && !filter(*it->second))
      continue;
    if (limit != 0 && page.items.size() == limit) {
      ++page.remaining;
      continue;
    }
    page.items.push_back(it->second);
    last_key = it->first;
  }
  // The next page starts right after the last key returned ("key\0" sorts just after "key").
  if (page.remaining > 0)
    page.next_key = last_key + std::string(1, '\0');
  return page;
}

// ---- commits -----------------------------------------------------------------------------

void store::impl::index(const json::value& obj, const object_ref& ref) {
  std::string uid = meta_string(obj, "uid");
  if (uid.empty())
    return;
  by_uid[uid] = ref;
  for (const auto& owner : owner_uids(obj))
    dependents[owner].insert(uid);
}

void store::impl::unindex(const json::value& obj) {
  std::string uid = meta_string(obj, "uid");
  if (uid.empty())
    return;
  by_uid.erase(uid);
  for (const auto& owner : owner_uids(obj)) {
    auto it = dependents.find(owner);
    if (it == dependents.end())
      continue;
    it->second.erase(uid);
    if (it->second.empty())
      dependents.erase(it);
  }
}

void store::impl::persist_put(const std::string& resource, const std::string& key, const json::value& obj) {
  if (!log)
    return;
  log->append_put(rv, resource, key, obj);
  if (log->wants_compaction()) {
    (void)log->compact(rv, [&](const auto& sink) {
      for (const auto& [res, objects] : data)
        for (const auto& [k, o] : objects)
          sink(res, k, *o);
    });
  }
}

void store::impl::persist_delete(const std::string& resource, const std::string& key) {
  if (log)
    log->append_delete(rv, resource, key);
}

// kube-apiserver writes metadata first and status last (Go struct order), whatever order the
// client used.
static json::value canonical_order(json::value obj) {
  if (!obj.is_object())
    return obj;
  json::object out;
  if (const auto* m = obj.find("metadata"))
    out.set("metadata", *m);
  for (auto& [k, v] : obj.as_object())
    if (k != "metadata" && k != "status")
      out.set(k, std::move(v));
  if (const auto* st = obj.find("status"))
    out.set("status", *st);
  return out;
}

object_ptr store::impl::commit_put(const resource_type& rt, const std::string& key, json::value obj, object_ptr prev) {
  obj = canonical_order(std::move(obj));
  ++rv;
  member_object(obj, "metadata").as_object().set("resourceVersion", std::to_string(rv));
  if (prev)
    unindex(*prev);
  auto stored = std::make_shared<const json::value>(std::move(obj));
  data[rt.key()][key] = stored;
  index(*stored, {rt.key(), key});
  persist_put(rt.key(), key, *stored);
  note_event_write(rt, key);
  change_event ev;
  ev.type = prev ? event_type::modified : event_type::added;
  ev.rv = rv;
  ev.resource = rt.key();
  ev.ns = rt.namespaced ? meta_string(*stored, "namespace") : std::string();
  ev.object = stored;
  ev.previous = std::move(prev);
  record(std::move(ev));
  return stored;
}

object_ptr store::impl::commit_delete(const resource_type& rt, const std::string& key, json::value final_state,
                                      object_ptr prev) {
  ++rv;
  member_object(final_state, "metadata").as_object().set("resourceVersion", std::to_string(rv));
  unindex(*prev);
  auto r = data.find(rt.key());
  if (r != data.end())
    r->second.erase(key);
  auto final_ptr = std::make_shared<const json::value>(std::move(final_state));
  persist_delete(rt.key(), key);
  std::string uid = meta_string(*prev, "uid");
  if (!uid.empty())
    removed_uids.push_back(uid);
  change_event ev;
  ev.type = event_type::deleted;
  ev.rv = rv;
  ev.resource = rt.key();
  ev.ns = rt.namespaced ? meta_string(*final_ptr, "namespace") : std::string();
  ev.object = final_ptr;
  ev.previous = std::move(prev);
  record(std::move(ev));
  return final_ptr;
}

// ---- ids ---------------------------------------------------------------------------------

std::string store::impl::random_suffix(std::size_t n) {
  // Kubernetes' generateName alphabet: no vowels (no accidental words), no look-alikes.
  static constexpr std::string_view alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string out;
  for (std::size_t i = 0; i < n; ++i)
    out += alphabet[rng() % alphabet.size()];
  return out;
}

std::string store::impl::new_uid() {
  std::uint64_t a = rng(), b = rng();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48), static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

std::string store::impl::allocate_cluster_ip() {
  // 10.96.0.0/12, skipping .0 and 10.96.0.1 (the kubernetes service) and .10 (cluster DNS).
  std::set<std::string> used;
  if (auto r = data.find("/services"); r != data.end())
    for (const auto& [k, svc] : r->second)
      if (const auto* spec = svc->find("spec"))
        used.insert(spec->get_string("clusterIP"));
  for (int attempt = 0; attempt < 4096; ++attempt) {
    std::uint32_t offset = 11 + static_cast<std::uint32_t>(rng() % ((1u << 20) - 12));
    std::uint32_t ip = (10u << 24) | (96u << 16) | offset;
    std::string s = std::to_string(ip >> 24) + "." + std::to_string((ip >> 16) & 0xff) + "." +
                    std::to_string((ip >> 8) & 0xff) + "." + std::to_string(ip & 0xff);
    if (!used.count(s))
      return s;
  }
  return "10.96.0.2";
}

// ---- create ------------------------------------------------------------------------------

expected<object_ptr> store::create(const resource_type& rt, const std::string& ns, json::value obj, bool dry_run) {
  std::lock_guard lock(impl_->mu);
  auto created = impl_->create_locked(rt, ns, std::move(obj), dry_run);
  impl_->settle();
  return created;
}

expected<object_ptr> store::impl::create_locked(const resource_type& rt, const std::string& ns, json::value obj,
                                                bool dry_run) {
  json::value& meta = member_object(obj, "metadata");
  if (rt.namespaced) {
    auto ns_obj = find("/namespaces", ns);
    if (!ns_obj)
      return error::not_found("namespaces \"" + ns + "\" not found");
    if (meta_of(*ns_obj)->find("deletionTimestamp"))
      return error{"unable to create new content in namespace " + ns + " because it is being terminated", 403,
                   "Forbidden"};
    meta.as_object().set("namespace", ns);
  } else {
    meta.as_object().erase("namespace");
  }
  std::string name = meta.get_string("name");
  std::string key;
  if (name.empty()) {
    std::string base = meta.get_string("generateName");
    if (base.empty())
      return error::invalid("metadata.name: Required value: name or generateName is required");
    for (int attempt = 0; attempt < 16; ++attempt) {
      name = base + random_suffix(5);
      if (!find(rt.key(), storage_key(rt, ns, name)))
        break;
    }
    meta.as_object().set("name", name);
  }
  key = storage_key(rt, ns, name);
  if (find(rt.key(), key))
    return error{rt.plural + (rt.group.empty() ? "" : "." + rt.group) + " \"" + name + "\" already exists", 409,
                 "AlreadyExists"};

  json::object& m = meta.as_object();
  for (auto field : {"deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "resourceVersion"})
    m.erase(field);
  m.set("uid", new_uid());
  m.set("creationTimestamp", now_rfc3339());
  if (rt.has_spec())
    m.set("generation", 1);
  else
    m.erase("generation");

  if (is_namespace(rt)) {
    json::value& labels = member_object(meta, "labels");
    labels.as_object().set("kubernetes.io/metadata.name", name);
    json::value& spec = member_object(obj, "spec");
    if (!spec.find("finalizers"))
      spec.as_object().set("finalizers", json::array{"kubernetes"});
    obj.as_object().set("status", json::object{{"phase", "Active"}});
  }
  if (rt.builtin && rt.kind == "Service") {
    json::value& spec = member_object(obj, "spec");
    std::string type = spec.get_string("type", "ClusterIP");
    if (!spec.find("type"))
      spec.as_object().set("type", "ClusterIP");
    if (type != "ExternalName") {
      std::string ip = spec.get_string("clusterIP");
      if (ip.empty())
        ip = allocate_cluster_ip();
      spec.as_object().set("clusterIP", ip);
      spec.as_object().set("clusterIPs", json::array{ip});
    }
  }
  if (is_crd(rt)) {
    auto st = register_crd_checked(obj, dry_run);
    if (!st)
      return st.err();
  }
  if (dry_run) {
    if (rt.builtin && rt.kind == "Service")
      member_object(obj, "spec").as_object().erase("clusterIPs");  // not allocated for real
    return std::make_shared<const json::value>(std::move(obj));
  }
  auto stored = commit_put(rt, key, std::move(obj), nullptr);
  // Created with an owner that no longer exists (a controller racing its owner's deletion):
  // the garbage collector deletes it, as Kubernetes' does for an absent owner.
  if (stored)
    for (const auto& owner : owner_uids(*stored))
      if (!by_uid.count(owner))
        removed_uids.push_back(owner);
  return stored;
}

// ---- update ------------------------------------------------------------------------------

expected<object_ptr> store::update(const resource_type& rt, const std::string& ns, const std::string& name,
                                   const mutate_fn& fn, bool dry_run) {
  std::lock_guard lock(impl_->mu);
  std::string key = impl::storage_key(rt, ns, name);
  auto cur = impl_->find(rt.key(), key);
  if (!cur)
    return error::not_found(rt.plural + (rt.group.empty() ? "" : "." + rt.group) + " \"" + name + "\" not found");
  auto next = fn(*cur);
  if (!next)
    return next.err();
  auto updated = impl_->update_locked(rt, key, std::move(*next), cur, dry_run);
  impl_->settle();
  return updated;
}

expected<object_ptr> store::impl::update_locked(const resource_type& rt, const std::string& key, json::value next,
                                                const object_ptr& cur, bool dry_run) {
  const json::value& old_meta = *meta_of(*cur);
  json::value& meta = member_object(next, "metadata");
  std::string want_rv = meta.get_string("resourceVersion");
  if (!want_rv.empty() && want_rv != old_meta.get_string("resourceVersion"))
    return error::conflict("Operation cannot be fulfilled on " + rt.plural +
                           (rt.group.empty() ? "" : "." + rt.group) + " \"" + old_meta.get_string("name") +
                           "\": the object has been modified; please apply your changes to the latest version and "
                           "try again");
  json::object& m = meta.as_object();
  // Identity and lifecycle marks belong to the server.
  for (auto field : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                     "deletionGracePeriodSeconds", "generation"}) {
    if (const auto* v = old_meta.find(field))
      m.set(field, *v);
    else
      m.erase(field);
  }
  m.erase("selfLink");
  m.set("resourceVersion", old_meta.get_string("resourceVersion"));

  bool deleting = old_meta.find("deletionTimestamp") != nullptr;
  if (deleting) {
    // kube-apiserver refuses new finalizers on an object that is going away.
    if (const auto* f = m.find("finalizers"); f && f->is_array())
      for (const auto& item : f->as_array())
        if (item.is_string() && !has_finalizer(*cur, item.as_string()))
          return error::invalid("metadata.finalizers: Forbidden: no new finalizers can be added if the object is "
                                "being deleted, found new finalizers []string{\"" + item.as_string() + "\"}");
  }
  if (rt.has_spec() && spec_changed(*cur, next))
    m.set("generation", old_meta.get_int("generation", 1) + 1);
  if (is_crd(rt)) {
    auto st = register_crd_checked(next, dry_run);
    if (!st)
      return st.err();
  }
  if (same_content(*cur, next))
    return cur;
  if (dry_run)
    return std::make_shared<const json::value>(std::move(next));

  if (deleting) {
    const auto* f = m.find("finalizers");
    bool no_finalizers = !f || !f->is_array() || f->as_array().empty();
    const auto* grace = m.find("deletionGracePeriodSeconds");
    bool grace_over = !grace || !grace->is_int() || grace->as_int() == 0;
    if (no_finalizers && grace_over) {
      if (is_namespace(rt))
        terminating_namespaces.insert(old_meta.get_string("uid"));  // settle() removes it once empty
      else
        return remove_now(rt, key, std::move(next), cur);
    }
  }
  return commit_put(rt, key, std::move(next), cur);
}

expected<ok_t> store::impl::register_crd_checked(json::value& crd, bool dry_run) {
  if (!dry_run)
    return register_crd(crd);
  // Validate against a scratch registry so a dry run leaves the served APIs alone.
  resource_registry scratch = registry;
  auto rt = scratch.add_crd(crd);
  if (!rt)
    return rt.err();
  return ok;
}

// kube-apiserver applies a CRD's defaults when it reads objects from etcd, without writing them
// back: stored objects show a default added later. Here the stored copies are defaulted in place
// when the schema changes (no new resourceVersion, no watch event, nothing journaled).
void store::impl::default_stored_objects(const resource_type& rt) {
  const crd_version* cv = rt.crd_version_of(rt.version);
  if (!cv || !schema_has_defaults(cv->schema))
    return;
  auto it = data.find(rt.key());
  if (it == data.end())
    return;
  for (auto& [key, obj] : it->second) {
    json::value copy = *obj;
    if (default_custom_resource(cv->schema, copy))
      obj = std::make_shared<const json::value>(std::move(copy));
  }
}

expected<ok_t> store::impl::register_crd(json::value& crd) {
  auto rt = registry.add_crd(crd);
  if (!rt)
    return rt.err();
  ++resources_gen;
  default_stored_objects(**rt);
  // What kube-apiextensions reports once a CRD is served.
  json::value names = crd.at_path({"spec", "names"}) ? *crd.at_path({"spec", "names"}) : json::value(json::object{});
  if (!names.find("singular"))
    names.as_object().set("singular", (*rt)->singular);
  if (!names.find("listKind"))
    names.as_object().set("listKind", (*rt)->list_kind);
  std::string now = now_rfc3339();
  json::array stored_versions;
  for (const auto& v : (*rt)->versions)
    if (v.name == (*rt)->version)
      stored_versions.push_back(v.name);
  json::value status = json::object{
      {"conditions", json::array{
                         json::object{{"type", "NamesAccepted"}, {"status", "True"}, {"lastTransitionTime", now},
                                      {"reason", "NoConflicts"}, {"message", "no conflicts found"}},
                         json::object{{"type", "Established"}, {"status", "True"}, {"lastTransitionTime", now},
                                      {"reason", "InitialNamesAccepted"},
                                      {"message", "the initial names have been accepted"}},
                     }},
      {"acceptedNames", names},
      {"storedVersions", stored_versions},
  };
  // Keep transition times stable across updates that change nothing.
  if (const auto* old = crd.find("status"); old && old->find("conditions") && old->find("acceptedNames") &&
                                              *old->find("acceptedNames") == names)
    status.as_object().set("conditions", *old->find("conditions"));
  crd.as_object().set("status", std::move(status));
  return ok;
}

} // namespace kozmo::apiserver
