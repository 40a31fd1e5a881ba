#include "runtime/object_store.hpp"

#include "actors/tasks/sigv4.hpp"
#include "k8s/client/client.hpp"
#include "runtime/s3_xml.hpp"


#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <mutex>

namespace kozmo::runtime {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t copy_chunk = 1 << 20;

std::string errno_text(int e) {
  std::string m = std::strerror(e);
  if (!m.empty())
    m[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(m[0])));
  return m;
}

error io_error(const std::string& what, int e) {
  error err{what + ": " + errno_text(e)};
  if (e == ENOENT)
    err.code = 404;
  return err;
}

using tasks::sha256;

struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

status write_all(int fd, const char* data, std::size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return io_error("write " + path, errno);
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return ok;
}

status make_parent(const std::string& path) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec)
    return error{"create the directory of " + path + ": " + ec.message()};
  return ok;
}

// Writes `path` through a temporary name, renamed into place when complete: a reader never
// sees half a file.
class file_writer {
public:
  static expected<std::unique_ptr<file_writer>> open(const std::string& path) {
    if (auto st = make_parent(path); !st)
      return st.err();
    auto w = std::unique_ptr<file_writer>(new file_writer(path));
    w->out_.fd = ::open(w->tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->out_.fd < 0)
      return io_error("create " + w->tmp_, errno);
    return w;
  }
  ~file_writer() {
    if (!done_)
      ::unlink(tmp_.c_str());
  }
  int fd() const { return out_.fd; }
  const std::string& path() const { return path_; }
  status commit() {
    if (::close(std::exchange(out_.fd, -1)) != 0)
      return io_error("close " + tmp_, errno);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0)
      return io_error("rename " + tmp_ + " to " + path_, errno);
    done_ = true;
    return ok;
  }

private:
  explicit file_writer(std::string path) : path_(std::move(path)), tmp_(path_ + ".kozmo-tmp") {}
  std::string path_, tmp_;
  fd_guard out_;
  bool done_ = false;
};

// The kernel copies (copy_file_range: no trip through user space, a reflink where the
// filesystem can); with `hash`, read + hash + write instead.
expected<transfer_result> copy_file(const std::string& from, const std::string& to, bool hash) {
  fd_guard in;
  in.fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in.fd < 0)
    return io_error("open " + from, errno);
  struct stat st {};
  if (::fstat(in.fd, &st) != 0)
    return io_error("stat " + from, errno);
  auto w = file_writer::open(to);
  if (!w)
    return w.err();
  transfer_result r;
  std::uint64_t left = static_cast<std::uint64_t>(st.st_size);
  bool kernel = !hash;
  while (kernel && left > 0) {
    ssize_t n = ::copy_file_range(in.fd, nullptr, (*w)->fd(), nullptr, left, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
      kernel = false; // this pair of filesystems cannot: copy by hand from where it stopped
      break;
    }
    if (n < 0)
      return io_error("copy " + from + " to " + to, errno);
    if (n == 0)
      break; // the file shrank while copied
    left -= static_cast<std::uint64_t>(n);
    r.bytes += static_cast<std::uint64_t>(n);
  }
  if (!kernel) {
    sha256 h;
    std::string buf(copy_chunk, '\0');
    for (;;) {
      ssize_t n = ::read(in.fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return io_error("read " + from, errno);
      if (n == 0)
        break;
      if (hash)
        h.update(buf.data(), static_cast<std::size_t>(n));
      if (auto s = write_all((*w)->fd(), buf.data(), static_cast<std::size_t>(n), to); !s)
        return s.err();
      r.bytes += static_cast<std::uint64_t>(n);
    }
    if (hash)
      r.sha256 = h.hex();
  }
  if (auto s = (*w)->commit(); !s)
    return s.err();
  return r;
}

// --- file:// ------------------------------------------------------------------------------

std::string file_path(std::string_view uri) { return std::string(uri.substr(7)); } // keeps the leading '/'

class file_store final : public object_store {
public:
  expected<std::optional<std::uint64_t>> head(const std::string& uri) override {
    struct stat st {};
    if (::stat(file_path(uri).c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR)
        return std::optional<std::uint64_t>();
      return io_error("stat " + uri, errno);
    }
    if (!S_ISREG(st.st_mode))
      return std::optional<std::uint64_t>();
    return std::optional<std::uint64_t>(static_cast<std::uint64_t>(st.st_size));
  }

