// Strategic merge patch: Kubernetes' own SMP test cases (apimachinery strategicpatch
// patch_test.go, replayed with its MergeItem test struct), the worked examples of
// shared/reference/strategic-merge-patch.md, and what kubectl really sends for built-in kinds.
#include "k8s/json/patch.hpp"
#include "k8s/json/patch_meta.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <string>

using namespace kozmo;
using json::value;
using json::array;
using json::object;
namespace smp = kozmo::json::smp;

namespace {

value j(std::string_view text) {
  auto v = json::parse(text);
  INFO("parsing: " << text);
  REQUIRE(v.has_value());
  return std::move(v).value();
}

// The struct Kubernetes' SMP tests use, with its patch tags.
const smp::patch_schema& merge_item_schema() {
  static const smp::patch_schema schema({
      {"MergeItem",
       {
           {"mergingList", "merge", "name", "MergeItem"},
           {"nonMergingList", "", "", "MergeItem"},
           {"mergingIntList", "merge", "", ""},
           {"nonMergingIntList", "", "", ""},
           {"mergeItemPtr", "merge", "name", "MergeItem"},
           {"simpleMap", "", "", ""},
           {"replacingItem", "replace", "", ""},
           {"retainKeysMap", "retainKeys", "", "RetainKeysMergeItem"},
           {"retainKeysMergingList", "merge,retainKeys", "name", "MergeItem"},
       }},
      {"RetainKeysMergeItem",
       {
           {"simpleMap", "", "", ""},
           {"mergingIntList", "merge", "", ""},
           {"mergingList", "merge", "name", "MergeItem"},
           {"nonMergingList", "", "", "MergeItem"},
       }},
  });
  return schema;
}

struct smp_case {
  const char* name;
  const char* live;
  const char* patch;
  const char* result; // objects compare regardless of key order; lists in order
};

void check_merge_item(const smp_case& c) {
  INFO(c.name << "\nlive:  " << c.live << "\npatch: " << c.patch);
  auto r = smp::apply_strategic_patch(j(c.live), j(c.patch), merge_item_schema(), "MergeItem");
  if (!r)
    FAIL("unexpected error: " << r.err().message);
  INFO("got:   " << json::dump(*r));
  CHECK(*r == j(c.result));
}

// Applies a patch to a built-in kind; the patch must apply.
value smp_apply(std::string_view kind, std::string_view live, std::string_view patch) {
  auto r = json::apply_strategic_patch(j(live), j(patch), kind);
  INFO("kind " << kind << "\nlive:  " << live << "\npatch: " << patch);
  if (!r)
    FAIL("unexpected error: " << r.err().message);
  return std::move(r).value();
}

error smp_error(std::string_view live, std::string_view patch) {
  auto r = smp::apply_strategic_patch(j(live), j(patch), merge_item_schema(), "MergeItem");
  INFO("live:  " << live << "\npatch: " << patch);
  REQUIRE_FALSE(r.has_value());
  CHECK(r.err().code == 400);
  return r.err();
}

} // namespace

TEST_CASE("the worked examples of the SMP reference give the documented results", "[smp]") {
  const smp_case cases[] = {
      {"1. merge by key, plus delete",
       R"({"mergingList":[{"name":1},{"name":2,"other":"b"},{"name":4,"other":"c"}]})",
       R"({"$setElementOrder/mergingList":[{"name":2},{"name":3}],"mergingList":[{"name":3},{"name":1,"$patch":"delete"}]})",
       R"({"mergingList":[{"name":2,"other":"b"},{"name":4,"other":"c"},{"name":3}]})"},
      {"2. a list with no merge strategy is replaced", R"({"nonMergingIntList":[1,2]})", R"({"nonMergingIntList":[2,3]})",
       R"({"nonMergingIntList":[2,3]})"},
      {"3. a primitive set keeps server-only values", R"({"mergingIntList":[1,2,3,4]})",
       R"({"$setElementOrder/mergingIntList":[1,2],"$deleteFromPrimitiveList/mergingIntList":[3]})",
       R"({"mergingIntList":[1,2,4]})"},
      {"4. null inside a merge list removes a field of one element",
       R"({"mergingList":[{"name":1,"value":1,"other":"a"},{"name":2,"value":2,"other":"b"}]})",
       R"({"$setElementOrder/mergingList":[{"name":1},{"name":2}],"mergingList":[{"name":1,"value":null}]})",
       R"({"mergingList":[{"name":1,"other":"a"},{"name":2,"value":2,"other":"b"}]})"},
      {"6. reorder with an order item that matches nothing", R"({"mergingList":[{"name":1},{"name":3}]})",
       R"({"$setElementOrder/mergingList":[{"name":3},{"name":2},{"name":1}],"mergingList":[{"name":3,"value":3},{"name":1,"value":1}]})",
       R"({"mergingList":[{"name":3,"value":3},{"name":1,"value":1}]})"},
      {"live [1,2,3] + patch [3,1] gives [2,3,1]", R"({"mergingList":[{"name":1},{"name":2,"value":"b"},{"name":3}]})",
       R"({"mergingList":[{"name":3,"value":"c"},{"name":1,"value":"a"}]})",
       R"({"mergingList":[{"name":2,"value":"b"},{"name":3,"value":"c"},{"name":1,"value":"a"}]})"},
      {"live [3] + patch [2] with $setElementOrder [2] gives [2,3]", R"({"mergingList":[{"name":3,"other":"a"}]})",
       R"({"$setElementOrder/mergingList":[{"name":2}],"mergingList":[{"name":2},{"name":1,"$patch":"delete"}]})",
       R"({"mergingList":[{"name":2},{"name":3,"other":"a"}]})"},
      {"the in-place quirk: live [1,4] + order [2,3] + delete 1 gives [4,2,3]",
       R"({"mergingList":[{"name":1,"other":"a"},{"name":4,"other":"c"}]})",
       R"({"$setElementOrder/mergingList":[{"name":2},{"name":3}],"mergingList":[{"name":2},{"name":3},{"name":1,"$patch":"delete"}]})",
       R"({"mergingList":[{"name":4,"other":"c"},{"name":2},{"name":3}]})"},
  };
  for (const auto& c : cases)
    check_merge_item(c);
}

