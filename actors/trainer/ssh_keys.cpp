#include "actors/trainer/ssh_keys.hpp"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>
#include <vector>

namespace kozmo::trainer {
namespace {

// An SSH wire-format string: 4-byte big-endian length, then the bytes.
void put_string(std::vector<unsigned char>& out, const unsigned char* data, std::size_t n) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<unsigned char>((n >> shift) & 0xff));
  out.insert(out.end(), data, data + n);
}
void put_string(std::vector<unsigned char>& out, std::string_view s) {
  put_string(out, reinterpret_cast<const unsigned char*>(s.data()), s.size());
}

std::string base64(const std::vector<unsigned char>& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), in.data(), static_cast<int>(in.size()));
  out.resize(n < 0 ? 0 : static_cast<std::size_t>(n));
  return out;
}

} // namespace

std::optional<ssh_key_pair> make_ssh_key_pair() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-521"), EVP_PKEY_free);
  if (!key)
    return std::nullopt;
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  // "traditional" PEM: SEC1 "EC PRIVATE KEY", as ssh-keygen's PEM format and the peer write it.
  if (!bio || PEM_write_bio_PrivateKey_traditional(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return std::nullopt;
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  ssh_key_pair out;
  out.private_pem.assign(data, static_cast<std::size_t>(len));
  unsigned char point[256];
  std::size_t point_len = 0;
  if (EVP_PKEY_get_octet_string_param(key.get(), OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point, sizeof point, &point_len) != 1)
    return std::nullopt;
  std::vector<unsigned char> blob;
  put_string(blob, "ecdsa-sha2-nistp521");
  put_string(blob, "nistp521");
  put_string(blob, point, point_len);
  out.public_line = "ecdsa-sha2-nistp521 " + base64(blob) + "\n";
  return out;
}

} // namespace kozmo::trainer
