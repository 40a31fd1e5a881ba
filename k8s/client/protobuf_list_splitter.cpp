#include "k8s/client/protobuf_list_splitter.hpp"

#include "k8s/protobuf_wire.hpp"

#include <algorithm>
#include <utility>

namespace kozmo::client {

namespace {
void append_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// "k8s\0" + runtime.Unknown {1: type_meta (when given), 2: raw}.
std::string envelope(std::string_view type_meta, std::string_view raw) {
  std::string out;
  out.reserve(raw.size() + type_meta.size() + 24);
  out.append(k8s::protobuf::magic);
  if (!type_meta.empty()) {
    out.push_back(0x0a); // field 1, length-delimited
    append_varint(out, type_meta.size());
    out.append(type_meta);
  }
  out.push_back(0x12); // field 2, length-delimited
  append_varint(out, raw.size());
  out.append(raw);
  return out;
}
} // namespace

protobuf_list_splitter::protobuf_list_splitter(batch_fn on_batch, std::size_t batch_bytes)
    : on_batch_(std::move(on_batch)), batch_bytes_(batch_bytes) {}

void protobuf_list_splitter::feed(std::string_view data) {
  const char* p = data.data();
  const char* end = p + data.size();
  while (p < end && state_ != state::bad)
    read_bytes(p, end);
}

void protobuf_list_splitter::emit(std::string_view bytes) {
  switch (sink_) {
  case sink::type_meta: type_meta_.append(bytes); break;
  case sink::meta: meta_.append(bytes); break;
  case sink::batch:
    if (batch_.empty())
      batch_.reserve(batch_bytes_ + batch_bytes_ / 4);
    batch_.append(bytes);
    break;
  case sink::drop: break;
  }
}

void protobuf_list_splitter::read_bytes(const char*& p, const char* end) {
  // Bytes of raw are counted down as they are read; a field running past raw's end is malformed.
  auto count = [this](std::uint64_t n) {
    if (!in_list_)
      return true;
    if (n > list_left_) {
      state_ = state::bad;
      return false;
    }
    list_left_ -= n;
    return true;
  };

  if (state_ == state::payload || state_ == state::fixed) {
    auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left_, static_cast<std::uint64_t>(end - p)));
    if (!count(n))
      return;
    if (state_ == state::payload)
      emit({p, n});
    else
      head_.append(p, n);
    p += n;
    left_ -= n;
    if (left_ == 0)
      end_field();
    return;
  }

  // One byte of the magic or of a varint.
  const auto b = static_cast<unsigned char>(*p++);
  if (state_ == state::magic) {
    if (b != static_cast<unsigned char>(k8s::protobuf::magic[acc_])) {
      state_ = state::bad;
      return;
    }
    if (++acc_ == k8s::protobuf::magic.size()) {
      acc_ = 0;
      state_ = state::key;
    }
    return;
  }
  if (!count(1))
    return;
  head_.push_back(static_cast<char>(b));
  if (shift_ >= 64) {
    state_ = state::bad;
    return;
  }
  acc_ |= static_cast<std::uint64_t>(b & 0x7f) << shift_;
  shift_ += 7;
  if (b & 0x80)
    return;
  const std::uint64_t value = acc_;
  acc_ = 0;
  shift_ = 0;

  switch (state_) {
  case state::key:
  {
    number_ = static_cast<std::uint32_t>(value >> 3);
    const int wire = static_cast<int>(value & 7);
    if (in_list_)
      sink_ = number_ == 2 && wire == k8s::protobuf::wire_bytes ? sink::batch : sink::meta;
    else
      sink_ = number_ == 1 && wire == k8s::protobuf::wire_bytes ? sink::type_meta : sink::drop;
    switch (wire) {
    case k8s::protobuf::wire_varint: state_ = state::varint; return;
    case k8s::protobuf::wire_fixed64: state_ = state::fixed; left_ = 8; return;
    case k8s::protobuf::wire_fixed32: state_ = state::fixed; left_ = 4; return;
    case k8s::protobuf::wire_bytes: state_ = state::length; return;
    default: state_ = state::bad; return;
    }
  }
  case state::varint:
    end_field();
    return;
  case state::length:
    left_ = value;
    if (!in_list_ && number_ == 2) {
      // The envelope's raw: the list message, read field by field from here on.
      if (saw_list_) {
        state_ = state::bad;
        return;
      }
      saw_list_ = true;
      in_list_ = true;
      list_left_ = value;
      head_.clear();
      state_ = state::key;
      if (list_left_ == 0)
        in_list_ = false;
      return;
    }
    if (in_list_ && left_ > list_left_) {
      state_ = state::bad;
      return;
    }
    if (sink_ == sink::batch || sink_ == sink::meta)
      emit(head_); // the field is kept whole: its key and length too
    state_ = state::payload;
    if (left_ == 0)
      end_field();
    return;
  default:
    state_ = state::bad;
    return;
  }
}

void protobuf_list_splitter::end_field() {
  if (state_ == state::varint || state_ == state::fixed)
    emit(head_);
  if (sink_ == sink::batch) {
    ++batch_count_;
    if (batch_.size() >= batch_bytes_)
      close_batch();
  }
  head_.clear();
  sink_ = sink::drop;
  state_ = state::key;
  if (in_list_ && list_left_ == 0)
    in_list_ = false;
}

void protobuf_list_splitter::close_batch() {
  if (batch_count_ == 0)
    return;
  auto count = batch_count_;
  batch_count_ = 0;
  std::string out = envelope({}, batch_);
  batch_.clear();
  on_batch_(std::move(out), count);
}

std::string protobuf_list_splitter::finish() {
  if (state_ != state::key || in_list_ || !saw_list_)
    return {};
  close_batch();
  return envelope(type_meta_, meta_);
}

} // namespace kozmo::client
