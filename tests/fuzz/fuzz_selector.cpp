// Label and field selectors (k8s/model/selector.hpp): the ?labelSelector= and ?fieldSelector=
// of every LIST and WATCH, and the LabelSelector objects of specs. The first line is tried as a
// label selector and as a field selector, the whole input as a LabelSelector JSON object.
// Properties: a selector's string form parses back to the same selector (kube-apiserver hands
// it on that way), and the three ways to match a label set agree.
#include "k8s/json/value.hpp"
#include "k8s/model/selector.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

using namespace kozmo;

namespace {

const std::map<std::string, std::string>& labels() {
  static const std::map<std::string, std::string> l = {
      {"app", "demo"}, {"tier", "web"}, {"version", "3"}, {"kozmo.io/gpu-type", "V100"},
      {"training.kubeflow.org/job-name", "mnist"}, {"empty", ""}, {"n", "-12"}};
  return l;
}

void check_label(const k8s::label_selector& sel) {
  std::string text = sel.to_string();
  const auto& l = labels();
  k8s::string_map flat;
  json::object obj;
  for (const auto& [k, v] : l) {
    flat.insert_or_assign(k, v);
    obj.set(k, v);
  }
  bool by_map = sel.matches(l);
  fuzz::require(sel.matches(flat) == by_map, "matching a string_map and a std::map agree", text);
  fuzz::require(sel.matches(json::value(obj)) == by_map, "matching JSON labels and a std::map agree", text);
  if (sel.matches_nothing())
    return;
  auto back = k8s::label_selector::parse(text);
  fuzz::require(back.has_value(), "a label selector's string form parses", text);
  fuzz::require(back->to_string() == text, "label selector to_string is a fixed point", text);
  fuzz::require(back->matches(l) == by_map, "the string form matches what the selector matches", text);
}

void check_field(const k8s::field_selector& sel) {
  std::string text = sel.to_string();
  auto lookup = [](std::string_view field) -> std::optional<std::string> {
    if (field == "metadata.name")
      return "pod-1";
    if (field == "spec.nodeName")
      return "node,a=b\\c";
    if (field == "status.phase")
      return "Running";
    return std::nullopt;
  };
  bool matched = sel.matches(lookup);
  auto back = k8s::field_selector::parse(text);
  fuzz::require(back.has_value(), "a field selector's string form parses", text);
  // Not to_string() == text: as in Kubernetes, "==" prints as "=" and terms are sorted as
  // written, so the order may change once. The requirements must be the same.
  auto normal = [](const k8s::field_selector& s) {
    std::vector<std::tuple<std::string, bool, std::string>> out;
    for (const auto& r : s.requirements())
      out.emplace_back(r.field, r.op == k8s::field_operator::not_equals, r.value);
    std::sort(out.begin(), out.end());
    return out;
  };
  fuzz::require(normal(*back) == normal(sel), "a field selector's string form holds the same requirements", text);
  fuzz::require(back->matches(lookup) == matched, "the string form matches what the selector matches", text);
  (void)sel.requires_exact_match("metadata.name");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  auto [line, rest] = fuzz::split_once(text, "\n");
  if (auto sel = k8s::label_selector::parse(line)) {
    check_label(*sel);
    (void)sel->requires_exact_match("app");
  }
  if (auto sel = k8s::field_selector::parse(line))
    check_field(*sel);
  if (auto doc = json::parse(text))
    if (auto sel = k8s::label_selector::from_json(*doc))
      check_label(*sel);
  (void)k8s::validate_qualified_name(line);
  (void)k8s::validate_label_value(line);
  (void)k8s::escape_field_value(line);
  return 0;
}
