#include "k8s/apiserver/structural.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <regex>
#include <string>

namespace kozmo::apiserver {
namespace {

// ---- defaulting -----------------------------------------------------------------------------

const json::value* member_schema(const json::value& schema, std::string_view key) {
  const json::value* props = schema.find("properties");
  if (const json::value* sub = props && props->is_object() ? props->find(key) : nullptr)
    return sub;
  const json::value* additional = schema.find("additionalProperties");
  return additional && additional->is_object() ? additional : nullptr;
}

// "spec.x" under "spec"; "x" at the root.
std::string child_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// At an object's root, metadata is ObjectMeta's business, never the schema's.
bool outside_schema(std::string_view key, bool root) {
  return root && (key == "metadata" || key == "apiVersion" || key == "kind");
}

// Nulls of fields that are not nullable go, as kube-apiextensions prunes them.
bool drop_nulls(const json::value& schema, json::value& v, bool root = false) {
  bool changed = false;
  if (v.is_object()) {
    auto& members = v.as_object();
    std::vector<std::string> nulls;
    for (auto& [key, child] : members) {
      const json::value* sub = outside_schema(key, root) ? nullptr : member_schema(schema, key);
      if (!sub)
        continue;
      if (child.is_null() && !sub->get_bool("nullable"))
        nulls.push_back(key);
      else
        changed = drop_nulls(*sub, child) || changed;
    }
    for (const auto& k : nulls)
      members.erase(k);
    changed = changed || !nulls.empty();
  } else if (v.is_array()) {
    if (const json::value* items = schema.find("items"); items && items->is_object())
      for (auto& item : v.as_array())
        changed = drop_nulls(*items, item) || changed;
  }
  return changed;
}

// Absent members get their default, then every member (defaulted or not) is defaulted inside.
bool apply_defaults(const json::value& schema, json::value& v, bool root = false) {
  bool changed = false;
  if (v.is_object()) {
    auto& members = v.as_object();
    if (const json::value* props = schema.find("properties"); props && props->is_object())
      for (const auto& [key, sub] : props->as_object())
        if (const json::value* def = sub.find("default"); def && !outside_schema(key, root) && !members.find(key)) {
          members.set(key, *def);
          changed = true;
        }
    for (auto& [key, child] : members)
      if (const json::value* sub = outside_schema(key, root) ? nullptr : member_schema(schema, key))
        changed = apply_defaults(*sub, child) || changed;
  } else if (v.is_array()) {
    if (const json::value* items = schema.find("items"); items && items->is_object())
      for (auto& item : v.as_array())
        changed = apply_defaults(*items, item) || changed;
  }
  return changed;
}

bool has_defaults(const json::value& schema) {
  if (!schema.is_object())
    return false;
  if (schema.find("default"))
    return true;
  if (const json::value* props = schema.find("properties"); props && props->is_object())
    for (const auto& [key, sub] : props->as_object())
      if (has_defaults(sub))
        return true;
  for (std::string_view k : {"items", "additionalProperties"})
    if (const json::value* sub = schema.find(k); sub && has_defaults(*sub))
      return true;
  return false;
}

// ---- validation -----------------------------------------------------------------------------

std::string json_type_name(const json::value& v) {
  switch (v.type()) {
  case json::value::kind::null: return "null";
  case json::value::kind::boolean: return "boolean";
  case json::value::kind::integer: return "integer";
  case json::value::kind::number: return "number";
  case json::value::kind::string: return "string";
  case json::value::kind::array: return "array";
  case json::value::kind::object: return "object";
  }
  return "null";
}

bool integral(const json::value& v) {
  return v.is_int() || (v.is_double() && std::isfinite(v.as_double()) && v.as_double() == std::floor(v.as_double()));
}

bool type_matches(std::string_view want, const json::value& v) {
  if (want == "integer")
    return integral(v);
  if (want == "number")
    return v.is_number();
  if (want == "string")
    return v.is_string();
  if (want == "boolean")
    return v.is_bool();
  if (want == "object")
    return v.is_object();
  if (want == "array")
    return v.is_array();
  return true;
}

std::size_t utf8_length(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Patterns compiled once; matching runs outside the lock (a compiled regex is read-only, and
// map nodes do not move).
bool matches_pattern(const std::string& pattern, const std::string& s) {
  static std::mutex mu;
  static std::map<std::string, std::regex> cache;
  const std::regex* re = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(pattern);
    if (it == cache.end()) {
      try {
        it = cache.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
      } catch (const std::regex_error&) {
        return true;  // a pattern the CRD check would have refused; nothing to hold the value to
      }
    }
    re = &it->second;
  }
  return std::regex_search(s, *re);
}

bool is_base64(const std::string& s) {
  if (s.size() % 4 != 0)
    return false;
  std::size_t pad = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '=') {
      ++pad;
      continue;
    }
    if (pad || !(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/'))
      return false;
  }
  return pad <= 2;
}

// The string formats kube-apiextensions v1.20 checks (others are documentation only).
bool format_ok(const std::string& format, const std::string& s) {
  static const std::regex date_time(
      R"(^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$)");
  static const std::regex date(R"(^\d{4}-\d{2}-\d{2}$)");
  static const std::regex uuid(R"(^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$)");
  if (format == "date-time")
    return std::regex_match(s, date_time);
  if (format == "date")
    return std::regex_match(s, date);
  if (format == "byte")
    return is_base64(s);
  if (format == "uuid" || format == "uuid3" || format == "uuid4" || format == "uuid5")
    return std::regex_match(s, uuid);
  return true;
}

// Go's %#v of a list-map's key values: map[string]interface {}{"k":"a", "n":1}.
std::string go_map_repr(const std::vector<std::pair<std::string, const json::value*>>& keys) {
  auto sorted = keys;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = "map[string]interface {}{";
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    out += (i ? ", " : "") + go_quote(sorted[i].first) + ":";
    const json::value* v = sorted[i].second;
    out += !v ? "interface {}(nil)" : v->is_string() ? go_quote(v->as_string()) : json::dump(*v);
  }
  return out + "}";
}

std::string go_value_repr(const json::value& v) { return v.is_string() ? go_quote(v.as_string()) : json::dump(v); }

class checker {
public:
  explicit checker(std::vector<field_error>& errs) : errs_(errs) {}

