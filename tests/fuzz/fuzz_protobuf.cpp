// Kubernetes protobuf (application/vnd.kubernetes.protobuf): the wire reader
// (k8s/protobuf_wire.hpp: reader, each_field, open_envelope, time_seconds), the pod lists a
// real API server answers in protobuf (k8s/model/watch.hpp decode_counted_pod_list_protobuf)
// and the request bodies kubectl's generators send the embedded API server
// (k8s/apiserver/body_codec.hpp decode_protobuf_object). Every input goes through all of them;
// an input that does not start with "k8s\0" is also tried with the prefix added, so that the
// mutations of a seed's message reach the decoders.
// Properties: the reader never hands out bytes outside the message and stops at malformed
// data; a decoded body is a JSON object that dumps to valid JSON.
#include "k8s/apiserver/body_codec.hpp"
#include "k8s/json/value.hpp"
#include "k8s/model/watch.hpp"
#include "k8s/protobuf_wire.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <string>

using namespace kozmo;
namespace pb = k8s::protobuf;

namespace {

// Every field, and every length-delimited field again as a message of its own, to `depth`.
void walk(std::string_view data, int depth) {
  pb::reader r(data);
  pb::field f;
  while (r.next(f)) {
    fuzz::require(f.wire == pb::wire_varint || f.wire == pb::wire_bytes || f.wire == pb::wire_fixed32 ||
                      f.wire == pb::wire_fixed64,
                  "the reader hands out only the wire types it knows");
    if (f.wire != pb::wire_bytes)
      continue;
    fuzz::require(f.bytes.data() >= data.data() && f.bytes.data() + f.bytes.size() <= data.data() + data.size(),
                  "a field's bytes lie inside its message");
    if (depth > 0)
      walk(f.bytes, depth - 1);
  }
  std::size_t count = 0;
  bool whole = pb::each_field(data, [&](const pb::field&) { return ++count < 1000000; });
  fuzz::require(whole != r.failed() || count >= 1000000, "each_field and reader agree on malformed data");
  (void)pb::time_seconds(data);
}

void decode_body(std::string_view body) {
  if (auto env = pb::open_envelope(body)) {
    fuzz::require(env->raw.data() == nullptr ||
                      (env->raw.data() >= body.data() && env->raw.data() + env->raw.size() <= body.data() + body.size()),
                  "the envelope's raw bytes lie inside the body");
  }
  std::vector<std::string> skipped;
  (void)k8s::decode_counted_pod_list_protobuf(body, &skipped);
  if (auto obj = apiserver::decode_protobuf_object(body)) {
    fuzz::require(obj->is_object(), "a decoded protobuf body is a JSON object");
    std::string text = json::dump(*obj);
    fuzz::require(json::parse(text).has_value(), "a decoded protobuf body dumps to valid JSON", text);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input = fuzz::as_text(data, size);
  walk(input, 8);
  decode_body(input);
  if (!input.starts_with(pb::magic)) {
    std::string body(pb::magic);
    body.append(input);
    decode_body(body);
  }
  return 0;
}