TEST_CASE("Kubernetes' three-way SMP cases give Kubernetes' results on the live object", "[smp]") {
  const smp_case cases[] = {
      {"nested patch merge with empty list", R"({"name":"hi","mergingList":[{"name":"hello2"}]})",
       R"({"$setElementOrder/mergingList":[{"name":"hello"},{"name":"doesntexist"}],"mergingList":[{"name":"hello"},{"$patch":"delete","name":"doesntexist"}]})",
       R"({"name":"hi","mergingList":[{"name":"hello"},{"name":"hello2"}]})"},
      {"delete all duplicate items in lists of scalars", R"({"mergingIntList":[1,2,3,3,4]})",
       R"({"$setElementOrder/mergingIntList":[1,2],"$deleteFromPrimitiveList/mergingIntList":[3]})",
       R"({"mergingIntList":[1,2,4]})"},
      {"add and delete items in lists of scalars", R"({"mergingIntList":[1,2,3,4]})",
       R"({"$setElementOrder/mergingIntList":[1,2,4],"$deleteFromPrimitiveList/mergingIntList":[3]})",
       R"({"mergingIntList":[1,2,4]})"},
      {"merge lists of maps", R"({"mergingList":[{"name":1,"other":"a"},{"name":2,"value":2,"other":"b"}]})",
       R"({"$setElementOrder/mergingList":[{"name":4},{"name":1},{"name":2},{"name":3}],"mergingList":[{"name":4,"value":4},{"name":3,"value":3}]})",
       R"({"mergingList":[{"name":4,"value":4},{"name":1,"other":"a"},{"name":2,"value":2,"other":"b"},{"name":3,"value":3}]})"},
      {"merge lists of maps with conflict", R"({"mergingList":[{"name":1,"other":"a"},{"name":2,"value":3,"other":"b"}]})",
       R"({"$setElementOrder/mergingList":[{"name":1},{"name":2},{"name":3}],"mergingList":[{"name":2,"value":2},{"name":3,"value":3}]})",
       R"({"mergingList":[{"name":1,"other":"a"},{"name":2,"value":2,"other":"b"},{"name":3,"value":3}]})"},
      {"add field to map in merging list with conflict",
       R"({"mergingList":[{"name":1,"other":"a"},{"name":3,"value":2,"other":"b"}]})",
       R"({"$setElementOrder/mergingList":[{"name":1},{"name":2}],"mergingList":[{"name":1,"value":1},{"name":2,"value":2}]})",
       R"({"mergingList":[{"name":1,"value":1,"other":"a"},{"name":2,"value":2},{"name":3,"value":2,"other":"b"}]})"},
      {"delete map from merging list", R"({"mergingList":[{"name":1},{"name":2,"other":"b"}]})",
       R"({"$setElementOrder/mergingList":[{"name":2}],"mergingList":[{"name":1,"$patch":"delete"}]})",
       R"({"mergingList":[{"name":2,"other":"b"}]})"},
      {"delete missing map from merging list", R"({"mergingList":[{"name":2,"other":"b"}]})",
       R"({"$setElementOrder/mergingList":[{"name":2}],"mergingList":[{"name":1,"$patch":"delete"}]})",
       R"({"mergingList":[{"name":2,"other":"b"}]})"},
      {"replace non merging list nested in merging list",
       R"({"mergingList":[{"name":1,"other":"a","nonMergingList":[{"name":1},{"name":2,"value":2}]},{"name":2,"other":"b"}]})",
       R"({"$setElementOrder/mergingList":[{"name":1},{"name":2}],"mergingList":[{"name":1,"nonMergingList":[{"name":1,"value":1}]}]})",
       R"({"mergingList":[{"name":1,"other":"a","nonMergingList":[{"name":1,"value":1}]},{"name":2,"other":"b"}]})"},
      {"add field to map in merging list nested in merging list, new order",
       R"({"mergingList":[{"name":1,"other":"a","mergingList":[{"name":2,"value":2,"other":"d"}]},{"name":2,"other":"b"}]})",
       R"({"$setElementOrder/mergingList":[{"name":1},{"name":2}],"mergingList":[{"$setElementOrder/mergingList":[{"name":2},{"name":1}],"name":1,"mergingList":[{"name":1,"value":1}]}]})",
       R"({"mergingList":[{"name":1,"other":"a","mergingList":[{"name":2,"value":2,"other":"d"},{"name":1,"value":1}]},{"name":2,"other":"b"}]})"},
      {"add map to merging list by pointer", R"({"mergeItemPtr":[{"name":1,"other":"a"},{"name":3}]})",
       R"({"$setElementOrder/mergeItemPtr":[{"name":1},{"name":2}],"mergeItemPtr":[{"name":2}]})",
       R"({"mergeItemPtr":[{"name":1,"other":"a"},{"name":2},{"name":3}]})"},
      {"merge lists of scalars", R"({"mergingIntList":[1,2,4]})",
       R"({"$setElementOrder/mergingIntList":[1,2,3],"mergingIntList":[3]})", R"({"mergingIntList":[1,2,3,4]})"},
      {"add an item in a list of primitives and preserve order", R"({"mergingIntList":[1,4,2]})",
       R"({"$setElementOrder/mergingIntList":[3,1,2],"mergingIntList":[3]})", R"({"mergingIntList":[3,1,4,2]})"},
      {"delete an item in a list of primitives and preserve order", R"({"mergingIntList":[1,2,3]})",
       R"({"$setElementOrder/mergingIntList":[2,1],"$deleteFromPrimitiveList/mergingIntList":[3]})",
       R"({"mergingIntList":[2,1]})"},
      {"add and delete an item in a list and preserve order",
       R"({"mergingList":[{"name":1,"other":"a"},{"name":2,"value":2,"other":"b"},{"name":3,"value":3}]})",
       R"({"$setElementOrder/mergingList":[{"name":4},{"name":2},{"name":1}],"mergingList":[{"name":4,"value":4},{"name":3,"$patch":"delete"}]})",
       R"({"mergingList":[{"name":4,"value":4},{"name":2,"value":2,"other":"b"},{"name":1,"other":"a"}]})"},
      {"set elements order in a list with server-only items",
       R"({"mergingList":[{"name":1,"other":"a"},{"name":2,"value":2},{"name":7},{"name":9},{"name":8},{"name":3,"value":3},{"name":4,"value":4}]})",
       R"({"$setElementOrder/mergingList":[{"name":2},{"name":1},{"name":4},{"name":3}]})",
       R"({"mergingList":[{"name":2,"value":2},{"name":1,"other":"a"},{"name":7},{"name":9},{"name":8},{"name":4,"value":4},{"name":3,"value":3}]})"},
      {"set elements order in a int list with server-only items", R"({"mergingIntList":[1,2,7,9,8,3,4]})",
       R"({"$setElementOrder/mergingIntList":[2,1,4,3]})", R"({"mergingIntList":[2,1,7,9,8,4,3]})"},
      {"set element order for a merging list with duplicates",
       R"({"mergingList":[{"name":1},{"name":2,"value":"dup1"},{"name":3},{"name":2,"value":"dup2"},{"name":4}]})",
       R"({"$setElementOrder/mergingList":[{"name":2},{"name":1},{"name":4},{"name":3},{"name":2}]})",
       R"({"mergingList":[{"name":2,"value":"dup1"},{"name":2,"value":"dup2"},{"name":1},{"name":4},{"name":3}]})"},
      {"set element order for a merging int list with duplicates", R"({"mergingIntList":[1,2,3,2,4]})",
       R"({"$setElementOrder/mergingIntList":[2,1,4,3,2]})", R"({"mergingIntList":[2,2,1,4,3]})"},
      {"retainKeys map clears a defaulted field (discriminated union)",
       R"({"retainKeysMap":{"name":"type1","value":"foo"}})",
       R"({"retainKeysMap":{"$retainKeys":["name","other"],"name":"type2","other":"bar"}})",
       R"({"retainKeysMap":{"name":"type2","other":"bar"}})"},
      {"retainKeys map adds an item in nested merging int list", R"({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,3]}})",
       R"({"retainKeysMap":{"$setElementOrder/mergingIntList":[1,2,4],"$retainKeys":["mergingIntList","name"],"mergingIntList":[4]}})",
       R"({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,4,3]}})"},
      {"retainKeys map adds and deletes an item in nested merging int list",
       R"({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,3,4]}})",
       R"({"retainKeysMap":{"$retainKeys":["mergingIntList","name"],"mergingIntList":[5],"$deleteFromPrimitiveList/mergingIntList":[2],"$setElementOrder/mergingIntList":[1,3,5]}})",
       R"({"retainKeysMap":{"name":"foo","mergingIntList":[1,3,5,4]}})"},
      {"retainKeys map deletes nested merging list", R"({"retainKeysMap":{"name":"foo","mergingList":[{"name":"a"},{"name":"b"}]}})",
       R"({"retainKeysMap":{"$retainKeys":["name","value"],"value":"bar","mergingList":null}})",
       R"({"retainKeysMap":{"name":"foo","value":"bar"}})"},
      {"retainKeys list of maps clears a field",
       R"({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"a","other":"x"}]})",
       R"({"$setElementOrder/retainKeysMergingList":[{"name":"bar"},{"name":"foo"}],"retainKeysMergingList":[{"$retainKeys":["name","value"],"name":"foo"}]})",
       R"({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"a"}]})"},
      {"delete and reorder in one list, reorder in another",
       R"({"mergingList":[{"name":"a","value":"a"},{"name":"b","value":"b"}],"mergeItemPtr":[{"name":"c","value":"c"},{"name":"d","value":"d"}]})",
       R"({"$setElementOrder/mergingList":[{"name":"b"}],"$setElementOrder/mergeItemPtr":[{"name":"d"},{"name":"c"}],"mergingList":[{"$patch":"delete","name":"a"}]})",
       R"({"mergingList":[{"name":"b","value":"b"}],"mergeItemPtr":[{"name":"d","value":"d"},{"name":"c","value":"c"}]})"},
      {"replace a field tagged replace and merge a list",
       R"({"name":"my-object","mergingList":[{"name":1},{"name":3}],"replacingItem":{"Some":"Generic","Field":"Period"}})",
       R"({"$setElementOrder/mergingList":[{"name":1},{"name":2}],"mergingList":[{"name":2}],"replacingItem":{"Newly":"Modified"}})",
       R"({"name":"my-object","mergingList":[{"name":1},{"name":2},{"name":3}],"replacingItem":{"Newly":"Modified"}})"},
      {"defined null values overwrite and remove current fields", R"({"name":"a","other":"a"})",
       R"({"name":1,"value":1,"other":null})", R"({"name":1,"value":1})"},
  };
  for (const auto& c : cases)
    check_merge_item(c);
}

