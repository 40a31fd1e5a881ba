// The protobuf wire format as Kubernetes' objects use it (proto2: varints, length-delimited
// fields, and fixed 32/64-bit values that its types never carry but a reader must step over).
//
// An object on the wire (Content-Type application/vnd.kubernetes.protobuf) is an envelope: the
// four bytes "k8s\0", then a runtime.Unknown message {1: typeMeta {1: apiVersion, 2: kind},
// 2: raw (the object's own message), 3: contentEncoding, 4: contentType}. Field numbers of the
// kinds are those of k8s.io/api/core/v1/generated.proto and of apimachinery's meta/v1.
//
// Header-only: the embedded API server reads request bodies with it, the model reads the
// answers of a real API server, and the client reads a Status sent in an error's body.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kozmo::k8s::protobuf {

inline constexpr std::string_view magic{"k8s\0", 4};
inline constexpr std::string_view media_type = "application/vnd.kubernetes.protobuf";

enum wire : int { wire_varint = 0, wire_fixed64 = 1, wire_bytes = 2, wire_fixed32 = 5 };

struct field {
  std::uint32_t number = 0;
  int wire = 0;
  std::uint64_t varint = 0;   // wire_varint
  std::string_view bytes;     // wire_bytes
};

// Reads a varint at data[pos], advancing pos; nullopt when it runs past the end or over 10 bytes.
inline std::optional<std::uint64_t> read_varint(std::string_view data, std::size_t& pos) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= data.size())
      return std::nullopt;
    auto b = static_cast<unsigned char>(data[pos++]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80))
      return v;
  }
  return std::nullopt;
}

// The fields of one message in order:  field f; while (r.next(f)) ...; then r.failed().
class reader {
public:
  explicit reader(std::string_view data) : data_(data) {}

  // The next field, false at the end of the message or at malformed data (then failed()).
  bool next(field& f) {
    if (pos_ >= data_.size())
      return false;
    auto key = read_varint(data_, pos_);
    if (!key)
      return fail();
    f.number = static_cast<std::uint32_t>(*key >> 3);
    f.wire = static_cast<int>(*key & 7);
    switch (f.wire) {
    case wire_varint: {
      auto v = read_varint(data_, pos_);
      if (!v)
        return fail();
      f.varint = *v;
      return true;
    }
    case wire_fixed64: return skip(8);
    case wire_fixed32: return skip(4);
    case wire_bytes: {
      auto len = read_varint(data_, pos_);
      if (!len || *len > data_.size() - pos_)
        return fail();
      f.bytes = data_.substr(pos_, *len);
      pos_ += *len;
      return true;
    }
    default: return fail(); // groups (3, 4) are not used by Kubernetes
    }
  }
  bool failed() const { return failed_; }

private:
  bool skip(std::size_t n) {
    if (n > data_.size() - pos_)
      return fail();
    pos_ += n;
    return true;
  }
  bool fail() {
    failed_ = true;
    pos_ = data_.size();
    return false;
  }

  std::string_view data_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

// Calls on_field(const field&) for each field of the message in `data`, in order, until it
// returns false. False when it did, or at malformed data.
template <class OnField>
bool each_field(std::string_view data, OnField&& on_field) {
  reader r(data);
  field f;
  while (r.next(f))
    if (!on_field(f))
      return false;
  return !r.failed();
}

// A varint field's value as the int32/int64 it encodes (negative ones take ten bytes).
inline std::int64_t as_int64(const field& f) { return static_cast<std::int64_t>(f.varint); }
inline std::int32_t as_int32(const field& f) { return static_cast<std::int32_t>(static_cast<std::int64_t>(f.varint)); }

// A metav1.Time {1: seconds, 2: nanos}: its whole seconds (JSON carries no more); nullopt at
// malformed data.
inline std::optional<std::int64_t> time_seconds(std::string_view data) {
  std::int64_t seconds = 0;
  if (!each_field(data, [&](const field& f) {
        if (f.number == 1 && f.wire == wire_varint)
          seconds = as_int64(f);
        return true;
      }))
    return std::nullopt;
  return seconds;
}

struct envelope {
  std::string_view api_version;
  std::string_view kind;
  std::string_view raw;
};

// Opens "k8s\0" + runtime.Unknown; nullopt without the prefix or at malformed data.
inline std::optional<envelope> open_envelope(std::string_view body) {
  if (body.substr(0, magic.size()) != magic)
    return std::nullopt;
  envelope out;
  bool ok = each_field(body.substr(magic.size()), [&](const field& f) {
    if (f.wire != wire_bytes)
      return true;
    if (f.number == 2)
      out.raw = f.bytes;
    if (f.number != 1)
      return true;
    return each_field(f.bytes, [&](const field& t) {
      if (t.number == 1 && t.wire == wire_bytes)
        out.api_version = t.bytes;
      else if (t.number == 2 && t.wire == wire_bytes)
        out.kind = t.bytes;
      return true;
    });
  });
  if (!ok)
    return std::nullopt;
  return out;
}

} // namespace kozmo::k8s::protobuf