  expected<std::vector<object_entry>> list(const std::string& prefix_uri) override {
    std::vector<object_entry> out;
    fs::path root = file_path(prefix_uri);
    std::error_code ec;
    if (!fs::is_directory(root, ec))
      return out;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (!it->is_regular_file(ec))
        continue;
      object_entry e;
      e.relative = fs::relative(it->path(), root, ec).generic_string();
      e.uri = join_uri(prefix_uri, e.relative);
      e.size = static_cast<std::uint64_t>(it->file_size(ec));
      out.push_back(std::move(e));
    }
    if (ec)
      return error{"list " + prefix_uri + ": " + ec.message()};
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.relative < b.relative; });
    return out;
  }

  expected<transfer_result> get(const std::string& uri, const std::string& path, bool hash) override {
    return copy_file(file_path(uri), path, hash);
  }

  status put(const std::string& path, const std::string& uri) override {
    auto r = copy_file(path, file_path(uri), false);
    if (!r)
      return r.err();
    return ok;
  }
};

// --- s3:// --------------------------------------------------------------------------------

struct s3_location {
  std::string bucket;
  std::string key;
};

expected<s3_location> parse_s3(std::string_view uri) {
  std::string_view rest = uri.substr(5);
  auto slash = rest.find('/');
  s3_location loc;
  loc.bucket = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos)
    loc.key = std::string(rest.substr(slash + 1));
  if (loc.bucket.empty())
    return error::bad_request(std::string(uri) + ": an s3:// URI names a bucket (s3://bucket/key)");
  return loc;
}

using s3_xml::tag;

std::string amz_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm {};
  gmtime_r(&t, &tm);
  char buf[20];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// The Host header as k8s/client sends it for `server` ("host:port", the default port written
// out): the value SigV4 must sign.
std::string host_header_of(const std::string& server) {
  bool tls = server.starts_with("https://");
  std::string_view rest = server;
  rest.remove_prefix(server.find("://") == std::string::npos ? 0 : server.find("://") + 3);
  rest = rest.substr(0, rest.find('/'));
  std::string authority(rest);
  bool has_port = authority.starts_with("[") ? authority.find("]:") != std::string::npos
                                             : authority.find(':') != std::string::npos;
  return has_port ? authority : authority + (tls ? ":443" : ":80");
}

class s3_store final : public object_store {
public:
  explicit s3_store(s3_settings s) : s_(std::move(s)) {
    if (s_.endpoint.empty())
      s_.endpoint = "https://s3." + s_.region + ".amazonaws.com";
    while (!s_.endpoint.empty() && s_.endpoint.back() == '/')
      s_.endpoint.pop_back();
    if (s_.part_size < 1024)
      s_.part_size = 1024;
  }

  expected<std::optional<std::uint64_t>> head(const std::string& uri) override {
    auto loc = parse_s3(uri);
    if (!loc)
      return loc.err();
    if (loc->key.empty() || loc->key.back() == '/')
      return std::optional<std::uint64_t>();
    auto r = call("HEAD", *loc, {}, {}, "", uri);
    if (!r && r.err().code == 404)
      return std::optional<std::uint64_t>();
    if (!r && r.err().code != 0) {
      // A HEAD answer has no body, so no S3 error code ("403" alone): ask for one byte to
      // learn why (SignatureDoesNotMatch, AccessDenied, ...).
      auto why = call("GET", *loc, {}, {{"Range", "bytes=0-0"}}, "", uri);
      if (!why && why.err().code == r.err().code)
        return error{"HEAD" + why.err().message.substr(3), why.err().code, why.err().reason};
    }
    if (!r)
      return r.err();
    auto it = r->headers.find("content-length");
    std::uint64_t size = it == r->headers.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
    return std::optional<std::uint64_t>(size);
  }

