// The protobuf bodies kubectl's generators send, turned into JSON objects (the wire reader is
// k8s/protobuf_wire.hpp). Field numbers are those of k8s.io/api/core/v1/generated.proto and
// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto.
#include "k8s/apiserver/body_codec.hpp"
#include "k8s/apiserver/request_util.hpp"
#include "k8s/apiserver/store.hpp"
#include "k8s/protobuf_wire.hpp"

#include <cstdint>
#include <optional>

namespace kozmo::apiserver {
namespace {

using k8s::protobuf::each_field;
using k8s::protobuf::field;
using k8s::protobuf::time_seconds;

// map<string, string|bytes> entries: message {1: key, 2: value}.
// Appends to `list` (made an array when it is not one yet): a repeated field's next element.
void append(json::value& list, json::value item) {
  if (!list.is_array())
    list = json::array{};
  list.as_array().push_back(std::move(item));
}

// How a map entry's value is written: text, bytes as base64, or a resource.Quantity (a message
// whose field 1 is its string form).
enum class map_value { text, base64, quantity };

bool map_entry(std::string_view data, json::value& target, map_value form) {
  std::string key, value;
  bool ok = each_field(data, [&](const field& f) {
    if (f.number == 1) {
      key = std::string(f.bytes);
    } else if (f.number == 2 && form == map_value::quantity) {
      return each_field(f.bytes, [&](const field& q) {
        if (q.number == 1)
          value = std::string(q.bytes);
        return true;
      });
    } else if (f.number == 2) {
      value = std::string(f.bytes);
    }
    return true;
  });
  if (!ok)
    return false;
  if (!target.is_object())
    target = json::object{};
  target.as_object().set(key, form == map_value::base64 ? base64_encode(value) : value);
  return true;
}

bool owner_reference(std::string_view data, json::value& list) {
  json::object ref;
  bool ok = each_field(data, [&](const field& f) {
    switch (f.number) {
    case 1: ref.set("kind", std::string(f.bytes)); break;
    case 3: ref.set("name", std::string(f.bytes)); break;
    case 4: ref.set("uid", std::string(f.bytes)); break;
    case 5: ref.set("apiVersion", std::string(f.bytes)); break;
    case 6: ref.set("controller", f.varint != 0); break;
    case 7: ref.set("blockOwnerDeletion", f.varint != 0); break;
    default: break;
    }
    return true;
  });
  append(list, std::move(ref));
  return ok;
}

bool object_meta(std::string_view data, json::value& meta) {
  meta = json::object{};
  return each_field(data, [&](const field& f) {
    auto& m = meta.as_object();
    switch (f.number) {
    case 1: m.set("name", std::string(f.bytes)); return true;
    case 2: m.set("generateName", std::string(f.bytes)); return true;
    case 3: m.set("namespace", std::string(f.bytes)); return true;
    case 5: m.set("uid", std::string(f.bytes)); return true;
    case 6: m.set("resourceVersion", std::string(f.bytes)); return true;
    case 7: m.set("generation", static_cast<long long>(f.varint)); return true;
    case 8: {
      auto s = time_seconds(f.bytes);
      if (s && *s != 0)
        m.set("creationTimestamp", format_rfc3339(*s));
      return s.has_value();
    }
    case 11: return map_entry(f.bytes, m["labels"], map_value::text);
    case 12: return map_entry(f.bytes, m["annotations"], map_value::text);
    case 13: return owner_reference(f.bytes, m["ownerReferences"]);
    case 14: {
      json::value& list = m["finalizers"];
      if (!list.is_array())
        list = json::array{};
      list.as_array().push_back(std::string(f.bytes));
      return true;
    }
    default: return true;  // selfLink, deletion marks, managedFields: not accepted from clients
    }
  });
}

bool string_list(std::string_view bytes, json::value& list) {
  append(list, std::string(bytes));
  return true;
}

expected<json::value> decode_kind(const std::string& kind, std::string_view raw) {
  json::object obj;
  bool ok = true;
  auto meta_field = [&](const field& f) {
    json::value meta;
    ok = object_meta(f.bytes, meta);
    obj.set("metadata", std::move(meta));
    return ok;
  };
  if (kind == "Namespace") {
    ok = each_field(raw, [&](const field& f) {
      if (f.number == 1)
        return meta_field(f);
      if (f.number == 2) {
        json::value spec = json::object{};
        bool inner = each_field(f.bytes, [&](const field& s) {
          return s.number != 1 || string_list(s.bytes, spec["finalizers"]);
        });
        obj.set("spec", std::move(spec));
        return inner;
      }
      return true;
    });
  } else if (kind == "ConfigMap") {
    ok = each_field(raw, [&](const field& f) {
      switch (f.number) {
      case 1: return meta_field(f);
      case 2: return map_entry(f.bytes, obj["data"], map_value::text);
      case 3: return map_entry(f.bytes, obj["binaryData"], map_value::base64);
      case 4: obj.set("immutable", f.varint != 0); return true;
      default: return true;
      }
    });
  } else if (kind == "Secret") {
    ok = each_field(raw, [&](const field& f) {
      switch (f.number) {
      case 1: return meta_field(f);
      case 2: return map_entry(f.bytes, obj["data"], map_value::base64);
      case 3: obj.set("type", std::string(f.bytes)); return true;
      case 4: return map_entry(f.bytes, obj["stringData"], map_value::text);
      case 5: obj.set("immutable", f.varint != 0); return true;
      default: return true;
      }
    });
  } else if (kind == "ServiceAccount") {
    ok = each_field(raw, [&](const field& f) {
      switch (f.number) {
      case 1: return meta_field(f);
      case 4: obj.set("automountServiceAccountToken", f.varint != 0); return true;
      default: return true;
      }
    });
  } else if (kind == "ResourceQuota") {
    // `kubectl create quota`: spec.hard and spec.scopes.
    ok = each_field(raw, [&](const field& f) {
      if (f.number == 1)
        return meta_field(f);
      if (f.number != 2)
        return true;
      json::value spec = json::object{};
      bool inner = each_field(f.bytes, [&](const field& s) {
        if (s.number == 1)
          return map_entry(s.bytes, spec["hard"], map_value::quantity);
        if (s.number == 2)
          return string_list(s.bytes, spec["scopes"]);
        return true;
      });
      obj.set("spec", std::move(spec));
      return inner;
    });
  } else if (kind == "Role") {
    // `kubectl create role`: rules (verbs, apiGroups, resources, resourceNames, nonResourceURLs).
    ok = each_field(raw, [&](const field& f) {
      if (f.number == 1)
        return meta_field(f);
      if (f.number != 2)
        return true;
      static constexpr const char* keys[] = {"verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"};
      json::value rule = json::object{};
      bool inner = each_field(f.bytes, [&](const field& r) {
        return r.number < 1 || r.number > 5 || string_list(r.bytes, rule[keys[r.number - 1]]);
      });
      append(obj["rules"], std::move(rule));
      return inner;
    });
  } else if (kind == "RoleBinding") {
    // `kubectl create rolebinding`: subjects and roleRef.
    ok = each_field(raw, [&](const field& f) {
      if (f.number == 1)
        return meta_field(f);
      if (f.number != 2 && f.number != 3)
        return true;
      static constexpr const char* subject_keys[] = {"kind", "apiGroup", "name", "namespace"};
      static constexpr const char* ref_keys[] = {"apiGroup", "kind", "name"};
      json::value out = json::object{};
      bool inner = each_field(f.bytes, [&](const field& x) {
        int n = static_cast<int>(x.number);
        if (x.bytes.empty())
          return true; // omitempty, as kube-apiserver writes them back
        if (f.number == 2 && n >= 1 && n <= 4)
          out[subject_keys[n - 1]] = std::string(x.bytes);
        if (f.number == 3 && n >= 1 && n <= 3)
          out[ref_keys[n - 1]] = std::string(x.bytes);
        return true;
      });
      if (f.number == 3)
        obj.set("roleRef", std::move(out));
      else
        append(obj["subjects"], std::move(out));
      return inner;
    });
  } else {
    return error{"the body of the request was in an unknown format - accepted media types include: "
                 "application/json, application/yaml (protobuf is accepted for Namespace, ConfigMap, Secret, "
                 "ServiceAccount, ResourceQuota, Role and RoleBinding only, not " + kind + ")",
                 415, "UnsupportedMediaType"};
  }
  if (!ok)
    return error::bad_request("unable to decode protobuf " + kind + ": malformed wire data");
  return json::value(std::move(obj));
}

} // namespace

expected<json::value> decode_protobuf_object(std::string_view body) {
  if (body.substr(0, k8s::protobuf::magic.size()) != k8s::protobuf::magic)
    return error::bad_request("provided object is not a protobuf-encoded Kubernetes object: missing the k8s magic prefix");
  auto env = k8s::protobuf::open_envelope(body);
  if (!env || env->kind.empty())
    return error::bad_request("unable to decode protobuf envelope: malformed wire data");
  std::string api_version(env->api_version), kind(env->kind);
  std::string_view raw = env->raw;
  auto obj = decode_kind(kind, raw);
  if (!obj)
    return obj;
  json::object out{{"apiVersion", api_version}, {"kind", kind}};
  for (auto& [k, v] : obj->as_object())
    out.set(k, std::move(v));
  return json::value(std::move(out));
}

} // namespace kozmo::apiserver
