// What Kozmo's client reads from an API server's answers: LIST bodies split into batches of
// items while they arrive (k8s/client/list_splitter.hpp for JSON, protobuf_list_splitter.hpp
// for protobuf) and error bodies (status_error.hpp error_from_response). The first byte picks:
// even a JSON list, odd a protobuf list; every input is also read as an error body.
// Property: however the bytes arrive (cut where the input's hash says) and however small the
// batches, the items and the list's metadata read from the batches and the rest are those read
// from the whole answer, when the whole answer decodes.
#include "k8s/client/list_splitter.hpp"
#include "k8s/client/protobuf_list_splitter.hpp"
#include "k8s/client/status_error.hpp"
#include "k8s/model/watch.hpp"
#include "k8s/protobuf_wire.hpp"
#include "tests/fuzz/fuzz_support.hpp"

#include <string>
#include <vector>

using namespace kozmo;

namespace {

std::uint64_t hash_of(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ULL;
  return h;
}

// Feeds `body` in three pieces cut where its hash says.
template <class Splitter>
void feed(Splitter& s, std::string_view body) {
  std::uint64_t h = hash_of(body);
  std::size_t a = body.empty() ? 0 : h % (body.size() + 1);
  std::size_t b = body.empty() ? 0 : (h >> 32) % (body.size() + 1);
  if (a > b)
    std::swap(a, b);
  s.feed(body.substr(0, a));
  s.feed(body.substr(a, b - a));
  s.feed(body.substr(b));
}

void check_json_list(std::string_view body, std::size_t batch_bytes) {
  std::vector<std::string> batches;
  client::list_splitter s([&](std::string batch, std::size_t) { batches.push_back(std::move(batch)); }, batch_bytes);
  feed(s, body);
  std::string rest = s.finish();
  auto whole = k8s::decode_list<k8s::pod>(body);
  std::vector<k8s::pod> items;
  for (const auto& b : batches) {
    auto part = k8s::decode_list<k8s::pod>(b);
    if (!part) {
      fuzz::require(!whole, "every batch of a list that decodes decodes", b);
      return;
    }
    for (auto& p : part->items)
      items.push_back(std::move(p));
  }
  auto meta = k8s::decode_list<k8s::pod>(rest);
  if (!whole)
    return;
  fuzz::require(meta.has_value(), "the rest of a list that decodes decodes", rest);
  fuzz::require(meta->items.empty(), "the rest holds no items", rest);
  fuzz::require(meta->resource_version == whole->resource_version, "the rest keeps the resourceVersion", rest);
  fuzz::require(meta->continue_token == whole->continue_token, "the rest keeps the continue token", rest);
  fuzz::require(items.size() == whole->items.size(), "the batches hold every item");
  fuzz::require(items == whole->items, "the batches hold the same items");
}

// How many raw fields (2) the envelope holds. With more than one, the whole answer's decoder
// takes the last (protobuf's rule for a bytes field) and the splitter streams the first: a real
// API server sends one, so the two are compared only then.
int raw_fields(std::string_view body) {
  int n = 0;
  if (body.substr(0, k8s::protobuf::magic.size()) == k8s::protobuf::magic)
    (void)k8s::protobuf::each_field(body.substr(k8s::protobuf::magic.size()), [&](const k8s::protobuf::field& f) {
      n += f.number == 2 ? 1 : 0;
      return true;
    });
  return n;
}

void check_protobuf_list(std::string_view body, std::size_t batch_bytes) {
  std::vector<std::string> batches;
  client::protobuf_list_splitter s([&](std::string batch, std::size_t) { batches.push_back(std::move(batch)); },
                                   batch_bytes);
  feed(s, body);
  std::string rest = s.finish();
  auto whole = k8s::decode_counted_pod_list_protobuf(body);
  if (raw_fields(body) > 1)
    return;
  std::vector<k8s::pod> items;
  for (const auto& b : batches) {
    auto part = k8s::decode_counted_pod_list_protobuf(b);
    if (!part) {
      fuzz::require(!whole, "every batch of a protobuf list that decodes decodes");
      return;
    }
    for (auto& p : part->items)
      items.push_back(std::move(p));
  }
  if (!whole)
    return;
  // An envelope without a list in it (no raw field) reads as an empty list whole; the splitter
  // calls it malformed. Nothing is lost either way.
  if (rest.empty() && whole->items.empty())
    return;
  auto meta = k8s::decode_counted_pod_list_protobuf(rest);
  fuzz::require(meta.has_value(), "the rest of a protobuf list that decodes decodes");
  fuzz::require(meta->items.empty(), "the rest of a protobuf list holds no items");
  fuzz::require(meta->resource_version == whole->resource_version, "the protobuf rest keeps the resourceVersion");
  fuzz::require(meta->continue_token == whole->continue_token, "the protobuf rest keeps the continue token");
  fuzz::require(items == whole->items, "the protobuf batches hold the same items");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  std::string_view body = fuzz::as_text(data + 1, size - 1);
  // Batches of 1 byte (one item each) up to 128 bytes, and the client's 256 KiB.
  std::size_t batch_bytes = (data[0] >> 1) % 128 + 1;
  if (data[0] % 2 == 0) {
    check_json_list(body, batch_bytes);
    check_json_list(body, 256 * 1024);
  } else {
    check_protobuf_list(body, batch_bytes);
    check_protobuf_list(body, 256 * 1024);
  }
  (void)client::error_from_response(400 + data[0] % 200, "Bad Request", body);
  return 0;
}
