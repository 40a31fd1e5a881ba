// Splits a LIST answer ({"kind":..,"metadata":{..},"items":[{..},{..}]}) into its items while
// the bytes arrive, so that a large LIST is decoded in small pieces as it comes instead of as
// one document once it has all come: no buffer that grows to the whole answer (copied each
// time it doubles), no parser sized for it (about 14 bytes per byte of input), and the decoding
// overlaps with the transfer.
//
// Items are handed over in batches, each a small document of its own: {"items":[item,item]},
// the shape a List decoder already reads. Everything outside the items array (kind, apiVersion,
// metadata with resourceVersion and continue) is kept as the "rest": the same answer with
// "items":[]. Chunk boundaries may fall anywhere, also inside a string or an escape.
//
// It checks only what it needs to find the items (strings, escapes, nesting): a malformed
// answer yields malformed batches or rest, which their decoder reports.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace kozmo::client {

class list_splitter {
public:
  // on_batch(batch, count): a batch of `count` items, once it holds at least `batch_bytes`
  // bytes of them, and the last one at finish().
  using batch_fn = std::function<void(std::string batch, std::size_t count)>;

  explicit list_splitter(batch_fn on_batch, std::size_t batch_bytes = 256 * 1024);

  void feed(std::string_view data);
  // The end of the answer: hands over the last batch and returns the rest.
  std::string finish();

private:
  void open_batch();
  void close_batch();

  batch_fn on_batch_;
  std::size_t batch_bytes_;
  std::string rest_;
  std::string batch_;
  std::size_t batch_count_ = 0;

  int depth_ = 0;           // nesting of the whole answer: 1 inside the top object
  bool in_string_ = false;
  bool escape_ = false;
  bool in_items_ = false;   // inside the top-level "items" array
  bool in_item_ = false;    // copying one item (an object, array or scalar at depth 2)
  bool scalar_item_ = false;
  // The last string completed at depth 1 (a key, when a ':' follows), up to 8 bytes: enough to
  // tell "items" apart.
  std::string key_;
  bool key_overflow_ = false;
  bool string_at_top_ = false;
  bool after_items_key_ = false; // saw "items" then ':' at depth 1; a '[' opens the items
};

} // namespace kozmo::client