  // Value validations of one node. Array items are reported under the array's own path, as the
  // v1.20 validator does; list-type duplicates carry the index.
  void check(const json::value& schema, const json::value& v, const std::string& path) {
    if (!schema.is_object())
      return;
    std::vector<std::string> types;
    if (schema.get_bool("x-kubernetes-int-or-string"))
      types = {"integer", "string"};
    else if (std::string t = schema.get_string("type"); !t.empty())
      types = {t};
    std::string type_list;
    for (const auto& t : types)
      type_list += (type_list.empty() ? "" : ",") + t;
    if (v.is_null()) {
      if (!types.empty() && !schema.get_bool("nullable"))
        errs_.push_back(field_error::invalid(path, "\"null\"", path + " in body must be of type " + type_list + ": \"null\""));
      return;
    }
    if (!types.empty() && std::none_of(types.begin(), types.end(), [&](const std::string& t) { return type_matches(t, v); }))
      errs_.push_back(field_error::invalid(path, go_quote(json_type_name(v)),
                                           path + " in body must be of type " + type_list + ": " + go_quote(json_type_name(v))));
    if (const json::value* en = schema.find("enum"); en && en->is_array() && !en->as_array().empty()) {
      const auto& allowed = en->as_array();
      if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
        std::vector<std::string> names;
        for (const auto& e : allowed)
          names.push_back(e.is_string() ? e.as_string() : json::dump(e));
        errs_.push_back(field_error::not_supported(path, v.is_string() ? v.as_string() : json::dump(v), names));
      }
    }
    if (v.is_string())
      check_string(schema, v.as_string(), path);
    else if (v.is_number())
      check_number(schema, v, path);
    else if (v.is_array())
      check_array(schema, v.as_array(), path);
    else if (v.is_object())
      check_object(schema, v.as_object(), path);
    check_combinators(schema, v, path);
  }

private:
  void check_string(const json::value& schema, const std::string& s, const std::string& path) {
    const std::string value = go_quote(s);
    // One string problem at a time: length before pattern.
    if (const json::value* max = schema.find("maxLength"); max && max->is_int() && utf8_length(s) > static_cast<std::size_t>(max->as_int()))
      errs_.push_back(field_error::invalid(path, value, path + " in body should be at most " + json::dump(*max) + " chars long"));
    else if (const json::value* min = schema.find("minLength"); min && min->is_int() && utf8_length(s) < static_cast<std::size_t>(min->as_int()))
      errs_.push_back(field_error::invalid(path, value, path + " in body should be at least " + json::dump(*min) + " chars long"));
    else if (const json::value* p = schema.find("pattern"); p && p->is_string() && !matches_pattern(p->as_string(), s))
      errs_.push_back(field_error::invalid(path, value, path + " in body should match '" + p->as_string() + "'"));
    if (std::string format = schema.get_string("format"); !format.empty() && !format_ok(format, s))
      errs_.push_back(field_error::invalid(path, value, path + " in body must be of type " + format + ": " + value));
  }