TEST_CASE("Kubernetes' hand-written SMP cases give Kubernetes' results", "[smp]") {
  const smp_case cases[] = {
      {"unique scalars when merging lists", R"({"mergingIntList":[1,2]})", R"({"mergingIntList":[2,3]})",
       R"({"mergingIntList":[1,2,3]})"},
      {"delete map from nested map leaves an empty map", R"({"simpleMap":{"key1":1,"key2":1}})",
       R"({"simpleMap":{"$patch":"delete"}})", R"({"simpleMap":{}})"},
      {"delete all items from merging list", R"({"mergingList":[{"name":1},{"name":2}]})",
       R"({"mergingList":[{"$patch":"replace"}]})", R"({"mergingList":[]})"},
      {"merge empty merging lists", R"({"mergingList":[]})", R"({"mergingList":[]})", R"({"mergingList":[]})"},
      {"delete all keys from map", R"({"name":1,"value":1})", R"({"$patch":"replace"})", R"({})"},
      {"add key and delete all keys from map", R"({"name":1,"value":1})", R"({"other":"a","$patch":"replace"})",
       R"({"other":"a"})"},
      {"delete all duplicate entries in a merging list",
       R"({"mergingList":[{"name":1},{"name":1},{"name":2,"value":"a"},{"name":3},{"name":3}]})",
       R"({"mergingList":[{"name":1,"$patch":"delete"},{"name":3,"$patch":"delete"}]})",
       R"({"mergingList":[{"name":2,"value":"a"}]})"},
      {"preserve the order from the patch in a merging list",
       R"({"mergingList":[{"name":1},{"name":2,"value":"b"},{"name":3}]})",
       R"({"mergingList":[{"name":3,"value":"c"},{"name":1,"value":"a"},{"name":2,"other":"x"}]})",
       R"({"mergingList":[{"name":3,"value":"c"},{"name":1,"value":"a"},{"name":2,"value":"b","other":"x"}]})"},
      {"preserve the order from the patch in a merging int list", R"({"mergingIntList":[1,2,3]})",
       R"({"mergingIntList":[3,1,2]})", R"({"mergingIntList":[3,1,2]})"},
      {"preserve the order from the patch in a merging int list 2", R"({"mergingIntList":[1,2,3]})",
       R"({"mergingIntList":[3,1]})", R"({"mergingIntList":[2,3,1]})"},
      {"$setElementOrder with an item missing from the int list", R"({"mergingIntList":[1,3]})",
       R"({"$setElementOrder/mergingIntList":[3,2,1]})", R"({"mergingIntList":[3,1]})"},
      {"$deleteFromPrimitiveList of a missing item adds nothing", R"({"mergingIntList":[1,2]})",
       R"({"$deleteFromPrimitiveList/mergingIntList":[3]})", R"({"mergingIntList":[1,2]})"},
      {"$deleteFromPrimitiveList on a null list adds nothing", R"({"mergingIntList":null})",
       R"({"$deleteFromPrimitiveList/mergingIntList":[3]})", R"({"mergingIntList":null})"},
      {"$deleteFromPrimitiveList on a missing list does not create it", R"({"foo":["bar"]})",
       R"({"$deleteFromPrimitiveList/mergingIntList":[3]})", R"({"foo":["bar"]})"},
      {"$deleteFromPrimitiveList works on a list without merge strategy", R"({"nonMergingIntList":[1,2,3]})",
       R"({"$deleteFromPrimitiveList/nonMergingIntList":[2]})", R"({"nonMergingIntList":[1,3]})"},
      {"retainKeys list can delete a field without a retainKeys directive",
       R"({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"a"}]})",
       R"({"retainKeysMergingList":[{"name":"foo","value":null}]})",
       R"({"retainKeysMergingList":[{"name":"bar"},{"name":"foo"}]})"},
  };
  for (const auto& c : cases)
    check_merge_item(c);
}

