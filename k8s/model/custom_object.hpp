// An object of any other kind (custom resources such as PyTorchJob or TaskExecution): its
// metadata decoded, and the whole document kept as JSON for the kind's own code to read.
#pragma once

#include "k8s/json/value.hpp"
#include "k8s/model/object_meta.hpp"

namespace kozmo::k8s {

struct custom_object {
  std::string api_version;
  std::string kind;
  object_meta metadata;
  json::value document; // the full object, metadata included
  friend bool operator==(const custom_object&, const custom_object&) = default;
};

} // namespace kozmo::k8s
