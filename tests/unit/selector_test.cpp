#include "k8s/model/selector.hpp"

#include <catch2/catch.hpp>

#include <array>

using kozmo::k8s::escape_field_value;
using kozmo::k8s::field_selector;
using kozmo::k8s::label_selector;
using kozmo::k8s::selector_operator;
namespace json = kozmo::json;

namespace {

label_selector parse_labels(std::string_view s) {
  auto r = label_selector::parse(s);
  INFO("selector: " << s << (r ? "" : " error: " + r.err().message));
  REQUIRE(r.has_value());
  return *r;
}

std::string label_error(std::string_view s) {
  auto r = label_selector::parse(s);
  INFO("selector: " << s);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.err().code == 400);
  return r.err().message;
}

const std::map<std::string, std::string> demo{{"app", "demo"}, {"tier", "web"}, {"gpu", "8"}};

} // namespace

TEST_CASE("every label selector operator matches as in Kubernetes") {
  CHECK(parse_labels("app=demo").matches(demo));
  CHECK(parse_labels("app==demo").matches(demo));
  CHECK_FALSE(parse_labels("app=other").matches(demo));
  CHECK(parse_labels("app!=other").matches(demo));
  CHECK(parse_labels("missing!=x").matches(demo)); // a missing label is "not equal"
  CHECK(parse_labels("tier in (web,api)").matches(demo));
  CHECK_FALSE(parse_labels("tier in (api)").matches(demo));
  CHECK(parse_labels("tier notin (api)").matches(demo));
  CHECK(parse_labels("missing notin (api)").matches(demo));
  CHECK(parse_labels("app").matches(demo));
  CHECK_FALSE(parse_labels("missing").matches(demo));
  CHECK(parse_labels("!missing").matches(demo));
  CHECK_FALSE(parse_labels("!app").matches(demo));
  CHECK(parse_labels("gpu>4").matches(demo));
  CHECK_FALSE(parse_labels("gpu<4").matches(demo));
  CHECK(parse_labels("app=demo,tier in (web),!canary").matches(demo));
  CHECK_FALSE(parse_labels("app=demo,tier=api").matches(demo));
}

TEST_CASE("label selectors tolerate whitespace and empty values") {
  CHECK(parse_labels("  app = demo ,  tier  in  ( web , api )  ").matches(demo));
  auto empty_value = parse_labels("app=");
  CHECK(empty_value.matches(std::map<std::string, std::string>{{"app", ""}}));
  CHECK_FALSE(empty_value.matches(demo));
  auto empty_set = parse_labels("x in ()");
  REQUIRE(empty_set.requirements().size() == 1);
  CHECK(empty_set.requirements()[0].values == std::vector<std::string>{""});
  CHECK(parse_labels("x in (a,,b)").requirements()[0].values == std::vector<std::string>{"", "a", "b"});
  // "in" and "notin" are values too when they stand in value position.
  CHECK(parse_labels("x in (in,notin)").requirements()[0].values == std::vector<std::string>{"in", "notin"});
}

TEST_CASE("an empty selector matches everything and prints as an empty string") {
  auto all = parse_labels("");
  CHECK(all.empty());
  CHECK(all.matches(demo));
  CHECK(all.to_string().empty());
  CHECK(parse_labels("   ").empty());
}

TEST_CASE("label selectors print sorted by key the way kubectl sends them back") {
  CHECK(parse_labels("tier in (web,api),app=demo,!canary").to_string() == "app=demo,!canary,tier in (api,web)");
  CHECK(parse_labels("b notin (y,x),a==1,c!=2,d>3,e<4,f").to_string() == "a==1,b notin (x,y),c!=2,d>3,e<4,f");
}

