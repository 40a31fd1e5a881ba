// JSON merge patch (RFC 7386) and JSON patch (RFC 6902 with RFC 6901 pointers).
//
// Error wording follows evanphx/json-patch, the library kube-apiserver applies JSON patches
// with. A malformed patch document is a 400; an operation that does not apply is a 422, as
// kube-apiserver answers.
#include "k8s/json/patch.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kozmo::json {

value create_merge_patch(const value& original, const value& modified) {
  if (!original.is_object() || !modified.is_object())
    return modified;
  object out;
  for (const auto& [k, v] : original.as_object()) {
    const value* now = modified.find(k);
    if (!now)
      out.set(k, nullptr);
    else if (*now != v) // a null on both sides is no change (a null in the patch would delete it)
      out.set(k, now->is_null() ? value(nullptr)
                                : v.is_object() && now->is_object() ? create_merge_patch(v, *now) : *now);
  }
  for (const auto& [k, v] : modified.as_object())
    if (!original.find(k) && !v.is_null())
      out.set(k, v);
  return out;
}

value apply_merge_patch(const value& target, const value& patch) {
  if (!patch.is_object())
    return patch;
  object result = target.is_object() ? target.as_object() : object{};
  for (const auto& [key, patch_value] : patch.as_object()) {
    if (patch_value.is_null()) {
      result.erase(key);
      continue;
    }
    const value* current = result.find(key);
    result.set(key, apply_merge_patch(current ? *current : value(), patch_value));
  }
  return result;
}

namespace {

error not_applicable(std::string msg) { return error::invalid(std::move(msg)); }

// RFC 6901: "" is the whole document; otherwise "/"-separated tokens with ~1 → "/" and ~0 → "~".
expected<std::vector<std::string>> parse_pointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty())
    return tokens;
  if (pointer.front() != '/')
    return not_applicable("JSON pointer must be empty or start with a \"/\": \"" + std::string(pointer) + "\"");
  std::string token;
  for (std::size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      tokens.push_back(std::move(token));
      token.clear();
      continue;
    }
    if (pointer[i] != '~') {
      token += pointer[i];
      continue;
    }
    if (i + 1 < pointer.size() && (pointer[i + 1] == '0' || pointer[i + 1] == '1')) {
      token += pointer[i + 1] == '0' ? '~' : '/';
      ++i;
      continue;
    }
    return not_applicable("invalid escape in JSON pointer: \"" + std::string(pointer) + "\"");
  }
  return tokens;
}

// An array index as RFC 6901 writes it: digits, no leading zero, no sign.
std::optional<std::size_t> parse_index(const std::string& token) {
  if (token.empty() || token.size() > 18 || (token.size() > 1 && token[0] == '0'))
    return std::nullopt;
  std::size_t idx = 0;
  for (char c : token) {
    if (c < '0' || c > '9')
      return std::nullopt;
    idx = idx * 10 + static_cast<std::size_t>(c - '0');
  }
  return idx;
}

// The value a pointer names, or nullptr.
value* resolve(value& doc, const std::vector<std::string>& tokens, std::size_t count) {
  value* cur = &doc;
  for (std::size_t i = 0; i < count; ++i) {
    if (cur->is_object()) {
      cur = cur->as_object().find(tokens[i]);
    } else if (cur->is_array()) {
      auto idx = parse_index(tokens[i]);
      if (!idx || *idx >= cur->as_array().size())
        return nullptr;
      cur = &cur->as_array()[*idx];
    } else {
      return nullptr;
    }
    if (!cur)
      return nullptr;
  }
  return cur;
}

value* resolve(value& doc, const std::vector<std::string>& tokens) { return resolve(doc, tokens, tokens.size()); }

std::string quoted(std::string_view path) { return "\"" + std::string(path) + "\""; }

status op_add(value& doc, const std::vector<std::string>& tokens, std::string_view path, value v) {
  if (tokens.empty()) {
    doc = std::move(v);
    return ok;
  }
  value* parent = resolve(doc, tokens, tokens.size() - 1);
  const std::string& last = tokens.back();
  if (parent && parent->is_object()) {
    parent->as_object().set(last, std::move(v));
    return ok;
  }
  if (parent && parent->is_array()) {
    auto& arr = parent->as_array();
    if (last == "-") {
      arr.push_back(std::move(v));
      return ok;
    }
    auto idx = parse_index(last);
    if (!idx || *idx > arr.size())
      return not_applicable("add operation does not apply: invalid array index " + quoted(last) + " in path " +
                            quoted(path));
    arr.insert(arr.begin() + static_cast<std::ptrdiff_t>(*idx), std::move(v));
    return ok;
  }
  return not_applicable("add operation does not apply: doc is missing path: " + quoted(path));
}