  void check_number(const json::value& schema, const json::value& v, const std::string& path) {
    const double x = v.as_double();
    const std::string value = json::dump(v);
    if (const json::value* m = schema.find("multipleOf"); m && m->is_number() && m->as_double() > 0) {
      double q = x / m->as_double();
      if (q != std::floor(q))
        errs_.push_back(field_error::invalid(path, value, path + " in body should be a multiple of " + json::dump(*m)));
    }
    if (const json::value* max = schema.find("maximum"); max && max->is_number()) {
      bool exclusive = schema.get_bool("exclusiveMaximum");
      if (exclusive ? x >= max->as_double() : x > max->as_double())
        errs_.push_back(field_error::invalid(path, value, path + " in body should be less than " +
                                                              (exclusive ? "" : "or equal to ") + json::dump(*max)));
    }
    if (const json::value* min = schema.find("minimum"); min && min->is_number()) {
      bool exclusive = schema.get_bool("exclusiveMinimum");
      if (exclusive ? x <= min->as_double() : x < min->as_double())
        errs_.push_back(field_error::invalid(path, value, path + " in body should be greater than " +
                                                              (exclusive ? "" : "or equal to ") + json::dump(*min)));
    }
  }

  void check_array(const json::value& schema, const json::array& items, const std::string& path) {
    const std::string count = std::to_string(items.size());
    if (const json::value* max = schema.find("maxItems"); max && max->is_int() && static_cast<std::int64_t>(items.size()) > max->as_int())
      errs_.push_back(field_error::invalid(path, count, path + " in body should have at most " + json::dump(*max) + " items"));
    if (const json::value* min = schema.find("minItems"); min && min->is_int() && static_cast<std::int64_t>(items.size()) < min->as_int())
      errs_.push_back(field_error::invalid(path, count, path + " in body should have at least " + json::dump(*min) + " items"));
    if (const json::value* item_schema = schema.find("items"); item_schema && item_schema->is_object())
      for (const auto& item : items)
        check(*item_schema, item, path);
  }

  void check_object(const json::value& schema, const json::object& members, const std::string& path) {
    if (const json::value* max = schema.find("maxProperties"); max && max->is_int() && static_cast<std::int64_t>(members.size()) > max->as_int())
      errs_.push_back(field_error::invalid(path, json::dump(*max), path + " in body should have at most " + json::dump(*max) + " properties"));
    if (const json::value* min = schema.find("minProperties"); min && min->is_int() && static_cast<std::int64_t>(members.size()) < min->as_int())
      errs_.push_back(field_error::invalid(path, json::dump(*min), path + " in body should have at least " + json::dump(*min) + " properties"));
    if (const json::value* req = schema.find("required"); req && req->is_array())
      for (const auto& r : req->as_array())
        if (r.is_string() && !members.find(r.as_string()))
          errs_.push_back(field_error::required(child_path(path, r.as_string())));
    for (const auto& [key, value] : members)
      if (const json::value* sub = member_schema(schema, key))
        check(*sub, value, child_path(path, key));
  }

