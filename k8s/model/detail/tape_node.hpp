// Private to k8s/model: the decoder node over a document parsed by simdjson's DOM parser,
// reading its tape directly.
//
// Why the DOM and not On Demand: ondemand is compiled into this library for the baseline
// x86-64 target (only its stage 1 is picked at run time), and decoding a model reads most
// members of the object. Walking the finished tape (strings unescaped and sized, numbers
// parsed, every container knowing where it ends and how many items it holds) is a couple of
// loads per value, and a member the model does not know costs one jump; On Demand steps over
// such a member token by token and has to count an array to reserve for it. Measured on pod
// watch events (bench/watch_decode_bench), a decoder over On Demand was ~20 % slower than this
// one although it skips stage 2. The tape is read directly rather than through dom::element
// because simdjson's iterators step through an out-of-line function per member.
//
// The tape format (simdjson's doc/tape.md, unchanged since 0.3): one 64-bit word per value,
// the type character in the top byte and a 56-bit payload below it.
//   '{' / '['   payload: low 32 bits = index just past the matching '}' / ']',
//               bits 32..55 = number of members / items (saturated at 0xFFFFFF)
//   '"'         payload: offset into the string buffer of a 32-bit length then the bytes
//   'l' 'u' 'd' the int64 / uint64 / double in the next word
//   't' 'f' 'n' true, false, null
// An object's members are key (a '"' word) then value, one after the other. The format is
// simdjson's, reached through dom::parser's document members: every fast decode in the unit
// tests goes through this file, so a simdjson that changed it would fail them at once.
#pragma once

#include "k8s/model/detail/tree_node.hpp"

#include <cstring>
#include <limits>

namespace kozmo::k8s::detail {

// The parsed document: the tape and the string buffer it points into.
struct tape_doc {
  const std::uint64_t* tape;
  const std::uint8_t* strings;
};

class tape_node;

// The text of a number as the decoder reports it ("1.5", "3000000000").
std::string number_text(const tape_node& n);
// A whole value as a json::value tree (custom objects, pod affinity terms).
void tape_to_tree(const tape_node& n, json::value& out);

class tape_node {
public:
  tape_node(const tape_doc& doc, std::uint32_t at) : tape_(doc.tape), strings_(doc.strings), at_(at) {}

  static constexpr std::uint64_t payload_mask = 0x00FFFFFFFFFFFFFF;
  static constexpr std::uint32_t count_saturated = 0xFFFFFF;

  char type() const { return static_cast<char>(word() >> 56); }
  std::uint64_t word() const { return tape_[at_]; }
  std::uint64_t next_word() const { return tape_[at_ + 1]; }

  // The index of the value after this one.
  // Called for every member and item: two compares instead of a jump table.
  [[gnu::always_inline]] std::uint32_t after() const {
    std::uint64_t w = word();
    auto t = static_cast<std::uint8_t>(w >> 56);
    if ((t | 0x20) == '{') // '{' (0x7B) or '[' (0x5B)
      return static_cast<std::uint32_t>(w);
    // A number takes two words: 'l', 'u', 'd'.
    return at_ + 1 + (t == 'l' || t == 'u' || t == 'd');
  }

  std::string_view string_at() const {
    const std::uint8_t* p = strings_ + (word() & payload_mask);
    std::uint32_t len;
    std::memcpy(&len, p, sizeof len);
    return {reinterpret_cast<const char*>(p + sizeof len), len};
  }

  bool is_null() const { return type() == 'n'; }

  node_kind kind() const {
    switch (type()) {
    case '[': return node_kind::array;
    case '{': return node_kind::object;
    case 'l':
    case 'u':
    case 'd': return node_kind::number;
    case '"': return node_kind::string;
    case 't':
    case 'f': return node_kind::boolean;
    case 'n': return node_kind::null;
    default: return node_kind::invalid;
    }
  }

  dstatus read_view(std::string_view& out) const {
    if (type() == '"') [[likely]] {
      out = string_at();
      return {};
    }
    return null_or_mismatch("a string");
  }

  [[gnu::always_inline]] dstatus read(std::string& out) const {
    if (type() != '"') [[unlikely]]
      return null_or_mismatch("a string");
    assign_string(string_at(), out);
    return {};
  }

  // Decoding fills fresh models, so the target is normally empty: it is replaced by a string
  // constructed in place from the bytes, which keeps a short value in the string itself and
  // gives a long one a buffer of exactly its size (appending would round it up to 30 bytes),
  // with neither an out-of-line append nor a temporary moved in.
  [[gnu::always_inline]] static void assign_string(std::string_view sv, std::string& out) {
    if (!out.empty()) [[unlikely]] {
      out.assign(sv.data(), sv.size());
      return;
    }
    std::destroy_at(&out);
    try {
      std::construct_at(&out, sv.data(), sv.size());
    } catch (...) {
      std::construct_at(&out); // out of memory: leave a valid empty string behind
      throw;
    }
  }

