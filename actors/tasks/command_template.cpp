#include "actors/tasks/command_template.hpp"

#include "k8s/text.hpp"

#include <cctype>

namespace kozmo::tasks {
namespace {

using text::iequals;

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'; }

constexpr const char* known_names =
    "Input, InputPrefix, OutputPrefix, RawOutputDataPrefix, CheckpointOutputPrefix, PrevCheckpointPrefix, "
    "PerRetryUniqueKey, TaskTemplatePath, Namespace, Inputs.<name>";

// The peer's PerRetryUniqueKey is an identifier: a leading run of characters that cannot start
// one becomes "a", and every other run of characters outside [A-Za-z0-9_] one "_".
std::string as_identifier(const std::string& key) {
  std::string out;
  std::size_t i = 0;
  auto starts = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (i < key.size() && !starts(key[i])) {
    while (i < key.size() && !starts(key[i]))
      ++i;
    out += 'a';
  }
  while (i < key.size()) {
    if (word(key[i])) {
      out += key[i++];
      continue;
    }
    while (i < key.size() && !word(key[i]))
      ++i;
    out += '_';
  }
  return out;
}

expected<std::string> lookup(std::string_view name, const template_values& v) {
  struct row {
    const char* name;
    const std::string* value;
  };
  const row rows[] = {{"Input", &v.input},
                      {"InputPrefix", &v.input_prefix},
                      {"OutputPrefix", &v.output_prefix},
                      {"RawOutputDataPrefix", &v.raw_output_data_prefix},
                      {"CheckpointOutputPrefix", &v.checkpoint_output_prefix},
                      {"TaskTemplatePath", &v.task_template_path},
                      {"Namespace", &v.namespace_}};
  for (const auto& r : rows)
    if (iequals(name, r.name))
      return *r.value;
  if (iequals(name, "PerRetryUniqueKey"))
    return as_identifier(v.per_retry_unique_key);
  // An empty previous checkpoint renders as an empty quoted string, so that a flag followed
  // by it still gets an argument ("--prev-checkpoint ''").
  if (iequals(name, "PrevCheckpointPrefix"))
    return v.prev_checkpoint_prefix.empty() ? std::string("\"\"") : v.prev_checkpoint_prefix;
  if (name.size() > 7 && iequals(name.substr(0, 7), "Inputs.")) {
    std::string_view input = name.substr(7);
    for (const auto& [k, value] : v.inputs)
      if (iequals(k, input))
        return value;
    std::string have;
    for (const auto& [k, _] : v.inputs)
      have += (have.empty() ? "" : ", ") + k;
    return error::invalid("{{ ." + std::string(name) + " }}: the task has no input named \"" + std::string(input) +
                          "\" (spec.inputs has: " + (have.empty() ? "none" : have) + ")");
  }
  return error::invalid("{{ ." + std::string(name) + " }}: unknown template variable (known: " + known_names + ")");
}

} // namespace

expected<std::string> render_template(std::string_view text, const template_values& values) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t open = text.find("{{", i);
    if (open == std::string_view::npos)
      break;
    out.append(text.substr(i, open - i));
    std::size_t p = open + 2;
    while (p < text.size() && text[p] == ' ')
      ++p;
    bool variable = p < text.size() && (text[p] == '.' || text[p] == '$');
    std::size_t name_start = p + 1, name_end = name_start;
    while (variable && name_end < text.size() && is_name_char(text[name_end]))
      ++name_end;
    std::size_t q = name_end;
    while (q < text.size() && text[q] == ' ')
      ++q;
    if (!variable || name_end == name_start || text.compare(q, 2, "}}") != 0) {
      out.append("{{"); // not a variable: keep the braces and go on after them
      i = open + 2;
      continue;
    }
    std::string_view name = text.substr(name_start, name_end - name_start);
    auto value = lookup(name, values);
    if (!value)
      return value.err();
    // A prefix may name the namespace itself ("s3://bucket/{{ .Namespace }}"), as the peer allows.
    if (!iequals(name, "Namespace") && value->find("{{") != std::string::npos) {
      template_values only_ns;
      only_ns.namespace_ = values.namespace_;
      if (auto expanded = render_template(*value, only_ns))
        *value = std::move(*expanded);
    }
    out += *value;
    i = q + 2;
  }
  if (i < text.size())
    out.append(text.substr(i));
  return out;
}

expected<std::vector<std::string>> render_all(const std::vector<std::string>& list, const template_values& values,
                                              std::string_view field) {
  std::vector<std::string> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto r = render_template(list[i], values);
    if (!r)
      return error::invalid(std::string(field) + "[" + std::to_string(i) + "]: " + r.err().message);
    out.push_back(std::move(*r));
  }
  return out;
}

} // namespace kozmo::tasks
