#include "k8s/apiserver/encoding.hpp"

namespace kozmo::apiserver {

void encode_typed_to(std::string& out, std::string_view kind, std::string_view api_version, const json::value& obj) {
  out += "{\"kind\":";
  json::write_string(out, kind);
  out += ",\"apiVersion\":";
  json::write_string(out, api_version);
  if (!obj.is_object() || obj.as_object().empty()) {
    out += '}';
    return;
  }
  for (const auto& [key, value] : obj.as_object()) {
    if (key == "kind" || key == "apiVersion")
      continue;
    out += ',';
    json::write_string(out, key);
    out += ':';
    json::dump_to(out, value);
  }
  out += '}';
}

std::string encode_object(const resource_type& rt, std::string_view version, const json::value& obj) {
  std::string out;
  encode_typed_to(out, rt.kind, rt.api_version(version), obj);
  return out;
}

std::string encode_list(const resource_type& rt, std::string_view version, const json::value& list_meta,
                        const std::vector<std::shared_ptr<const json::value>>& items) {
  std::string out = "{\"kind\":";
  json::write_string(out, rt.list_kind);
  out += ",\"apiVersion\":";
  json::write_string(out, rt.api_version(version));
  out += ",\"metadata\":";
  json::dump_to(out, list_meta);
  out += ",\"items\":[";
  std::string api_version = rt.api_version(version);
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += ',';
    if (rt.builtin)
      json::dump_to(out, *items[i]);
    else
      encode_typed_to(out, rt.kind, api_version, *items[i]);
  }
  out += "]}";
  return out;
}

json::value strip_type(json::value obj) {
  if (obj.is_object()) {
    obj.as_object().erase("kind");
    obj.as_object().erase("apiVersion");
  }
  return obj;
}

} // namespace kozmo::apiserver
