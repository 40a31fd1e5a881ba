// Field selectors, as k8s.io/apimachinery/pkg/fields parses them: terms split on unescaped
// commas and sorted, each split at its first operator, values unescaped.
#include "k8s/model/selector.hpp"

#include <algorithm>

namespace kozmo::k8s {
namespace {

std::vector<std::string_view> split_terms(std::string_view s) {
  std::vector<std::string_view> terms;
  if (s.empty())
    return terms;
  std::size_t start = 0;
  bool in_slash = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (in_slash)
      in_slash = false;
    else if (s[i] == '\\')
      in_slash = true;
    else if (s[i] == ',') {
      terms.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.push_back(s.substr(start));
  return terms;
}

expected<std::string> unescape_value(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  bool in_slash = false;
  for (char c : s) {
    if (in_slash) {
      if (c != '\\' && c != ',' && c != '=')
        return error::bad_request(std::string("invalid field selector: invalid escape sequence: \\") + c);
      out.push_back(c);
      in_slash = false;
      continue;
    }
    if (c == '\\')
      in_slash = true;
    else if (c == ',' || c == '=')
      return error::bad_request(std::string("invalid field selector: unescaped character in value: ") + c);
    else
      out.push_back(c);
  }
  if (in_slash)
    return error::bad_request("invalid field selector: invalid escape sequence: \\");
  return out;
}

} // namespace

std::string escape_field_value(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == ',' || c == '=')
      out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

expected<field_selector> field_selector::parse(std::string_view text) {
  auto terms = split_terms(text);
  std::sort(terms.begin(), terms.end());
  field_selector sel;
  for (auto term : terms) {
    if (term.empty())
      continue;
    // The first operator wins; "!=" and "==" are tried before "=" at each position.
    std::size_t at = std::string_view::npos, len = 0;
    field_operator op = field_operator::equals;
    for (std::size_t i = 0; i < term.size() && at == std::string_view::npos; ++i) {
      std::string_view rest = term.substr(i);
      if (rest.starts_with("!=")) {
        at = i, len = 2, op = field_operator::not_equals;
      } else if (rest.starts_with("==")) {
        at = i, len = 2, op = field_operator::double_equals;
      } else if (rest.starts_with("=")) {
        at = i, len = 1, op = field_operator::equals;
      }
    }
    if (at == std::string_view::npos)
      return error::bad_request("invalid selector: '" + std::string(text) + "'; can't understand '" +
                                std::string(term) + "'");
    auto value = unescape_value(term.substr(at + len));
    if (!value)
      return value.err();
    sel.requirements_.push_back({std::string(term.substr(0, at)), op, std::move(*value)});
  }
  return sel;
}

bool field_selector::matches(const std::function<std::optional<std::string>(std::string_view)>& lookup) const {
  for (auto& r : requirements_) {
    std::string have = lookup(r.field).value_or("");
    bool equal = have == r.value;
    if (equal == (r.op == field_operator::not_equals))
      return false;
  }
  return true;
}

status field_selector::check_supported(std::span<const std::string_view> fields) const {
  for (auto& r : requirements_)
    if (std::find(fields.begin(), fields.end(), r.field) == fields.end())
      return error::bad_request("field label not supported: " + r.field);
  return ok;
}

std::optional<std::string> field_selector::requires_exact_match(std::string_view field) const {
  for (auto& r : requirements_)
    if (r.field == field && r.op != field_operator::not_equals)
      return r.value;
  return std::nullopt;
}

std::string field_selector::to_string() const {
  std::string out;
  for (std::size_t i = 0; i < requirements_.size(); ++i) {
    if (i)
      out += ",";
    out += requirements_[i].field;
    out += requirements_[i].op == field_operator::not_equals ? "!=" : "=";
    out += escape_field_value(requirements_[i].value);
  }
  return out;
}

} // namespace kozmo::k8s
