// The subset of kubectl JSONPath that CRD additionalPrinterColumns use:
//   .a.b   ['a.b']   [0]   [*]   [?(@.type=="Ready")]   (optionally wrapped in {...})
#pragma once

#include "k8s/json/value.hpp"

#include <string_view>
#include <vector>

namespace kozmo::apiserver {

// Every value the path selects in `root`, in document order (empty when nothing matches or the
// path is outside the subset).
std::vector<const json::value*> jsonpath_find(const json::value& root, std::string_view path);

} // namespace kozmo::apiserver
