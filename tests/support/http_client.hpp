// A small synchronous HTTP/1.1 client over POSIX sockets for tests that talk to the embedded
// API server over real sockets: one request per connection, Content-Length and chunked
// responses, and a line-by-line reader for watch streams.
#pragma once

#include "k8s/json/value.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::test {

using header_list = std::vector<std::pair<std::string, std::string>>;

struct http_result {
  int status = 0;          // 0 when the connection failed
  header_list headers;
  std::string body;

  std::string header(std::string_view name) const;
  // Every value of a repeated header (Warning).
  std::vector<std::string> headers_named(std::string_view name) const;
  // The body parsed as JSON (null when it is not JSON).
  json::value json() const;
};

class http_client {
public:
  http_client(std::string host, std::uint16_t port) : host_(std::move(host)), port_(port) {}

  http_result request(const std::string& method, const std::string& target, const std::string& body = {},
                      const header_list& headers = {}) const;
  http_result get(const std::string& target, const header_list& headers = {}) const {
    return request("GET", target, {}, headers);
  }
  http_result post(const std::string& target, const std::string& body,
                   const std::string& content_type = "application/json") const {
    return request("POST", target, body, {{"Content-Type", content_type}});
  }
  http_result put(const std::string& target, const std::string& body) const {
    return request("PUT", target, body, {{"Content-Type", "application/json"}});
  }
  http_result patch(const std::string& target, const std::string& body, const std::string& content_type) const {
    return request("PATCH", target, body, {{"Content-Type", content_type}});
  }
  http_result del(const std::string& target, const std::string& body = {}) const {
    return request("DELETE", target, body, body.empty() ? header_list{} : header_list{{"Content-Type", "application/json"}});
  }

private:
  std::string host_;
  std::uint16_t port_;
};

// Reads a watch response: status and headers first, then events one line at a time.
class watch_reader {
public:
  watch_reader(const std::string& host, std::uint16_t port, const std::string& target, const header_list& headers = {});
  ~watch_reader();
  watch_reader(const watch_reader&) = delete;
  watch_reader& operator=(const watch_reader&) = delete;

  int status() const { return status_; }
  std::string header(std::string_view name) const;

  // The next line (without '\n'), or nullopt if none arrived within `timeout` or the stream ended.
  std::optional<std::string> next_line(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // The next line parsed as JSON.
  std::optional<json::value> next_event(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  // The server closed the stream; `clean` when it ended with the last chunk (a graceful end).
  bool ended() const { return eof_; }
  bool ended_cleanly() const { return last_chunk_; }
  void close();

private:
  bool fill(std::chrono::milliseconds timeout);  // reads more bytes; false on timeout/EOF
  bool decode_chunks();                           // moves chunk payloads from raw_ to lines_
  int fd_ = -1;
  int status_ = 0;
  header_list headers_;
  std::string raw_;    // undecoded bytes
  std::string data_;   // decoded body bytes not yet split into lines
  bool chunked_ = false;
  bool eof_ = false;
  bool last_chunk_ = false;
};

} // namespace kozmo::test
