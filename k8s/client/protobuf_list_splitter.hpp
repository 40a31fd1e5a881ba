// list_splitter for a LIST answered in protobuf (Content-Type application/vnd.kubernetes.protobuf):
// the items of the list message inside the envelope ("k8s\0" + runtime.Unknown {1: typeMeta,
// 2: raw}; k8s/protobuf_wire.hpp) are handed over in batches while the bytes arrive.
//
// A batch is an envelope of its own whose raw holds a run of the list's items (field 2 of every
// Kubernetes List message), which a List decoder reads as a list without metadata. The rest is
// the answer without its items: the envelope with the type and the list's metadata (the
// resourceVersion and continue token). Chunk boundaries may fall anywhere, also inside a key or
// a length. On malformed data the rest is empty, which no decoder takes for an answer.
#pragma once

#include "k8s/client/list_splitter.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kozmo::client {

class protobuf_list_splitter {
public:
  using batch_fn = list_splitter::batch_fn;

  explicit protobuf_list_splitter(batch_fn on_batch, std::size_t batch_bytes = 256 * 1024);

  void feed(std::string_view data);
  // The end of the answer: hands over the last batch and returns the rest ("" when the answer
  // was not a complete protobuf envelope).
  std::string finish();

private:
  // Where the next byte goes.
  enum class state {
    magic,    // the four bytes "k8s\0"
    key,      // a field's key (a varint)
    length,   // a length-delimited field's length (a varint)
    varint,   // a varint field's value
    fixed,    // a fixed 32/64-bit value
    payload,  // a length-delimited field's bytes
    bad,      // malformed: everything else is ignored
  };
  void read_bytes(const char*& p, const char* end);
  void end_field();
  void close_batch();
  void emit(std::string_view bytes); // where the current field's bytes are kept

  batch_fn on_batch_;
  std::size_t batch_bytes_;
  state state_ = state::magic;
  bool in_list_ = false;          // inside raw (the list message), not the envelope
  std::uint64_t list_left_ = 0;   // bytes of raw still to come
  bool saw_list_ = false;
  std::uint64_t acc_ = 0;         // the varint being read
  int shift_ = 0;
  std::uint32_t number_ = 0;      // the current field
  std::uint64_t left_ = 0;        // bytes of the current payload or fixed value still to come
  std::string head_;              // the current field's key and length, as they came
  enum class sink { drop, type_meta, batch, meta } sink_ = sink::drop;

  std::string type_meta_;         // the envelope's field 1, whole
  std::string meta_;              // the list's fields other than items, whole
  std::string batch_;
  std::size_t batch_count_ = 0;
};

} // namespace kozmo::client
