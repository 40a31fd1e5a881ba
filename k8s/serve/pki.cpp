#include "k8s/serve/pki.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <memory>

namespace kozmo::serve {

namespace {

template <class T, void (*Free)(T*)>
using owned = std::unique_ptr<T, std::integral_constant<decltype(Free), Free>>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

error openssl_failure(const char* what) { return error{std::string("certificate: ") + what + " failed"}; }

owned<X509, X509_free> read_certificate(const std::string& pem) {
  owned<BIO, BIO_free_all> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return owned<X509, X509_free>(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

owned<EVP_PKEY, EVP_PKEY_free> read_key(const std::string& pem) {
  owned<BIO, BIO_free_all> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  return owned<EVP_PKEY, EVP_PKEY_free>(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr);
}

} // namespace

expected<pem_identity> issue_certificate(const certificate_request& req, const pem_identity* issuer) {
  owned<EVP_PKEY, EVP_PKEY_free> key(EVP_EC_gen("P-256"));
  if (!key)
    return openssl_failure("generating a P-256 key");
  owned<X509, X509_free> issuer_cert;
  owned<EVP_PKEY, EVP_PKEY_free> issuer_key;
  if (issuer != nullptr) {
    issuer_cert = read_certificate(issuer->cert_pem);
    issuer_key = read_key(issuer->key_pem);
    if (!issuer_cert || !issuer_key)
      return openssl_failure("reading the issuing CA");
  }
  owned<X509, X509_free> cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1)
    return openssl_failure("creating the certificate");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1)
    return openssl_failure("drawing a serial number");
  serial[0] &= 0x7f; // a positive number
  owned<BIGNUM, BN_free> bn(BN_bin2bn(serial, sizeof serial, nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())))
    return openssl_failure("setting the serial number");
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), req.valid_days * 24 * 3600);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& o : req.organizations)
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(req.common_name.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), issuer_cert ? X509_get_subject_name(issuer_cert.get()) : name);
  X509_set_pubkey(cert.get(), key.get());

  std::string san;
  for (const auto& d : req.dns_names)
    san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& ip : req.ip_addresses)
    san += (san.empty() ? "IP:" : ",IP:") + ip;
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer_cert ? issuer_cert.get() : cert.get(), cert.get(), nullptr, nullptr, 0);
  auto add = [&](int nid, const std::string& value) {
    owned<X509_EXTENSION, X509_EXTENSION_free> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
    return ext && X509_add_ext(cert.get(), ext.get(), -1) == 1;
  };
  bool ca = req.use == certificate_use::ca;
  if (!add(NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE") ||
      !add(NID_key_usage, ca ? "critical,keyCertSign,cRLSign,digitalSignature" : "critical,digitalSignature") ||
      (!ca && !add(NID_ext_key_usage, req.use == certificate_use::client ? "clientAuth" : "serverAuth")) ||
      !add(NID_subject_key_identifier, "hash") || (!san.empty() && !add(NID_subject_alt_name, san)))
    return openssl_failure("adding the extensions");
  if (X509_sign(cert.get(), issuer_key ? issuer_key.get() : key.get(), EVP_sha256()) <= 0)
    return openssl_failure("signing");

  owned<BIO, BIO_free_all> cert_bio(BIO_new(BIO_s_mem())), key_bio(BIO_new(BIO_s_mem()));
  if (!cert_bio || !key_bio || PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    return openssl_failure("writing PEM");
  return pem_identity{bio_text(cert_bio.get()), bio_text(key_bio.get())};
}

expected<pem_identity> self_signed_identity(const std::string& common_name, const std::vector<std::string>& dns_names,
                                            const std::vector<std::string>& ip_addresses, bool client) {
  certificate_request req;
  req.common_name = common_name;
  req.dns_names = dns_names;
  req.ip_addresses = ip_addresses;
  req.use = client ? certificate_use::client : certificate_use::server;
  return issue_certificate(req);
}

bool signed_by(const std::string& cert_pem, const std::string& ca_pem) {
  auto cert = read_certificate(cert_pem);
  auto ca = read_certificate(ca_pem);
  if (!cert || !ca)
    return false;
  owned<X509_STORE, X509_STORE_free> store(X509_STORE_new());
  owned<X509_STORE_CTX, X509_STORE_CTX_free> ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1)
    return false;
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_ANY);
  return X509_verify_cert(ctx.get()) == 1;
}

} // namespace kozmo::serve
