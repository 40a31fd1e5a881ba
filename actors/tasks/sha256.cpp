#include "actors/tasks/sha256.hpp"

#include <openssl/evp.h>
#include <openssl/sha.h>

namespace kozmo::tasks {

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return hex(std::string_view(reinterpret_cast<const char*>(md), sizeof md));
}

struct sha256::ctx {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
};

sha256::sha256() : ctx_(new ctx) { EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr); }

sha256::~sha256() {
  EVP_MD_CTX_free(ctx_->md);
  delete ctx_;
}

void sha256::update(const void* data, std::size_t n) { EVP_DigestUpdate(ctx_->md, data, n); }

std::string sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, md, &len);
  return tasks::hex(std::string_view(reinterpret_cast<const char*>(md), len));
}

} // namespace kozmo::tasks
