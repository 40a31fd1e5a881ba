#include "k8s/client/paths.hpp"

#include "k8s/url.hpp"

namespace kozmo::client {

std::string api_prefix(std::string_view group, std::string_view version) {
  std::string out;
  if (group.empty()) {
    out = "/api/";
  } else {
    out = "/apis/";
    out += group;
    out += '/';
  }
  out += version.empty() ? std::string_view("v1") : version;
  return out;
}

std::string collection_path(const resource_ref& ref) {
  std::string out = api_prefix(ref.group, ref.version);
  if (!ref.ns.empty()) {
    out += "/namespaces/";
    out += ref.ns;
  }
  out += '/';
  out += ref.resource;
  return out;
}

std::string resource_path(const resource_ref& ref) {
  std::string out = collection_path(ref);
  if (ref.name.empty()) return out;
  out += '/';
  out += ref.name;
  if (!ref.subresource.empty()) {
    out += '/';
    out += ref.subresource;
  }
  return out;
}

query_builder& query_builder::add(std::string_view key, std::string_view value) {
  q_ += q_.empty() ? '?' : '&';
  q_ += key;
  q_ += '=';
  q_ += url::encode(value);
  return *this;
}

query_builder& query_builder::add_if(std::string_view key, std::string_view value) {
  if (!value.empty()) add(key, value);
  return *this;
}

std::string list_query(const list_options& opts) {
  query_builder q;
  q.add_if("labelSelector", opts.label_selector);
  q.add_if("fieldSelector", opts.field_selector);
  if (opts.limit > 0) q.add("limit", std::to_string(opts.limit));
  q.add_if("continue", opts.continue_token);
  q.add_if("resourceVersion", opts.resource_version);
  return q.str();
}

std::string watch_query(const watch_options& opts) {
  query_builder q;
  q.add("watch", "1");
  if (opts.allow_bookmarks) q.add("allowWatchBookmarks", "true");
  q.add_if("resourceVersion", opts.resource_version);
  q.add_if("labelSelector", opts.label_selector);
  q.add_if("fieldSelector", opts.field_selector);
  if (opts.timeout_seconds > 0) q.add("timeoutSeconds", std::to_string(opts.timeout_seconds));
  return q.str();
}

std::string_view patch_content_type(patch_type t) {
  switch (t) {
    case patch_type::merge: return "application/merge-patch+json";
    case patch_type::json: return "application/json-patch+json";
    case patch_type::strategic: return "application/strategic-merge-patch+json";
    case patch_type::apply: return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

} // namespace kozmo::client