TEST_CASE("nulls in a value added under an absent key are dropped, except list elements", "[smp]") {
  const smp_case cases[] = {
      {"discard if modified all nulls", "{}", R"({"complex":{"nested":null}})", R"({"complex":{}})"},
      {"add only not nulls", "{}", R"({"complex":{"nested":null,"nested2":"foo"}})", R"({"complex":{"nested2":"foo"}})"},
      {"filter nulls from nested slices", "{}", R"({"complex_nullable":[{"inner_one":{"key_one":"foo","key_two":null}}]})",
       R"({"complex_nullable":[{"inner_one":{"key_one":"foo"}}]})"},
      {"not filter nulls from non-associative slice", "{}", R"({"complex_nullable":["key1",null,"key2"]})",
       R"({"complex_nullable":["key1",null,"key2"]})"},
      {"null values in original are preserved", R"({"thing":null})", R"({"nested":{"value":5}})",
       R"({"nested":{"value":5},"thing":null})"},
      {"a $patch map under an absent key is not stored", R"({"a":1})", R"({"b":{"$patch":"delete"},"c":[{"$patch":"replace"},1]})",
       R"({"a":1,"c":[1]})"},
  };
  for (const auto& c : cases)
    check_merge_item(c);
}

TEST_CASE("malformed strategic patches are rejected with Kubernetes' messages", "[smp]") {
  CHECK(smp_error(R"({"mergingList":[{"name":1,"value":"a"}]})", R"({"mergingList":[{"value":"b"}]})").message ==
        "map: map[value:b] does not contain declared merge key: name");
  CHECK(smp_error(R"({"mergingList":[{"name":1},{"name":3},{"name":2}]})",
                  R"({"$setElementOrder/mergingList":[{"name":1},{"name":2},{"name":3}],"mergingList":[{"name":3,"value":3},{"name":1,"value":1}]})")
            .message == "the order in patch list:\n[map[name:3 value:3] map[name:1 value:1]]\n doesn't match "
                        "$setElementOrder list:\n[map[name:1] map[name:2] map[name:3]]");
  CHECK(smp_error(R"({"mergingIntList":[1,3,2]})", R"({"$setElementOrder/mergingIntList":[1,2,3],"mergingIntList":[3,1]})")
            .message.find("doesn't match") != std::string::npos);
  CHECK(smp_error(R"({"mergingList":[{"name":1}]})", R"({"mergingList":[{"name":1,"$patch":"merge"}]})").message ==
        "merging lists cannot yet be specified in the patch");
  CHECK(smp_error(R"({"simpleMap":{"a":"b"}})", R"({"simpleMap":{"$patch":"remove"}})").message ==
        "unknown patch type: remove in map: map[$patch:remove]");
  CHECK(smp_error(R"({"mergingList":[{"name":1}]})", R"({"mergingList":[{"name":1,"$patch":"bogus"}]})").message ==
        "unknown patch type: bogus in map: map[$patch:bogus name:1]");
  CHECK(smp_error(R"({"retainKeysMap":{"name":"a"}})", R"({"retainKeysMap":{"$retainKeys":["name"],"value":"x"}})").message ==
        "invalid patch format of retainKeys");
  CHECK(smp_error(R"({"retainKeysMap":{"name":"a"}})", R"({"retainKeysMap":{"$retainKeys":"name"}})").message ==
        "invalid patch format of retainKeys");
  CHECK(smp_error(R"({"mergingList":[{"name":1}]})", R"({"mergingList":[{"$patch":"delete"}]})").message ==
        "map: map[$patch:delete] does not contain declared merge key: name");
  CHECK(smp_error(R"({"mergingList":[{"name":1}]})", R"({"mergingList":["x"]})").message.find(
            "list element types are not identical") == 0);
  CHECK(smp_error(R"({"mergingIntList":[[1]]})", R"({"mergingIntList":[[2]]})").message == "lists of lists are not supported");
  CHECK(smp_error(R"({"mergingIntList":[1]})", R"({"$setElementOrder":[1]})").message ==
        "invalid patch format of setElementOrder list");
  CHECK(smp_error(R"({"mergingIntList":[1]})", R"({"$deleteFromPrimitiveListX/mergingIntList":[1]})").message ==
        "invalid patch format of primitive list");
  CHECK(smp_error("{}", "[1]").message == "json: cannot unmarshal array into Go value of type map[string]interface {}");
}