TEST_CASE("malformed label selectors fail with kube-apiserver's wording") {
  CHECK(label_error("a in (b") == "unable to parse requirement: found '', expected: ',' or ')'");
  CHECK(label_error("a in b") == "unable to parse requirement: found 'b' expected: '('");
  CHECK(label_error("a=b c") == "found 'c', expected: ',' or 'end of string'");
  CHECK(label_error("a=b,") == "found '', expected: identifier after ','");
  CHECK(label_error(",a") == "found ',', expected: !, identifier, or 'end of string'");
  CHECK(label_error("a b") == "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
  CHECK(label_error("a>x") == "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer");
  CHECK(label_error("!") == "unable to parse requirement: found '', expected: identifier");
  CHECK(label_error("Bad Key=x").starts_with("unable to parse requirement: found 'Key'"));
  CHECK(label_error("-bad=x") ==
        "unable to parse requirement: invalid label key \"-bad\": name part must consist of alphanumeric "
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', "
        " or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  CHECK(label_error("a=-x-") ==
        "unable to parse requirement: invalid label value: \"-x-\": at key: \"a\": a valid label must be an "
        "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  CHECK(label_error("Example.com/a=b").find("prefix part a lowercase RFC 1123 subdomain") != std::string::npos);
}

TEST_CASE("prefixed label keys are valid and long names are refused") {
  CHECK(parse_labels("kozmo.io/gang=g1").matches(std::map<std::string, std::string>{{"kozmo.io/gang", "g1"}}));
  std::string long_key(64, 'a');
  CHECK(label_error(long_key).find("name part must be no more than 63 characters") != std::string::npos);
  CHECK(label_error("a/b/c").find("a qualified name must consist of") != std::string::npos);
}

TEST_CASE("label selectors match a JSON labels object as stored in metadata") {
  auto labels = json::parse(R"({"app":"demo","tier":"web","n":3})");
  REQUIRE(labels.has_value());
  CHECK(parse_labels("app=demo,tier").matches(*labels));
  CHECK_FALSE(parse_labels("n=3").matches(*labels)); // only string values are labels
  CHECK(parse_labels("!missing").matches(json::value{}));
}

TEST_CASE("a LabelSelector object becomes the same selector as its string form") {
  auto obj = json::parse(R"({"matchLabels":{"app":"demo"},
    "matchExpressions":[{"key":"tier","operator":"In","values":["web","api"]},
                        {"key":"canary","operator":"DoesNotExist"},
                        {"key":"gpu","operator":"Exists"},
                        {"key":"zone","operator":"NotIn","values":["z1"]}]})");
  REQUIRE(obj.has_value());
  auto sel = label_selector::from_json(*obj);
  REQUIRE(sel.has_value());
  CHECK(sel->to_string() == "app=demo,!canary,gpu,tier in (api,web),zone notin (z1)");
  CHECK(sel->matches(demo));
  CHECK(*sel == parse_labels("app=demo,!canary,gpu,tier in (api,web),zone notin (z1)"));

  auto everything = label_selector::from_json(json::value(json::object{}));
  REQUIRE(everything.has_value());
  CHECK(everything->empty());
  CHECK(everything->matches(demo));

  auto none = label_selector::from_json(json::value{});
  REQUIRE(none.has_value());
  CHECK(none->matches_nothing());
  CHECK_FALSE(none->matches(demo));

  auto bad_op = json::parse(R"({"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]})");
  auto bad = label_selector::from_json(*bad_op);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.err().message == "\"Gt\" is not a valid label selector operator");

  auto empty_in = json::parse(R"({"matchExpressions":[{"key":"a","operator":"In","values":[]}]})");
  auto bad2 = label_selector::from_json(*empty_in);
  REQUIRE_FALSE(bad2.has_value());
  CHECK(bad2.err().message == "for 'in', 'notin' operators, values set can't be empty");
}

