// Label key and value validation with the messages of k8s.io/apimachinery/pkg/util/validation.
#include "k8s/model/selector.hpp"

namespace kozmo::k8s {
namespace {

constexpr std::string_view qualified_name_fmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view qualified_name_msg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view label_value_fmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view label_value_msg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view subdomain_fmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view subdomain_msg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";

std::string regex_error(std::string_view msg, std::string_view fmt,
                        std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  out += " (e.g. ";
  bool first = true;
  for (auto e : examples) {
    if (!first)
      out += " or ";
    first = false;
    out += "'";
    out += e;
    out += "', ";
  }
  out += "regex used for validation is '";
  out += fmt;
  out += "')";
  return out;
}

std::string max_len_error(std::size_t n) { return "must be no more than " + std::to_string(n) + " characters"; }

bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool matches_qualified_name(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back()))
    return false;
  for (char c : s)
    if (!is_alnum(c) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

bool matches_subdomain(std::string_view s) {
  if (s.empty())
    return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || !is_lower_alnum(label.front()) || !is_lower_alnum(label.back()))
      return false;
    for (char c : label)
      if (!is_lower_alnum(c) && c != '-')
        return false;
    if (dot == std::string_view::npos)
      return true;
    start = dot + 1;
  }
}

} // namespace

std::vector<std::string> validate_qualified_name(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name = value;
  std::size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back("a qualified name " +
                     regex_error(qualified_name_msg, qualified_name_fmt, {"MyName", "my.name", "123-abc"}) +
                     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > 253)
        errs.push_back("prefix part " + max_len_error(253));
      if (!matches_subdomain(prefix))
        errs.push_back("prefix part " + regex_error(subdomain_msg, subdomain_fmt, {"example.com"}));
    }
  }
  if (name.empty())
    errs.push_back("name part must be non-empty");
  else if (name.size() > 63)
    errs.push_back("name part " + max_len_error(63));
  if (!matches_qualified_name(name))
    errs.push_back("name part " + regex_error(qualified_name_msg, qualified_name_fmt, {"MyName", "my.name", "123-abc"}));
  return errs;
}

std::vector<std::string> validate_label_value(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63)
    errs.push_back(max_len_error(63));
  if (!value.empty() && !matches_qualified_name(value))
    errs.push_back(regex_error(label_value_msg, label_value_fmt, {"MyValue", "my_value", "12345"}));
  return errs;
}

} // namespace kozmo::k8s
