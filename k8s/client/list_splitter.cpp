#include "k8s/client/list_splitter.hpp"

#include <utility>

namespace kozmo::client {

namespace {
constexpr std::string_view batch_open = "{\"items\":[";
constexpr std::string_view batch_close = "]}";
constexpr std::size_t key_limit = 8;

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
} // namespace

list_splitter::list_splitter(batch_fn on_batch, std::size_t batch_bytes)
    : on_batch_(std::move(on_batch)), batch_bytes_(batch_bytes) {}

void list_splitter::open_batch() {
  if (batch_.empty()) {
    batch_.reserve(batch_bytes_ + batch_bytes_ / 4);
    batch_.append(batch_open);
  } else {
    batch_.push_back(',');
  }
}

void list_splitter::close_batch() {
  if (batch_count_ == 0)
    return;
  batch_.append(batch_close);
  auto count = batch_count_;
  batch_count_ = 0;
  std::string out = std::move(batch_);
  batch_.clear();
  on_batch_(std::move(out), count);
}

void list_splitter::feed(std::string_view data) {
  const char* p = data.data();
  const std::size_t n = data.size();
  std::size_t i = 0;
  std::size_t span = 0; // bytes [span, i) have not gone to their destination yet
  // Outside the items array bytes go to the rest; inside an item to the batch; between items
  // (commas, white space) nowhere.
  auto flush = [&](std::size_t to) {
    if (in_item_)
      batch_.append(p + span, to - span);
    else if (!in_items_)
      rest_.append(p + span, to - span);
    span = to;
  };
  auto start_item = [&](bool scalar) {
    flush(i);
    open_batch();
    in_item_ = true;
    scalar_item_ = scalar;
  };
  auto end_item = [&](std::size_t end) {
    flush(end);
    in_item_ = false;
    scalar_item_ = false;
    ++batch_count_;
    if (batch_.size() >= batch_bytes_)
      close_batch();
  };

  while (i < n) {
    if (in_string_) {
      std::size_t from = i;
      while (i < n) {
        char c = p[i];
        if (escape_) {
          escape_ = false;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '"') {
          in_string_ = false;
          break;
        }
        ++i;
      }
      if (string_at_top_ && !key_overflow_) {
        std::size_t len = i - from;
        if (key_.size() + len > key_limit)
          key_overflow_ = true;
        else
          key_.append(p + from, len);
      }
      if (!in_string_)
        ++i; // the closing quote
      continue;
    }
    char c = p[i];
    switch (c) {
    case '"':
      if (in_items_ && !in_item_ && depth_ == 2)
        start_item(true);
      if (depth_ == 1) {
        after_items_key_ = false;
        key_.clear();
        key_overflow_ = false;
      }
      string_at_top_ = depth_ == 1;
      in_string_ = true;
      ++i;
      break;
    case '{':
    case '[':
      if (in_items_ && !in_item_ && depth_ == 2) {
        start_item(false);
      } else if (c == '[' && depth_ == 1 && after_items_key_) {
        ++i;
        flush(i); // the '[' belongs to the rest
        in_items_ = true;
        after_items_key_ = false;
        ++depth_;
        break;
      }
      after_items_key_ = false;
      ++depth_;
      ++i;
      break;
    case '}':
    case ']':
      if (in_item_ && scalar_item_ && depth_ == 2)
        end_item(i);
      if (in_items_ && !in_item_ && depth_ == 2) {
        flush(i);          // drops what lay between the last item and the ']'
        in_items_ = false; // the ']' belongs to the rest
      }
      --depth_;
      ++i;
      if (in_item_ && !scalar_item_ && depth_ == 2)
        end_item(i);
      break;
    case ',':
      if (in_item_ && scalar_item_ && depth_ == 2)
        end_item(i);
      if (depth_ == 1) {
        after_items_key_ = false;
        key_.clear();
      }
      ++i;
      break;
    case ':':
      if (depth_ == 1)
        after_items_key_ = !key_overflow_ && key_ == "items";
      ++i;
      break;
    default:
      if (!is_space(c)) {
        if (in_items_ && !in_item_ && depth_ == 2)
          start_item(true);
        if (depth_ == 1)
          after_items_key_ = false;
      }
      ++i;
      break;
    }
  }
  flush(n);
}

std::string list_splitter::finish() {
  close_batch();
  return std::move(rest_);
}

} // namespace kozmo::client