// Takes the value out of the document (for remove and move).
expected<value> op_remove(value& doc, const std::vector<std::string>& tokens, std::string_view path,
                          std::string_view op) {
  std::string missing = std::string(op) + " operation does not apply: doc is missing path: " + quoted(path);
  if (tokens.empty())
    return not_applicable(std::string(op) + " operation does not apply: cannot remove the whole document");
  value* parent = resolve(doc, tokens, tokens.size() - 1);
  const std::string& last = tokens.back();
  if (parent && parent->is_object()) {
    value* member = parent->as_object().find(last);
    if (!member)
      return not_applicable(missing);
    value taken = std::move(*member);
    parent->as_object().erase(last);
    return taken;
  }
  if (parent && parent->is_array()) {
    auto& arr = parent->as_array();
    auto idx = parse_index(last);
    if (!idx || *idx >= arr.size())
      return not_applicable(missing);
    value taken = std::move(arr[*idx]);
    arr.erase(arr.begin() + static_cast<std::ptrdiff_t>(*idx));
    return taken;
  }
  return not_applicable(missing);
}

// Nodes of `v`, counting no further than `limit`.
std::size_t count_nodes(const value& v, std::size_t limit) {
  std::size_t n = 1;
  if (v.is_array()) {
    for (const auto& item : v.as_array()) {
      if (n > limit)
        break;
      n += count_nodes(item, limit - n);
    }
  } else if (v.is_object()) {
    for (const auto& [k, item] : v.as_object()) {
      if (n > limit)
        break;
      n += count_nodes(item, limit - n);
    }
  }
  return n;
}

status apply_operation(value& doc, const value& operation, std::size_t& copied) {
  if (!operation.is_object())
    return error::bad_request("json patch operation must be an object, got " + dump(operation));
  std::string op = operation.get_string("op");
  const value* path_v = operation.find("path");
  if (!path_v || !path_v->is_string())
    return not_applicable(op + " operation does not apply: missing \"path\"");
  const std::string& path = path_v->as_string();
  auto tokens = parse_pointer(path);
  if (!tokens)
    return tokens.err();
  const value* v = operation.find("value");
  auto need_value = [&]() -> status {
    if (!v)
      return not_applicable(op + " operation does not apply: missing \"value\" for path " + quoted(path));
    return ok;
  };

  if (op == "add") {
    if (auto st = need_value(); !st)
      return st;
    return op_add(doc, *tokens, path, *v);
  }
  if (op == "remove") {
    auto taken = op_remove(doc, *tokens, path, op);
    if (!taken)
      return taken.err();
    return ok;
  }
  if (op == "replace") {
    if (auto st = need_value(); !st)
      return st;
    value* target = resolve(doc, *tokens);
    if (!target)
      return not_applicable("replace operation does not apply: doc is missing key: " + quoted(path));
    *target = *v;
    return ok;
  }
  if (op == "test") {
    if (auto st = need_value(); !st)
      return st;
    value* target = resolve(doc, *tokens);
    if (!target || !(*target == *v))
      return not_applicable("testing value " + quoted(path) + " failed: test failed");
    return ok;
  }
  if (op == "move" || op == "copy") {
    const value* from_v = operation.find("from");
    if (!from_v || !from_v->is_string())
      return not_applicable(op + " operation does not apply: missing \"from\"");
    const std::string& from = from_v->as_string();
    auto from_tokens = parse_pointer(from);
    if (!from_tokens)
      return from_tokens.err();
    if (op == "move") {
      if (from == path)
        return resolve(doc, *from_tokens) ? status(ok)
                                          : not_applicable("move operation does not apply: doc is missing from path: " +
                                                           quoted(from));
      // RFC 6902 §4.4: a location cannot be moved into one of its children.
      if (path.size() > from.size() && path.compare(0, from.size(), from) == 0 && path[from.size()] == '/')
        return not_applicable("move operation does not apply: cannot move " + quoted(from) + " into its child " +
                              quoted(path));
      auto taken = op_remove(doc, *from_tokens, from, "move");
      if (!taken)
        return not_applicable("move operation does not apply: doc is missing from path: " + quoted(from));
      return op_add(doc, *tokens, path, std::move(*taken));
    }
    value* source = resolve(doc, *from_tokens);
    if (!source)
      return not_applicable("copy operation does not apply: doc is missing from path: " + quoted(from));
    // Copies can double a document per operation: what a patch copies in all is bounded.
    copied += count_nodes(*source, max_json_patch_copied_nodes);
    if (copied > max_json_patch_copied_nodes)
      return not_applicable("copy operation does not apply: the patch's copies would exceed " +
                            std::to_string(max_json_patch_copied_nodes) + " nodes");
    value copy = *source;
    return op_add(doc, *tokens, path, std::move(copy));
  }
  return not_applicable("Unexpected kind: " + (op.empty() ? std::string("unknown") : op));
}

} // namespace

expected<value> apply_json_patch(const value& target, const value& patch) {
  if (!patch.is_array())
    return error::bad_request("json patch must be a JSON array of operations, got " + dump(patch));
  if (patch.as_array().size() > max_json_patch_operations)
    return error{"The allowed maximum operations in a JSON patch is " + std::to_string(max_json_patch_operations) +
                     ", got " + std::to_string(patch.as_array().size()),
                 413, "RequestEntityTooLarge"};
  value doc = target; // all or nothing: the caller's document changes only when every op applies
  std::size_t copied = 0;
  for (const auto& operation : patch.as_array())
    if (auto st = apply_operation(doc, operation, copied); !st)
      return st.err();
  return doc;
}

} // namespace kozmo::json