  // anyOf / allOf / oneOf / not hold the same value to further schemas (no types of their own
  // in a structural schema); the messages name the node in quotes, under the field "<nil>".
  void check_combinators(const json::value& schema, const json::value& v, const std::string& path) {
    auto branch_errors = [&](const json::value& sub) {
      std::vector<field_error> errs;
      checker(errs).check(sub, v, path);
      return errs;
    };
    auto combinator_error = [&](const std::string& what) {
      errs_.push_back(field_error::invalid("<nil>", "\"\"", go_quote(path) + " " + what));
    };
    auto append = [&](const std::vector<field_error>& more) { errs_.insert(errs_.end(), more.begin(), more.end()); };
    if (const json::value* any = schema.find("anyOf"); any && any->is_array() && !any->as_array().empty()) {
      std::vector<field_error> first;
      bool valid = false;
      for (std::size_t i = 0; i < any->as_array().size() && !valid; ++i) {
        auto errs = branch_errors(any->as_array()[i]);
        valid = errs.empty();
        if (i == 0)
          first = std::move(errs);
      }
      if (!valid) {
        combinator_error("must validate at least one schema (anyOf)");
        append(first);
      }
    }
    if (const json::value* all = schema.find("allOf"); all && all->is_array()) {
      std::vector<field_error> errs;
      for (const auto& sub : all->as_array()) {
        auto e = branch_errors(sub);
        errs.insert(errs.end(), e.begin(), e.end());
      }
      if (!errs.empty()) {
        append(errs);
        combinator_error("must validate all the schemas (allOf)");
      }
    }
    if (const json::value* one = schema.find("oneOf"); one && one->is_array() && !one->as_array().empty()) {
      std::vector<field_error> first;
      int valid = 0;
      for (std::size_t i = 0; i < one->as_array().size(); ++i) {
        auto errs = branch_errors(one->as_array()[i]);
        valid += errs.empty() ? 1 : 0;
        if (i == 0)
          first = std::move(errs);
      }
      if (valid == 0) {
        combinator_error("must validate one and only one schema (oneOf). Found none valid");
        append(first);
      } else if (valid > 1) {
        combinator_error("must validate one and only one schema (oneOf). Found " + std::to_string(valid) +
                         " valid alternatives");
      }
    }
    if (const json::value* no = schema.find("not"); no && no->is_object() && branch_errors(*no).empty())
      combinator_error("must not validate the schema (not)");
  }

  std::vector<field_error>& errs_;
};

// x-kubernetes-list-type set / map: later duplicates are reported at their index.
void check_list_types(const json::value& schema, const json::value& v, const std::string& path,
                      std::vector<field_error>& errs) {
  if (!schema.is_object())
    return;
  if (v.is_object()) {
    for (const auto& [key, value] : v.as_object())
      if (const json::value* sub = member_schema(schema, key))
        check_list_types(*sub, value, child_path(path, key), errs);
    return;
  }
  if (!v.is_array())
    return;
  const auto& items = v.as_array();
  const std::string list_type = schema.get_string("x-kubernetes-list-type");
  if (list_type == "set") {
    for (std::size_t i = 0; i < items.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (items[i] == items[j]) {
          errs.push_back({path + "[" + std::to_string(i) + "]", "FieldValueDuplicate", "Duplicate value: " + go_value_repr(items[i])});
          break;
        }
  } else if (const json::value* keys = schema.find("x-kubernetes-list-map-keys");
             list_type == "map" && keys && keys->is_array()) {
    auto key_of = [&](const json::value& item) {
      std::vector<std::pair<std::string, const json::value*>> out;
      for (const auto& k : keys->as_array())
        if (k.is_string())
          out.emplace_back(k.as_string(), item.find(k.as_string()));
      return out;
    };
    auto same = [](const auto& a, const auto& b) {
      for (std::size_t i = 0; i < a.size(); ++i) {
        const json::value* x = a[i].second;
        const json::value* y = b[i].second;
        if ((x == nullptr) != (y == nullptr) || (x && *x != *y))
          return false;
      }
      return true;
    };
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!items[i].is_object())
        continue;
      auto ki = key_of(items[i]);
      for (std::size_t j = 0; j < i; ++j)
        if (items[j].is_object() && same(ki, key_of(items[j]))) {
          errs.push_back({path + "[" + std::to_string(i) + "]", "FieldValueDuplicate", "Duplicate value: " + go_map_repr(ki)});
          break;
        }
    }
  }
  if (const json::value* item_schema = schema.find("items"); item_schema && item_schema->is_object())
    for (std::size_t i = 0; i < items.size(); ++i)
      check_list_types(*item_schema, items[i], path + "[" + std::to_string(i) + "]", errs);
}