  dstatus read(std::int64_t& out) const {
    switch (type()) {
    case 'l': out = static_cast<std::int64_t>(next_word()); return {};
    case 'n': return {};
    case 'u':
    case 'd': return dstatus::fail("expected an integer, found " + number_text(*this));
    default: return mismatch("an integer");
    }
  }

  dstatus read(std::int32_t& out) const {
    std::int64_t v = out;
    KOZMO_DTRY(read(v));
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
      return dstatus::fail("value " + std::to_string(v) + " does not fit in 32 bits");
    out = static_cast<std::int32_t>(v);
    return {};
  }

  dstatus read(bool& out) const {
    switch (type()) {
    case 't': out = true; return {};
    case 'f': out = false; return {};
    case 'n': return {};
    default: return mismatch("a boolean");
    }
  }

  dstatus read(json::value& out) const {
    tape_to_tree(*this, out);
    return {};
  }

  dstatus read_quantity(quantity& out) const {
    switch (kind()) {
    case node_kind::null: return {};
    case node_kind::string: return tree_node::parse_quantity_text(string_at(), out);
    case node_kind::number: return tree_node::parse_quantity_text(number_text(*this), out);
    default: return mismatch("a quantity");
    }
  }

  // How many items an array holds (0 for anything else); a hint for reserving.
  std::size_t element_count() const {
    if (type() != '[')
      return 0;
    auto n = static_cast<std::uint32_t>(word() >> 32) & count_saturated;
    return n == count_saturated ? 0 : n;
  }

  // How many members an object holds (0 for anything else); a hint for reserving.
  std::size_t member_count() const {
    if (type() != '{')
      return 0;
    auto n = static_cast<std::uint32_t>(word() >> 32) & count_saturated;
    return n == count_saturated ? 0 : n;
  }

  template <class F> dstatus fields(F&& f) const { return members(f, false); }
  template <class F> dstatus entries(F&& f) const { return members(f, true); }

  template <class F> dstatus elements(F&& f) const {
    if (type() != '[') [[unlikely]]
      return null_or_mismatch("an array");
    std::uint32_t end = static_cast<std::uint32_t>(word()) - 1; // the ']'
    std::size_t i = 0;
    for (std::uint32_t at = at_ + 1; at < end; ++i) {
      tape_node child(*this, at);
      if (auto s = f(child); !s.ok()) [[unlikely]]
        return std::move(s).in_index(i);
      at = child.after();
    }
    return {};
  }

  // Reads "apiVersion" and "kind" wherever they are in this object (kind decides how the rest
  // is decoded); the node can still be decoded as a whole afterwards.
  dstatus peek_type_meta(std::string& api_version, std::string& kind_out) const {
    if (type() != '{')
      return mismatch("an object");
    return members_of([&](std::string_view k, const tape_node& v) -> dstatus {
      if (k == "kind") {
        if (auto s = v.read(kind_out); !s.ok())
          return std::move(s).in_field("kind");
      } else if (k == "apiVersion") {
        if (auto s = v.read(api_version); !s.ok())
          return std::move(s).in_field("apiVersion");
      }
      return {};
    });
  }

private:
  template <class F> dstatus members(F& f, bool as_map) const {
    if (type() != '{') [[unlikely]]
      return null_or_mismatch("an object");
    return members_of([&](std::string_view key, tape_node& child) -> dstatus {
      if (auto s = f(key, child); !s.ok()) [[unlikely]]
        return as_map ? std::move(s).in_key(key) : std::move(s).in_field(key);
      return {};
    });
  }

  template <class F> dstatus members_of(F&& f) const {
    std::uint32_t end = static_cast<std::uint32_t>(word()) - 1; // the '}'
    for (std::uint32_t at = at_ + 1; at < end;) {
      std::string_view key = tape_node(*this, at).string_at();
      tape_node child(*this, at + 1);
      KOZMO_DTRY(f(key, child));
      at = child.after();
    }
    return {};
  }

  dstatus null_or_mismatch(std::string_view expected) const {
    if (type() == 'n')
      return {};
    return mismatch(expected);
  }

  dstatus mismatch(std::string_view expected) const { return dstatus::type_error(expected, describe(kind())); }

  // Another value of the same document.
  tape_node(const tape_node& from, std::uint32_t at) : tape_(from.tape_), strings_(from.strings_), at_(at) {}

  const std::uint64_t* tape_;
  const std::uint8_t* strings_;
  std::uint32_t at_;
};

} // namespace kozmo::k8s::detail
