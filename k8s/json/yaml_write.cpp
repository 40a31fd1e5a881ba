// JSON trees written as YAML the way `kubectl get -o yaml` prints them: block mappings and
// sequences, plain scalars where YAML reads them back as the same string, quoted otherwise.
#include "k8s/json/value.hpp"

#include <cctype>
#include <string>

namespace kozmo::json {

namespace {

// A string YAML reads back as the same string when written plain: letters, digits and a few
// marks, not starting with one that means something else, and not a word YAML 1.1 types.
bool plain_ok(const std::string& s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ' || std::isdigit(static_cast<unsigned char>(s[0])) ||
      s[0] == '-' || s[0] == '.')
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' && c != '/' && c != ' ')
      return false;
  std::string lower;
  for (char c : s)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"true", "false", "yes", "no", "on", "off", "y", "n", "null"})
    if (lower == word)
      return false;
  return true;
}

std::string yaml_scalar(const value& v) {
  if (v.is_string()) {
    if (plain_ok(v.as_string()))
      return v.as_string();
    std::string quoted;
    write_string(quoted, v.as_string());
    return quoted;
  }
  return dump(v); // numbers, booleans, null
}

bool is_collection(const value& v) {
  return (v.is_object() && !v.as_object().empty()) || (v.is_array() && !v.as_array().empty());
}

void write_yaml(std::string& out, const value& v, std::size_t indent);

// One mapping entry or sequence item whose value starts after `lead` ("key:" or "-").
void write_member(std::string& out, const std::string& lead, const value& v, std::size_t indent) {
  if (!is_collection(v)) {
    out += lead + " " + (v.is_object() ? "{}" : v.is_array() ? "[]" : yaml_scalar(v)) + "\n";
    return;
  }
  out += lead + "\n";
  // kubectl's look: a list under a key at the key's own indent, a mapping two further in.
  write_yaml(out, v, v.is_array() && lead != "-" ? indent : indent + 2);
}

void write_yaml(std::string& out, const value& v, std::size_t indent) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    for (const auto& [key, member] : v.as_object())
      write_member(out, pad + yaml_scalar(value(key)) + ":", member, indent);
    return;
  }
  for (const auto& item : v.as_array()) {
    if (item.is_object() && !item.as_object().empty()) {
      // "- " then the mapping, its first key on the dash's line.
      std::string nested;
      write_yaml(nested, item, indent + 2);
      out += pad + "- " + nested.substr(indent + 2);
      continue;
    }
    write_member(out, pad + "-", item, indent);
  }
}

} // namespace

std::string dump_yaml(const value& v) {
  if (!is_collection(v))
    return (v.is_object() ? std::string("{}") : v.is_array() ? std::string("[]") : yaml_scalar(v)) + "\n";
  std::string out;
  write_yaml(out, v, 0);
  return out;
}

} // namespace kozmo::json