// ---- built-in kinds ---------------------------------------------------------------------

namespace {

const char* live_pod = R"({
  "apiVersion":"v1","kind":"Pod",
  "metadata":{"name":"p","namespace":"default","uid":"u1","resourceVersion":"7",
    "labels":{"app":"web","extra":"yes"},
    "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"},
    "finalizers":["example.com/a"],
    "ownerReferences":[{"apiVersion":"v1","kind":"ReplicationController","name":"rc","uid":"o1"}]},
  "spec":{
    "containers":[
      {"name":"c","image":"busybox:1.35","command":["sleep","3600"],
       "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
       "ports":[{"containerPort":80,"protocol":"TCP"}],
       "volumeMounts":[{"name":"data","mountPath":"/data"}],
       "terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"},
      {"name":"sidecar","image":"envoy:1"}],
    "volumes":[{"name":"data","emptyDir":{}}],
    "tolerations":[{"key":"a","operator":"Exists"},{"key":"b","operator":"Exists"}],
    "nodeSelector":{"zone":"z1"},
    "restartPolicy":"Always"},
  "status":{"phase":"Pending","conditions":[
    {"type":"Ready","status":"False"},{"type":"PodScheduled","status":"True"}]}})";

} // namespace

TEST_CASE("kubectl apply changing a container image keeps everything else", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod,
                        R"({"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"sidecar"}],"containers":[{"image":"busybox:1.36","name":"c"}]}})");
  value expected = j(live_pod);
  expected["spec"]["containers"].as_array()[0]["image"] = "busybox:1.36";
  CHECK(out == expected);
  // Field order is the live object's, so a GET shows the pod as it was, one value changed.
  CHECK(json::dump(out) == json::dump(expected));
}