  expected<std::vector<object_entry>> list(const std::string& prefix_uri) override {
    auto loc = parse_s3(prefix_uri);
    if (!loc)
      return loc.err();
    std::string prefix = loc->key;
    if (!prefix.empty() && prefix.back() != '/')
      prefix += '/';
    std::vector<object_entry> out;
    std::string token;
    for (;;) {
      std::vector<std::pair<std::string, std::string>> query = {
          {"list-type", "2"}, {"prefix", prefix}, {"max-keys", std::to_string(s_.list_page)}};
      if (!token.empty())
        query.emplace_back("continuation-token", token);
      auto r = call("GET", {loc->bucket, ""}, query, {}, "", prefix_uri);
      if (!r)
        return r.err();
      auto page = s3_xml::parse_list_page(r->body, prefix);
      for (auto& item : page.items) {
        object_entry e;
        e.relative = item.key.substr(prefix.size());
        e.uri = "s3://" + loc->bucket + "/" + item.key;
        e.size = item.size;
        out.push_back(std::move(e));
      }
      if (!page.truncated)
        break;
      token = std::move(page.continuation_token);
      if (token.empty())
        return error{"list " + prefix_uri + ": the store said the listing goes on but gave no continuation token"};
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.relative < b.relative; });
    return out;
  }

  expected<transfer_result> get(const std::string& uri, const std::string& path, bool hash) override {
    auto loc = parse_s3(uri);
    if (!loc)
      return loc.err();
    auto size = head(uri);
    if (!size)
      return size.err();
    if (!*size)
      return error::not_found(uri + ": no such object");
    auto w = file_writer::open(path);
    if (!w)
      return w.err();
    sha256 h;
    transfer_result r;
    std::uint64_t total = **size;
    // Ranged GETs of part_size: memory stays bounded whatever the object's size.
    for (std::uint64_t off = 0; off < total || (total == 0 && off == 0);) {
      std::vector<std::pair<std::string, std::string>> headers;
      if (total > s_.part_size) {
        std::uint64_t last = std::min(total, off + s_.part_size) - 1;
        headers.emplace_back("Range", "bytes=" + std::to_string(off) + "-" + std::to_string(last));
      }
      auto resp = call("GET", *loc, {}, headers, "", uri);
      if (!resp)
        return resp.err();
      if (hash)
        h.update(resp->body.data(), resp->body.size());
      if (auto s = write_all((*w)->fd(), resp->body.data(), resp->body.size(), path); !s)
        return s.err();
      r.bytes += resp->body.size();
      if (resp->body.empty())
        break;
      off += resp->body.size();
    }
    if (r.bytes != total)
      return error{"GET " + uri + ": got " + std::to_string(r.bytes) + " bytes of " + std::to_string(total)};
    if (hash)
      r.sha256 = h.hex();
    if (auto s = (*w)->commit(); !s)
      return s.err();
    return r;
  }

  status put(const std::string& path, const std::string& uri) override {
    auto loc = parse_s3(uri);
    if (!loc)
      return loc.err();
    if (loc->key.empty())
      return error::bad_request(uri + ": names a bucket, not an object");
    fd_guard in;
    in.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (in.fd < 0)
      return io_error("open " + path, errno);
    struct stat st {};
    if (::fstat(in.fd, &st) != 0)
      return io_error("stat " + path, errno);
    auto size = static_cast<std::uint64_t>(st.st_size);
    if (size <= s_.part_size) {
      auto body = read_part(in.fd, 0, size, path);
      if (!body)
        return body.err();
      auto r = call("PUT", *loc, {}, {}, *body, uri);
      return r ? status(ok) : status(r.err());
    }
    return put_multipart(in.fd, size, path, *loc, uri);
  }

