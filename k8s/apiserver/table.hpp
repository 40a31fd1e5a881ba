// Server-side printing: meta.k8s.io Table responses, which give `kubectl get` its columns
// (shared/reference/k8s-wire.md §6). Columns and cells follow kube-apiserver's printers
// (pkg/printers/internalversion) for built-in kinds and additionalPrinterColumns for CRs.
#pragma once

#include "k8s/apiserver/resource_types.hpp"
#include "k8s/json/value.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::apiserver {

struct table_column {
  std::string name;
  std::string type;    // "string", "integer", "date", ...
  std::string format;  // "name" for the first column
  std::string description;
  int priority = 0;    // 1 = shown by -o wide only
};

std::vector<table_column> table_columns(const resource_type& rt, std::string_view version);
// One row's cells, in the order of table_columns(). `now` is the current Unix time.
json::array table_cells(const resource_type& rt, std::string_view version, const json::value& obj, std::int64_t now);

// What a row carries in "object": PartialObjectMetadata (default), the full object, or nothing.
enum class include_object { metadata, object, none };

// A whole Table: `list_meta` is its "metadata" ({"resourceVersion":...,"continue":...}),
// `with_columns` false writes "columnDefinitions":null (every watch event but the first).
std::string encode_table(const resource_type& rt, std::string_view version, std::string_view meta_version,
                         const std::vector<const json::value*>& objects, const json::value& list_meta,
                         bool with_columns, include_object include);

// kube's duration.HumanDuration ("5m3s", "3h", "12d").
std::string human_duration(std::int64_t seconds);

} // namespace kozmo::apiserver