TEST_CASE("kubectl apply removing an env var deletes it by name", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod, R"({
    "metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"new\":1}\n"}},
    "spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"sidecar"}],
            "containers":[{"name":"c","$setElementOrder/env":[{"name":"A"}],"env":[{"name":"B","$patch":"delete"}]}]}})");
  const value& c = out.at_path({"spec", "containers"})->as_array()[0];
  CHECK(*c.find("env") == j(R"([{"name":"A","value":"1"}])"));
  CHECK(c.get_string("image") == "busybox:1.35");
  CHECK(out.at_path({"metadata", "annotations"})->get_string("kubectl.kubernetes.io/last-applied-configuration") ==
        "{\"new\":1}\n");
}

TEST_CASE("a label set to null is removed and the others stay", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod, R"({"metadata":{"labels":{"extra":null,"absent":null}}})");
  CHECK(*out.at_path({"metadata", "labels"}) == j(R"({"app":"web"})"));
}

TEST_CASE("env, ports and volume mounts merge by their keys", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod, R"({"spec":{"containers":[{"name":"c",
    "env":[{"name":"B","value":"22"},{"name":"C","value":"3"}],
    "ports":[{"containerPort":80,"name":"http"}],
    "volumeMounts":[{"mountPath":"/data","readOnly":true}]}]}})");
  const value& c = out.at_path({"spec", "containers"})->as_array()[0];
  // A stays ahead of B as it was live; the new C follows the patched items.
  CHECK(*c.find("env") == j(R"([{"name":"A","value":"1"},{"name":"B","value":"22"},{"name":"C","value":"3"}])"));
  CHECK(*c.find("ports") == j(R"([{"containerPort":80,"protocol":"TCP","name":"http"}])"));
  CHECK(*c.find("volumeMounts") == j(R"([{"name":"data","mountPath":"/data","readOnly":true}])"));
  CHECK(out.at_path({"spec", "containers"})->as_array().size() == 2);
}

TEST_CASE("tolerations and command have no merge strategy and are replaced", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod,
                        R"({"spec":{"tolerations":[{"key":"c","operator":"Exists"}],"containers":[{"name":"c","command":["true"]}]}})");
  CHECK(*out.at_path({"spec", "tolerations"}) == j(R"([{"key":"c","operator":"Exists"}])"));
  CHECK(*out.at_path({"spec", "containers"})->as_array()[0].find("command") == j(R"(["true"])"));
}

TEST_CASE("pod conditions merge by type", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod,
                        R"({"status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z"}]}})");
  CHECK(*out.at_path({"status", "conditions"}) ==
        j(R"([{"type":"Ready","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z"},{"type":"PodScheduled","status":"True"}])"));

  value added = smp_apply("Pod", live_pod, R"({"status":{"conditions":[{"type":"Initialized","status":"True"}]}})");
  CHECK(*added.at_path({"status", "conditions"}) ==
        j(R"([{"type":"Initialized","status":"True"},{"type":"Ready","status":"False"},{"type":"PodScheduled","status":"True"}])"));
}