// The checks kube-apiextensions v1.20 makes of a CRD's schema that concern values.
void check_schema_node(const json::value& schema, const std::string& path, std::vector<field_error>& errs) {
  if (!schema.is_object())
    return;
  if (schema.get_bool("uniqueItems"))
    errs.push_back(field_error::forbidden(path + ".uniqueItems",
                                          "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"));
  if (const json::value* def = schema.find("default")) {
    std::vector<field_error> found;
    checker(found).check(schema, *def, "");
    for (auto& e : found) {
      e.field = path + ".default";
      errs.push_back(std::move(e));
    }
  }
  const json::value* items = schema.find("items");
  if (const json::value* keys = schema.find("x-kubernetes-list-map-keys"); keys && keys->is_array() && items && items->is_object()) {
    const json::value* required = items->find("required");
    for (const auto& k : keys->as_array()) {
      if (!k.is_string())
        continue;
      bool is_required = required && required->is_array() &&
                         std::find(required->as_array().begin(), required->as_array().end(), k) != required->as_array().end();
      const json::value* prop = items->at_path({"properties", k.as_string()});
      if (!is_required && !(prop && prop->find("default")))
        errs.push_back(field_error::required(path + ".items.properties[" + k.as_string() + "].default",
                                             "this property is in x-kubernetes-list-map-keys, so it must have a default "
                                             "or be a required property"));
    }
  }
  if (const json::value* props = schema.find("properties"); props && props->is_object())
    for (const auto& [key, sub] : props->as_object())
      check_schema_node(sub, path + ".properties[" + key + "]", errs);
  if (items)
    check_schema_node(*items, path + ".items", errs);
  if (const json::value* additional = schema.find("additionalProperties"); additional && additional->is_object())
    check_schema_node(*additional, path + ".additionalProperties", errs);
}

} // namespace

std::vector<field_error> check_crd_schemas(const json::value& crd) {
  std::vector<field_error> errs;
  const json::value* versions = crd.at_path({"spec", "versions"});
  if (!versions || !versions->is_array())
    return errs;
  const auto& list = versions->as_array();
  // One schema shared by every version is reported where v1.20's internal version keeps it.
  bool shared = !list.empty() && std::all_of(list.begin(), list.end(), [&](const json::value& v) {
    const json::value* a = v.at_path({"schema", "openAPIV3Schema"});
    const json::value* b = list.front().at_path({"schema", "openAPIV3Schema"});
    return a && b && *a == *b;
  });
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json::value* schema = list[i].at_path({"schema", "openAPIV3Schema"});
    if (!schema)
      continue;
    check_schema_node(*schema,
                      shared ? "spec.validation.openAPIV3Schema" : "spec.versions[" + std::to_string(i) + "].schema.openAPIV3Schema",
                      errs);
    if (shared)
      break;
  }
  return errs;
}

bool default_custom_resource(const json::value& schema, json::value& obj) {
  if (!schema.is_object() || !obj.is_object())
    return false;
  const bool dropped = drop_nulls(schema, obj, true);
  return apply_defaults(schema, obj, true) || dropped;
}

std::vector<field_error> check_custom_resource(const json::value& schema, const json::value& obj) {
  std::vector<field_error> errs;
  if (!schema.is_object() || !obj.is_object())
    return errs;
  checker c(errs);
  if (const json::value* req = schema.find("required"); req && req->is_array())
    for (const auto& r : req->as_array())
      if (r.is_string() && !obj.find(r.as_string()))
        errs.push_back(field_error::required(r.as_string()));
  for (const auto& [key, child] : obj.as_object()) {
    if (key == "apiVersion" || key == "kind" || key == "metadata")
      continue;
    if (const json::value* sub = member_schema(schema, key)) {
      c.check(*sub, child, key);
      check_list_types(*sub, child, key, errs);
    }
  }
  return errs;
}

bool schema_has_defaults(const json::value& schema) { return has_defaults(schema); }

} // namespace kozmo::apiserver
