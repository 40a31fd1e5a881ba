#include "actors/tasks/names.hpp"

#include <cstdint>

namespace kozmo::tasks {
namespace {

std::uint32_t fnv32a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

// RFC 4648 base32 of the hash's four big-endian bytes (as Go's hash.Sum appends them), with
// the peer's alphabet and no padding: 32 bits are 7 characters.
std::string base32(std::uint32_t h) {
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz123456";
  unsigned char bytes[4] = {static_cast<unsigned char>(h >> 24), static_cast<unsigned char>(h >> 16),
                            static_cast<unsigned char>(h >> 8), static_cast<unsigned char>(h)};
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (unsigned char b : bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(buffer >> (bits - 5)) & 31u];
      bits -= 5;
    }
  }
  if (bits > 0)
    out += alphabet[(buffer << (5 - bits)) & 31u];
  return out;
}

} // namespace

expected<std::string> generated_name(std::string_view id, std::size_t min_length, std::size_t max_length) {
  std::string out(id);
  if (out.size() > max_length)
    out = "f" + base32(fnv32a(id));
  if (out.size() > max_length)
    return error::bad_request("a generated name cannot be shorter than " + std::to_string(out.size()) +
                              " characters (asked for at most " + std::to_string(max_length) + ")");
  if (out.size() < min_length)
    out.append(min_length - out.size(), '0');
  return out;
}

std::string attempt_pod_name(std::string_view task, int attempt) {
  std::string id(task);
  id += "-" + std::to_string(attempt);
  return *generated_name(id);
}

} // namespace kozmo::tasks