private:
  s3_settings s_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<client::client>> clients_; // by server URL

  static expected<std::string> read_part(int fd, std::uint64_t off, std::uint64_t len, const std::string& path) {
    std::string buf(len, '\0');
    std::size_t got = 0;
    while (got < len) {
      ssize_t n = ::pread(fd, buf.data() + got, len - got, static_cast<off_t>(off + got));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return io_error("read " + path, errno);
      if (n == 0)
        return error{"read " + path + ": the file shrank while it was uploaded"};
      got += static_cast<std::size_t>(n);
    }
    return buf;
  }

  // CreateMultipartUpload, UploadPart per part_size, CompleteMultipartUpload; aborted on failure.
  status put_multipart(int fd, std::uint64_t size, const std::string& path, const s3_location& loc,
                       const std::string& uri) {
    auto created = call("POST", loc, {{"uploads", ""}}, {}, "", uri);
    if (!created)
      return created.err();
    auto upload_id = tag(created->body, "UploadId");
    if (!upload_id)
      return error{"POST " + uri + "?uploads: no UploadId in the answer"};
    std::string parts_xml;
    auto fail = [&](error e) -> status {
      (void)call("DELETE", loc, {{"uploadId", *upload_id}}, {}, "", uri);
      return e;
    };
    int number = 0;
    for (std::uint64_t off = 0; off < size; off += s_.part_size) {
      ++number;
      auto body = read_part(fd, off, std::min(s_.part_size, size - off), path);
      if (!body)
        return fail(body.err());
      auto r = call("PUT", loc, {{"partNumber", std::to_string(number)}, {"uploadId", *upload_id}}, {}, *body, uri);
      if (!r)
        return fail(r.err());
      auto etag = r->headers.find("etag");
      if (etag == r->headers.end())
        return fail(error{"PUT " + uri + " part " + std::to_string(number) + ": no ETag in the answer"});
      parts_xml += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" + s3_xml::escape(etag->second) +
                   "</ETag></Part>";
    }
    auto done = call("POST", loc, {{"uploadId", *upload_id}}, {},
                     "<CompleteMultipartUpload>" + parts_xml + "</CompleteMultipartUpload>", uri);
    if (!done)
      return fail(done.err());
    // S3 may answer 200 with an <Error> body when completing fails late.
    if (done->body.find("<Error>") != std::string::npos)
      return fail(error{"complete the upload of " + uri + ": " + tag(done->body, "Message").value_or(done->body)});
    return ok;
  }

  client::client& client_for(const std::string& bucket) {
    std::string server = s_.endpoint;
    if (!s_.path_style) {
      auto at = server.find("://");
      server = server.substr(0, at + 3) + bucket + "." + server.substr(at + 3);
    }
    std::lock_guard lk(mu_);
    auto& c = clients_[server];
    if (!c) {
      client::config cfg;
      cfg.server = server;
      cfg.qps = 0; // a store is not an API server: no client-side rate limit
      cfg.request_timeout = std::chrono::minutes(10);
      cfg.max_retries = 4;
      cfg.user_agent = "kozmo-copilot/0.1";
      c = std::make_unique<client::client>(std::move(cfg));
    }
    return *c;
  }

  // One signed request. `uri` names the object in error messages.
  expected<client::response> call(const std::string& method, const s3_location& loc,
                                  std::vector<std::pair<std::string, std::string>> query,
                                  std::vector<std::pair<std::string, std::string>> headers, std::string body,
                                  const std::string& uri) {
    std::string path = s_.path_style ? "/" + loc.bucket + (loc.key.empty() ? "" : "/" + loc.key) : "/" + loc.key;
    auto& c = client_for(loc.bucket);
    client::request req;
    req.method = method;
    req.path = sigv4::uri_encode(path, true);
    if (!query.empty())
      req.path += "?" + sigv4::canonical_query(query);
    req.accept = "";
    req.content_type = method == "PUT" ? "application/octet-stream" : (body.empty() ? "" : "application/xml");
    req.headers = headers;
    if (!s_.access_key_id.empty()) {
      sigv4::request sr;
      sr.method = method;
      sr.path = path;
      sr.query = std::move(query);
      sr.headers = std::move(headers);
      sr.payload_hash = sigv4::sha256_hex(body);
      sigv4::credentials creds{s_.access_key_id, s_.secret_access_key, s_.session_token};
      sigv4::scope scope{amz_now(), s_.region, "s3"};
      for (auto& h : sigv4::sign_s3(creds, scope, host_header_of(c.cfg().server), std::move(sr)))
        req.headers.push_back(std::move(h));
    }
    req.body = std::move(body);
    auto r = c.send_sync(std::move(req));
    if (r)
      return r;
    error e = r.err();
    std::string what = method + " " + uri + ": ";
    if (e.code == 0) {
      e.message = what + e.message;
      return e;
    }
    // S3's XML error: "<Code>SignatureDoesNotMatch</Code><Message>...</Message>".
    auto [code, msg] = s3_xml::parse_error(e.message);
    e.message = what + std::to_string(e.code) + (code ? " " + *code : "") + (msg ? ": " + *msg : "");
    return e;
  }
};

} // namespace

std::string join_uri(std::string_view prefix, std::string_view relative) {
  std::string out(prefix);
  while (!out.empty() && out.back() == '/' && !out.ends_with(":///") && !out.ends_with("://"))
    out.pop_back();
  while (!relative.empty() && relative.front() == '/')
    relative.remove_prefix(1);
  if (!out.ends_with("/"))
    out += '/';
  return out + std::string(relative);
}

expected<std::unique_ptr<object_store>> open_store(std::string_view uri, const s3_settings& s3) {
  if (uri.starts_with("file:///"))
    return std::unique_ptr<object_store>(std::make_unique<file_store>());
  if (uri.starts_with("s3://"))
    return std::unique_ptr<object_store>(std::make_unique<s3_store>(s3));
  return error::bad_request(std::string(uri) + ": unsupported URI (supported: file:///path, s3://bucket/key)");
}

} // namespace kozmo::runtime