TEST_CASE("requires_exact_match finds the value an index lookup can use") {
  auto sel = parse_labels("app=demo,tier in (web),zone in (a,b)");
  CHECK(sel.requires_exact_match("app") == "demo");
  CHECK(sel.requires_exact_match("tier") == "web");
  CHECK_FALSE(sel.requires_exact_match("zone").has_value());
  CHECK_FALSE(sel.requires_exact_match("other").has_value());
  CHECK(label_selector::from_set({{"a", "1"}, {"b", "2"}}).to_string() == "a=1,b=2");
}

TEST_CASE("field selectors match fields by value, a missing field being empty") {
  auto sel = field_selector::parse("spec.nodeName=n1,status.phase!=Running");
  REQUIRE(sel.has_value());
  std::map<std::string, std::string> pod{{"spec.nodeName", "n1"}, {"status.phase", "Pending"}};
  auto lookup = [&](std::string_view f) -> std::optional<std::string> {
    auto it = pod.find(std::string(f));
    return it == pod.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  CHECK(sel->matches(lookup));
  pod["status.phase"] = "Running";
  CHECK_FALSE(sel->matches(lookup));

  auto unscheduled = field_selector::parse("spec.nodeName=");
  REQUIRE(unscheduled.has_value());
  CHECK_FALSE(unscheduled->matches(lookup));
  pod.erase("spec.nodeName");
  CHECK(unscheduled->matches(lookup));

  auto dbl = field_selector::parse("metadata.name==p1");
  REQUIRE(dbl.has_value());
  CHECK(dbl->requires_exact_match("metadata.name") == "p1");
}

TEST_CASE("field selector values unescape \\, \\= and \\\\ and print escaped and sorted") {
  auto sel = field_selector::parse(R"(metadata.name=a\,b\=c\\d,involvedObject.uid=u1)");
  REQUIRE(sel.has_value());
  REQUIRE(sel->requirements().size() == 2);
  CHECK(sel->requirements()[0].field == "involvedObject.uid");
  CHECK(sel->requirements()[1].value == R"(a,b=c\d)");
  CHECK(sel->to_string() == R"(involvedObject.uid=u1,metadata.name=a\,b\=c\\d)");
  CHECK(field_selector::parse("")->empty());
}

TEST_CASE("a value escaped for a field selector parses back to itself") {
  std::string name = R"(sched,uler=a\b)";
  auto sel = field_selector::parse("spec.schedulerName=" + escape_field_value(name));
  REQUIRE(sel.has_value());
  REQUIRE(sel->requirements().size() == 1);
  CHECK(sel->requirements()[0].value == name);
  CHECK(escape_field_value("kozmo") == "kozmo");
}

TEST_CASE("malformed field selectors fail with kube-apiserver's wording") {
  auto no_op = field_selector::parse("spec.nodeName");
  REQUIRE_FALSE(no_op.has_value());
  CHECK(no_op.err().message == "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'");
  auto bad_escape = field_selector::parse(R"(a=b\x)");
  REQUIRE_FALSE(bad_escape.has_value());
  CHECK(bad_escape.err().message == R"(invalid field selector: invalid escape sequence: \x)");
  auto unescaped = field_selector::parse("a=b=c");
  REQUIRE_FALSE(unescaped.has_value());
  CHECK(unescaped.err().message == "invalid field selector: unescaped character in value: =");
}

TEST_CASE("a field outside the supported list is refused with 'field label not supported'") {
  constexpr std::array<std::string_view, 3> pod_fields{"metadata.name", "spec.nodeName", "status.phase"};
  auto ok = field_selector::parse("spec.nodeName=n1,status.phase=Running");
  REQUIRE(ok.has_value());
  CHECK(ok->check_supported(pod_fields).has_value());
  auto bad = field_selector::parse("spec.nodeName=n1,spec.foo=x");
  REQUIRE(bad.has_value());
  auto st = bad->check_supported(pod_fields);
  REQUIRE_FALSE(st.has_value());
  CHECK(st.err().message == "field label not supported: spec.foo");
  CHECK(st.err().code == 400);
}
