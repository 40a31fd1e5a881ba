// The typed models' decoders (k8s/model/codec.hpp, watch.hpp): the first byte picks the kind
// (or a watch event / list decoder), the rest is the JSON. Three properties besides "no crash":
//   1. the fast decoder (simdjson tape) and the tree decoder (json::value) agree on a document:
//      same answer, same model, as codec.hpp promises ("same rules");
//   2. what decodes, encodes (to_json) to a document that decodes to the same model: to_json
//      builds the objects Kozmo creates, so a field lost here is lost on the API server;
//   3. watch events and lists decode without crashing whatever their objects hold.
#include "k8s/json/value.hpp"
#include "k8s/model/codec.hpp"
#include "k8s/model/watch.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <simdjson.h>

#include <set>
#include <type_traits>

using namespace kozmo;

namespace {

bool duplicates(simdjson::dom::element e) {
  if (e.is_array()) {
    for (auto item : simdjson::dom::array(e))
      if (duplicates(item))
        return true;
    return false;
  }
  if (!e.is_object())
    return false;
  std::set<std::string_view> keys;
  for (auto field : simdjson::dom::object(e))
    if (!keys.insert(field.key).second || duplicates(field.value))
      return true;
  return false;
}

bool has_duplicate_keys(std::string_view text) {
  static thread_local simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  return !parser.parse(padded).get(root) && duplicates(root);
}

template <class T>
void check_model(std::string_view text) {
  auto fast = k8s::decode<T>(text);
  // Not with duplicate keys: the tree keeps the last (as Go's maps do) where the fast decoder
  // reads each in turn (as Go's structs do).
  auto tree = json::parse(text);
  if (tree && !has_duplicate_keys(text)) {
    auto slow = k8s::from_json<T>(*tree);
    if (fast.has_value() != slow.has_value())
      fuzz::property_failed("decode<T> and from_json<T> agree on success", fast ? slow.err().message : fast.err().message);
    if (fast)
      fuzz::require(*fast == *slow, "decode<T> and from_json<T> give the same model");
  }
  if (!fast)
    return;
  std::string encoded = json::dump(k8s::to_json(*fast));
  auto back = k8s::decode<T>(encoded);
  fuzz::require(back.has_value(), "to_json(decode(x)) decodes again", encoded);
  if constexpr (std::is_same_v<T, k8s::custom_object>) {
    // The document gains what to_json lays over it (an empty metadata where there was none);
    // the model's fields stay, and the next round changes nothing.
    fuzz::require(back->metadata == fast->metadata && back->kind == fast->kind && back->api_version == fast->api_version,
                  "decode(to_json(m)) keeps a custom object's metadata, kind and apiVersion", encoded);
    auto again = k8s::decode<T>(json::dump(k8s::to_json(*back)));
    fuzz::require(again.has_value() && *again == *back, "to_json of a custom object settles after a round", encoded);
  } else {
    fuzz::require(*back == *fast, "decode(to_json(m)) == m", encoded);
  }
}

template <class T>
void check_stream(std::string_view text) {
  (void)k8s::decode_watch_event<T>(text);
  (void)k8s::decode_list<T>(text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  std::string_view text = fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 16) {
  case 0: check_model<k8s::pod>(text); break;
  case 1: check_model<k8s::node>(text); break;
  case 2: check_model<k8s::service>(text); break;
  case 3: check_model<k8s::event>(text); break;
  case 4: check_model<k8s::lease>(text); break;
  case 5: check_model<k8s::namespace_object>(text); break;
  case 6: check_model<k8s::pod_template>(text); break;
  case 7: check_model<k8s::custom_object>(text); break;
  case 8: check_model<k8s::api_status>(text); break;
  case 9: check_model<k8s::pod_spec>(text); break;
  case 10: check_model<k8s::object_meta>(text); break;
  case 11: check_model<k8s::pod_template_spec>(text); break;
  case 12:
    check_stream<k8s::pod>(text);
    (void)k8s::decode_counted_pod_event(text);
    (void)k8s::decode_counted_pod_list(text);
    break;
  case 13: check_stream<k8s::node>(text); check_stream<k8s::event>(text); break;
  case 14: check_stream<k8s::custom_object>(text); check_stream<k8s::lease>(text); break;
  default: (void)k8s::decode_watch_event(text); break;
  }
  return 0;
}
