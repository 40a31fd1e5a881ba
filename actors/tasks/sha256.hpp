// SHA-256 as lower-case hex, in one piece or fed in parts (OpenSSL), for the output cache's keys
// and input digests, S3 request signing and the copilot's file hashes. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kozmo::tasks {

// Bytes as lower-case hex digits.
std::string hex(std::string_view bytes);

// SHA-256 of `data`, as 64 lower-case hex digits.
std::string sha256_hex(std::string_view data);

// SHA-256 fed in parts (a file read in blocks).
class sha256 {
public:
  sha256();
  ~sha256();
  sha256(const sha256&) = delete;
  sha256& operator=(const sha256&) = delete;
  void update(const void* data, std::size_t n);
  std::string hex(); // ends the digest
private:
  struct ctx;
  ctx* ctx_;
};

} // namespace kozmo::tasks
