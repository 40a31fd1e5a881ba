#include "actors/controller/plan.hpp"

namespace kozmo::controller {

std::string describe(const step& s) {
  return std::visit(
      [](const auto& st) -> std::string {
        using S = std::decay_t<decltype(st)>;
        auto target = [](const client::resource_ref& r, const std::string& name) {
          return r.resource + (r.subresource.empty() ? "" : "/" + r.subresource) + " " + name;
        };
        if constexpr (std::is_same_v<S, create_step>) {
          const auto* meta = st.object.find("metadata");
          return "create " + target(st.where, meta ? meta->get_string("name") : std::string());
        } else if constexpr (std::is_same_v<S, patch_step>) {
          return "patch " + target(st.ref, st.ref.name);
        } else if constexpr (std::is_same_v<S, delete_step>) {
          return "delete " + target(st.ref, st.ref.name);
        } else if constexpr (std::is_same_v<S, guard_step>) {
          return st.what.empty() ? "re-read " + target(st.owner, st.owner.name) : st.what;
        } else {
          return "event " + st.note.reason;
        }
      },
      s);
}

std::string resource_of(const step& s) {
  if (const auto* c = std::get_if<create_step>(&s))
    return c->where.resource;
  if (const auto* p = std::get_if<patch_step>(&s))
    return p->ref.resource;
  if (const auto* d = std::get_if<delete_step>(&s))
    return d->ref.resource;
  if (const auto* g = std::get_if<guard_step>(&s))
    return g->owner.resource;
  return {};
}

bool same_object(const client::resource_ref& a, const client::resource_ref& b) {
  return a.group == b.group && a.resource == b.resource && a.ns == b.ns && a.name == b.name;
}

bool object_gone(const plan_outcome& out, const client::resource_ref& object) {
  if (out.what != plan_outcome::result::failed || out.code != 404 || out.failed_step >= out.plan.steps.size())
    return false;
  const auto* p = std::get_if<patch_step>(&out.plan.steps[out.failed_step]);
  return p != nullptr && same_object(p->ref, object);
}

} // namespace kozmo::controller
