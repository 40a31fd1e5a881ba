// The resource types the embedded API server serves: built-in kinds plus the custom resources
// declared by stored CustomResourceDefinitions.
//
// A resource is identified by group and plural ("" + "pods", "kozmo.io" + "taskexecutions").
// Objects are stored once per resource, whatever version a client uses: custom resources get
// no conversion (every served version sees the same object, apiVersion stamped on the way out).
#pragma once

#include "k8s/json/value.hpp"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::apiserver {

// One served version of a custom resource, with what differs per version.
struct crd_version {
  std::string name;             // "v1"
  json::value schema;           // openAPIV3Schema (null when none was declared)
  json::value printer_columns;  // additionalPrinterColumns (array or null)
  bool status_subresource = false;
};

struct resource_type {
  std::string group;     // "" for the core group
  std::string version;   // preferred version ("v1")
  std::string plural;    // "pods"
  std::string singular;  // "pod" ("" for built-ins, as kube-apiserver reports them)
  std::string kind;      // "Pod"
  std::string list_kind; // "PodList"
  bool namespaced = true;
  bool builtin = true;           // built-in kinds accept strategic merge patch
  bool status_subresource = false;
  bool binding_subresource = false;  // pods/binding
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<std::string> verbs;
  // Custom resources: every served version, the preferred one first.
  std::vector<crd_version> versions;
  std::string crd_name;  // "<plural>.<group>" for custom resources

  // "group/plural": the storage key of this resource.
  std::string key() const { return group + "/" + plural; }
  // "v1" or "group/version" for a served version.
  std::string api_version(std::string_view v) const;
  std::string api_version() const { return api_version(version); }
  bool serves(std::string_view v) const;
  // The CRD version entry for `v`, or nullptr (built-ins, unknown versions).
  const crd_version* crd_version_of(std::string_view v) const;
  // A resource "has a spec" when writes to it bump metadata.generation on spec changes.
  bool has_spec() const;
  // A built-in kind of that name (not a custom resource that happens to share it).
  bool is_builtin(std::string_view k) const { return builtin && kind == k; }
};

using resource_ptr = std::shared_ptr<const resource_type>;

// The set of served resources. Not thread-safe on its own: the store guards it.
class resource_registry {
public:
  resource_registry();  // the built-in kinds

  resource_ptr find(std::string_view group, std::string_view version, std::string_view plural) const;
  resource_ptr find_by_key(std::string_view key) const;
  resource_ptr find_by_kind(std::string_view group, std::string_view kind) const;
  std::vector<resource_ptr> all() const;

  // Registers (or refreshes) the custom resource a CRD object declares; returns the type, or
  // an error message when the CRD cannot be served (missing names, no served version...).
  expected<resource_ptr> add_crd(const json::value& crd);
  // Forgets the custom resource of the CRD named `crd_name` ("widgets.example.com").
  resource_ptr remove_crd(std::string_view crd_name);

  // Group names in discovery order (core group excluded), and the versions each serves,
  // preferred first.
  std::vector<std::pair<std::string, std::vector<std::string>>> groups() const;

private:
  std::map<std::string, resource_ptr, std::less<>> by_key_;
  std::vector<std::string> group_order_;  // built-in groups first, then CRD groups by arrival
};

// Kubernetes' version priority: GA > beta > alpha, then higher numbers first, then other
// strings alphabetically ("v1" < "v2beta1" ordering as kube-apiserver sorts versions).
bool version_less_preferred(std::string_view a, std::string_view b);

} // namespace kozmo::apiserver
