// Object stores for the copilot (`kozmo copilot download|upload`): where a task's inputs come
// from and its outputs go. Two backends, chosen by the URI's scheme:
//
//   file:///abs/path       the local filesystem (a directory is a prefix)
//   s3://bucket/key        S3 or an S3-compatible server (MinIO, s3rver, Ceph RGW): SigV4
//                          (actors/tasks/sigv4.hpp) over Kozmo's own HTTP client (k8s/client),
//                          path-style (http://endpoint/bucket/key) by default, virtual-hosted
//                          (bucket.endpoint/key) on request
//
// Blocking calls, for a one-shot command (not for an actor). Memory stays bounded whatever the
// object's size: S3 downloads are ranged GETs of `part_size` bytes, uploads over `part_size` go
// as a multipart upload of such parts, files are copied in the kernel (copy_file_range).
//
// Errors: `code` 404 means the object or prefix does not exist (the caller decides whose fault
// that is); anything else is the store's or the network's, with a message naming the request
// ("GET s3://b/k: 403 SignatureDoesNotMatch: The request signature we calculated ...").
#pragma once

#include "k8s/error.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::runtime {

struct s3_settings {
  std::string endpoint;     // "http://127.0.0.1:4569"; "": https://s3.<region>.amazonaws.com
  std::string region = "us-east-1";
  bool path_style = true;
  std::string access_key_id; // "": anonymous requests (no Authorization)
  std::string secret_access_key;
  std::string session_token;
  std::uint64_t part_size = 64ULL * 1024 * 1024;
  int list_page = 1000; // keys per ListObjectsV2 page (S3's most)
};

struct object_entry {
  std::string uri;      // the object's full URI
  std::string relative; // its path under the listed prefix: "a/b.txt"
  std::uint64_t size = 0;
};

struct transfer_result {
  std::uint64_t bytes = 0;
  std::string sha256; // hex; "" when not asked for
};

class object_store {
public:
  virtual ~object_store() = default;
  // The object's size; nullopt when there is no object at `uri` (a prefix is not one).
  virtual expected<std::optional<std::uint64_t>> head(const std::string& uri) = 0;
  // Every object under `prefix_uri` treated as a directory ("<prefix>/..."), sorted by key.
  virtual expected<std::vector<object_entry>> list(const std::string& prefix_uri) = 0;
  // Writes the object into `path` (parent directories made); with `hash`, its SHA-256 too.
  virtual expected<transfer_result> get(const std::string& uri, const std::string& path, bool hash) = 0;
  // Stores the file at `path` as the object `uri`, replacing it.
  virtual status put(const std::string& path, const std::string& uri) = 0;
};

// The store for `uri`'s scheme; an error for any other scheme.
expected<std::unique_ptr<object_store>> open_store(std::string_view uri, const s3_settings& s3);

// "<prefix>/<relative>", with exactly one '/' between.
std::string join_uri(std::string_view prefix, std::string_view relative);

} // namespace kozmo::runtime