TEST_CASE("finalizers form a set and owner references merge by uid", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod, R"({"metadata":{"finalizers":["example.com/b","example.com/a"],
    "ownerReferences":[{"uid":"o1","controller":true},{"apiVersion":"v1","kind":"Node","name":"n","uid":"o2"}]}})");
  CHECK(*out.at_path({"metadata", "finalizers"}) == j(R"(["example.com/b","example.com/a"])"));
  CHECK(*out.at_path({"metadata", "ownerReferences"}) ==
        j(R"([{"apiVersion":"v1","kind":"ReplicationController","name":"rc","uid":"o1","controller":true},{"apiVersion":"v1","kind":"Node","name":"n","uid":"o2"}])"));

  value removed = smp_apply("Pod", live_pod, R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/a"]}})");
  CHECK(*removed.at_path({"metadata", "finalizers"}) == j("[]"));
}

TEST_CASE("a volume switched with $retainKeys loses its old source (reference example 5)", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod,
                        R"({"spec":{"volumes":[{"name":"data","$retainKeys":["configMap","name"],"configMap":{"name":"cm"}}]}})");
  CHECK(*out.at_path({"spec", "volumes"}) == j(R"([{"name":"data","configMap":{"name":"cm"}}])"));
}

TEST_CASE("deleting a container by name and replacing the whole list both work", "[smp][pod]") {
  value del = smp_apply("Pod", live_pod, R"({"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}})");
  REQUIRE(del.at_path({"spec", "containers"})->as_array().size() == 1);
  CHECK(del.at_path({"spec", "containers"})->as_array()[0].get_string("name") == "c");

  value rep = smp_apply("Pod", live_pod, R"({"spec":{"containers":[{"$patch":"replace"},{"name":"only","image":"x"}]}})");
  CHECK(*rep.at_path({"spec", "containers"}) == j(R"([{"name":"only","image":"x"}])"));
}

TEST_CASE("directives left in appended list elements are not stored", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod, R"({"spec":{
    "volumes":[{"name":"cfg","$retainKeys":["configMap","name"],"configMap":{"name":"cm"}}],
    "containers":[{"name":"new","image":"x","$setElementOrder/env":[{"name":"E"}],"env":[{"name":"E","value":"1"}]}]}})");
  // Without $setElementOrder, items the patch adds come before the live ones it did not name.
  CHECK(*out.at_path({"spec", "volumes"}) == j(R"([{"name":"cfg","configMap":{"name":"cm"}},{"name":"data","emptyDir":{}}])"));
  const auto& containers = out.at_path({"spec", "containers"})->as_array();
  REQUIRE(containers.size() == 3);
  CHECK(containers[0] == j(R"({"name":"new","image":"x","env":[{"name":"E","value":"1"}]})"));
}

TEST_CASE("maps such as nodeSelector merge key by key", "[smp][pod]") {
  value out = smp_apply("Pod", live_pod, R"({"spec":{"nodeSelector":{"gpu":"a100"}}})");
  CHECK(*out.at_path({"spec", "nodeSelector"}) == j(R"({"zone":"z1","gpu":"a100"})"));
}

TEST_CASE("kubectl cordon and uncordon set and remove spec.unschedulable", "[smp][node]") {
  const char* node = R"({"kind":"Node","metadata":{"name":"n1"},"spec":{"podCIDR":"10.0.0.0/24","podCIDRs":["10.0.0.0/24"]}})";
  value cordoned = smp_apply("Node", node, R"({"spec":{"unschedulable":true}})");
  CHECK(cordoned.at_path({"spec", "unschedulable"})->as_bool());
  value uncordoned = smp_apply("Node", json::dump(cordoned), R"({"spec":{"unschedulable":null}})");
  CHECK(uncordoned == j(node));
}

TEST_CASE("node addresses and conditions merge by type, taints are replaced", "[smp][node]") {
  value out = smp_apply("Node", R"({"spec":{"taints":[{"key":"a","effect":"NoSchedule"}]},"status":{
      "addresses":[{"type":"InternalIP","address":"10.0.0.1"},{"type":"Hostname","address":"n1"}],
      "conditions":[{"type":"Ready","status":"True"},{"type":"MemoryPressure","status":"False"}]}})",
                        R"({"spec":{"taints":[]},"status":{"addresses":[{"type":"InternalIP","address":"10.0.0.2"}],
      "conditions":[{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}})");
  CHECK(*out.at_path({"spec", "taints"}) == j("[]"));
  CHECK(*out.at_path({"status", "addresses"}) ==
        j(R"([{"type":"InternalIP","address":"10.0.0.2"},{"type":"Hostname","address":"n1"}])"));
  CHECK(*out.at_path({"status", "conditions"}) ==
        j(R"([{"type":"Ready","status":"False","reason":"KubeletNotReady"},{"type":"MemoryPressure","status":"False"}])"));
}

TEST_CASE("a pod template merges its containers by name under template.spec", "[smp][podtemplate]") {
  value out = smp_apply("PodTemplate",
                        R"({"metadata":{"name":"t"},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"w","image":"x:1","env":[{"name":"E","value":"1"}]}]}}})",
                        R"({"template":{"spec":{"containers":[{"name":"w","env":[{"name":"F","value":"2"}]}]}}})");
  CHECK(*out.at_path({"template", "spec", "containers"}) ==
        j(R"([{"name":"w","image":"x:1","env":[{"name":"F","value":"2"},{"name":"E","value":"1"}]}])"));
}

