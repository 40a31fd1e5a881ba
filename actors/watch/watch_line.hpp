// One decoded line of a watch stream, and what a type must provide to be watched.
#pragma once

#include "actors/watch/watch_cache.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace kozmo::watch {

template <class T>
struct watch_line {
  enum class kind { added, modified, deleted, bookmark, error } what = kind::added;
  std::shared_ptr<const T> object;   // for added / modified / deleted
  std::string resource_version;      // of the object, or of the bookmark
  int error_code = 0;                // for error: the Status code (410 = Expired)
  std::string error_message;
};

// Specialized per watched type (see object_traits.hpp):
//   static std::string key(const T&);                      "namespace/name" or "name"
//   static std::string resource_version(const T&);
//   static void index_values(const T&, index_kind, std::vector<std::string>&);
//   static expected<watch_line<T>> decode_line(std::string_view line);  simdjson, hot path
//   static expected<k8s::object_list<T>> decode_list(std::string_view body); a LIST page, simdjson
template <class T>
struct object_traits;

} // namespace kozmo::watch
