// Just enough of the protobuf wire format for the objects kubectl's generators send.
// Field numbers are those of k8s.io/api/core/v1/generated.proto and
// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto.
#include "k8s/apiserver/body_codec.hpp"
#include "k8s/apiserver/request_util.hpp"
#include "k8s/apiserver/store.hpp"

#include <cstdint>
#include <functional>
#include <optional>

namespace kozmo::apiserver {
namespace {

struct field {
  std::uint32_t number = 0;
  int wire = 0;
  std::uint64_t varint = 0;
  std::string_view bytes;
};

class reader {
public:
  explicit reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  std::optional<std::uint64_t> varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size())
        return std::nullopt;
      auto b = static_cast<unsigned char>(data_[pos_++]);
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80))
        return v;
    }
    return std::nullopt;
  }

  std::optional<field> next() {
    auto key = varint();
    if (!key)
      return std::nullopt;
    field f;
    f.number = static_cast<std::uint32_t>(*key >> 3);
    f.wire = static_cast<int>(*key & 7);
    switch (f.wire) {
    case 0: {
      auto v = varint();
      if (!v)
        return std::nullopt;
      f.varint = *v;
      return f;
    }
    case 1:
      if (pos_ + 8 > data_.size())
        return std::nullopt;
      pos_ += 8;
      return f;
    case 5:
      if (pos_ + 4 > data_.size())
        return std::nullopt;
      pos_ += 4;
      return f;
    case 2: {
      auto len = varint();
      if (!len || pos_ + *len > data_.size())
        return std::nullopt;
      f.bytes = data_.substr(pos_, *len);
      pos_ += *len;
      return f;
    }
    default:
      return std::nullopt;
    }
  }

private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

using handler = std::function<bool(const field&)>;

bool each_field(std::string_view data, const handler& h) {
  reader r(data);
  while (!r.done()) {
    auto f = r.next();
    if (!f || !h(*f))
      return false;
  }
  return true;
}

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

std::optional<std::int64_t> time_seconds(std::string_view data) {
  std::int64_t seconds = 0;
  if (!each_field(data, [&](const field& f) {
        if (f.number == 1)
          seconds = static_cast<std::int64_t>(f.varint);
        return true;
      }))
    return std::nullopt;
  return seconds;
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
  static constexpr std::string_view magic("k8s\0", 4);
  if (body.substr(0, 4) != magic)
    return error::bad_request("provided object is not a protobuf-encoded Kubernetes object: missing the k8s magic prefix");
  std::string api_version, kind;
  std::string_view raw;
  bool ok = each_field(body.substr(4), [&](const field& f) {
    if (f.number == 1)
      return each_field(f.bytes, [&](const field& t) {
        if (t.number == 1)
          api_version = std::string(t.bytes);
        else if (t.number == 2)
          kind = std::string(t.bytes);
        return true;
      });
    if (f.number == 2)
      raw = f.bytes;
    return true;
  });
  if (!ok || kind.empty())
    return error::bad_request("unable to decode protobuf envelope: malformed wire data");
  auto obj = decode_kind(kind, raw);
  if (!obj)
    return obj;
  json::object out{{"apiVersion", api_version}, {"kind", kind}};
  for (auto& [k, v] : obj->as_object())
    out.set(k, std::move(v));
  return json::value(std::move(out));
}

} // namespace kozmo::apiserver