TEST_CASE("service ports merge by port and config map data merges by key", "[smp][service]") {
  value svc = smp_apply("Service", R"({"spec":{"ports":[{"port":80,"targetPort":8080},{"port":443}],"selector":{"app":"a"}}})",
                        R"({"spec":{"ports":[{"port":80,"targetPort":9090}],"selector":{"tier":"t"}}})");
  CHECK(*svc.at_path({"spec", "ports"}) == j(R"([{"port":80,"targetPort":9090},{"port":443}])"));
  CHECK(*svc.at_path({"spec", "selector"}) == j(R"({"app":"a","tier":"t"})"));

  value cm = smp_apply("ConfigMap", R"({"metadata":{"name":"cm"},"data":{"k":"v1","old":"x"}})",
                       R"({"data":{"k":"v2","old":null},"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}}})");
  CHECK(cm == j(R"({"metadata":{"name":"cm","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},"data":{"k":"v2"}})"));
}

TEST_CASE("a whole object can be replaced with a top-level $patch", "[smp]") {
  value out = smp_apply("ConfigMap", R"({"metadata":{"name":"cm"},"data":{"k":"v"}})",
                        R"({"$patch":"replace","metadata":{"name":"cm"},"data":{"n":"w"}})");
  CHECK(out == j(R"({"metadata":{"name":"cm"},"data":{"n":"w"}})"));
}

TEST_CASE("fields the metadata table does not know merge as maps and replace as lists", "[smp]") {
  value out = smp_apply("Pod", R"({"spec":{"x-extension":{"items":[{"name":"a"}],"keep":1}}})",
                        R"({"spec":{"x-extension":{"items":[{"name":"b"}]}}})");
  CHECK(*out.at_path({"spec", "x-extension"}) == j(R"({"items":[{"name":"b"}],"keep":1})"));
}

TEST_CASE("strategic merge patch is offered for built-in kinds only", "[smp]") {
  for (const char* kind : {"Pod", "Node", "Service", "ConfigMap", "Secret", "Namespace", "Event", "PodTemplate", "Lease",
                           "Endpoints", "ServiceAccount"})
    CHECK(json::strategic_patch_supported(kind));
  CHECK_FALSE(json::strategic_patch_supported("PyTorchJob"));
  CHECK_FALSE(json::strategic_patch_supported("Gizmo"));
  CHECK_FALSE(json::strategic_patch_supported("PodSpec"));
  auto r = json::apply_strategic_patch(j("{}"), j(R"({"spec":{"size":2}})"), "Gizmo");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.err().code == 415);
}

TEST_CASE("a missing merge key in a pod patch is a bad request naming the key", "[smp][pod]") {
  auto r = json::apply_strategic_patch(j(live_pod), j(R"({"spec":{"containers":[{"image":"httpd"}]}})"), "Pod");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.err().code == 400);
  CHECK(r.err().message == "map: map[image:httpd] does not contain declared merge key: name");
}

namespace {

// Random documents for the oracle test: nested maps, lists of scalars and maps, and (in patches)
// nulls as map members. No "$" keys, and no nulls inside lists, where the two kinds of patch
// are documented to differ.
value random_doc(std::mt19937& rng, int depth, bool patch) {
  std::uniform_int_distribution<int> pick(0, 9);
  int what = depth <= 0 ? pick(rng) % 4 : pick(rng);
  switch (what) {
  case 0: return static_cast<int>(rng() % 5);
  case 1: return std::string(1, static_cast<char>('a' + rng() % 4));
  case 2: return rng() % 2 == 0;
  case 3: return patch ? value() : value(1.5);
  case 4:
  case 5: {
    array a;
    for (int i = static_cast<int>(rng() % 3); i > 0; --i) {
      value item = random_doc(rng, depth - 1, false);
      a.push_back(item.is_null() ? value(0) : item);
    }
    return a;
  }
  default: {
    object o;
    for (int i = static_cast<int>(rng() % 4); i > 0; --i)
      o.set(std::string(1, static_cast<char>('k' + rng() % 5)), random_doc(rng, depth - 1, patch));
    return o;
  }
  }
}

} // namespace

TEST_CASE("on fields without patch tags a strategic patch does what a JSON merge patch does", "[smp][oracle]") {
  std::mt19937 rng(20240611);
  for (int round = 0; round < 3000; ++round) {
    value live = random_doc(rng, 4, false);
    value patch = random_doc(rng, 4, true);
    if (!live.is_object() || !patch.is_object())
      continue;
    auto smp_result = json::apply_strategic_patch(live, patch, "ConfigMap");
    INFO("live:  " << json::dump(live) << "\npatch: " << json::dump(patch));
    REQUIRE(smp_result.has_value());
    CHECK(*smp_result == json::apply_merge_patch(live, patch));
  }
}
