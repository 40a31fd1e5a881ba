#include "tests/support/http_client.hpp"

#include "k8s/text.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstring>

namespace kozmo::test {
namespace {

using text::iequals;

int connect_to(const std::string& host, std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &addr.sin_addr) != 1 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

std::string build_request(const std::string& method, const std::string& target, const std::string& host,
                          std::uint16_t port, const std::string& body, const header_list& headers, bool keep_open) {
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) + "\r\n";
  bool has_accept = false;
  for (const auto& [k, v] : headers) {
    req += k + ": " + v + "\r\n";
    has_accept = has_accept || iequals(k, "Accept");
  }
  if (!has_accept)
    req += "Accept: application/json\r\n";
  req += "User-Agent: kozmo-test\r\n";
  if (!keep_open)
    req += "Connection: close\r\n";
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "\r\n" + body;
  return req;
}

// Splits "HTTP/1.1 200 OK\r\nA: b\r\n..." (without the blank line).
int parse_head(const std::string& head, header_list& headers) {
  std::size_t line_end = head.find("\r\n");
  std::string status_line = head.substr(0, line_end);
  int status = 0;
  auto sp = status_line.find(' ');
  if (sp != std::string::npos)
    status = std::atoi(status_line.c_str() + sp + 1);
  std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    auto end = head.find("\r\n", pos);
    if (end == std::string::npos)
      end = head.size();
    std::string line = head.substr(pos, end - pos);
    auto colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ')
        value.erase(value.begin());
      headers.emplace_back(line.substr(0, colon), value);
    }
    pos = end + 2;
  }
  return status;
}

// Decodes a complete chunked body; returns false if incomplete.
bool dechunk(std::string_view raw, std::string& out) {
  std::size_t pos = 0;
  while (true) {
    auto eol = raw.find("\r\n", pos);
    if (eol == std::string_view::npos)
      return false;
    std::size_t size = std::strtoul(std::string(raw.substr(pos, eol - pos)).c_str(), nullptr, 16);
    pos = eol + 2;
    if (size == 0)
      return true;
    if (pos + size + 2 > raw.size())
      return false;
    out.append(raw.substr(pos, size));
    pos += size + 2;
  }
}

} // namespace

std::string http_result::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name))
      return v;
  return {};
}

std::vector<std::string> http_result::headers_named(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers)
    if (iequals(k, name))
      out.push_back(v);
  return out;
}

json::value http_result::json() const {
  auto v = json::parse(body);
  return v ? *v : json::value();
}

http_result http_client::request(const std::string& method, const std::string& target, const std::string& body,
                                 const header_list& headers) const {
  http_result res;
  int fd = connect_to(host_, port_);
  if (fd < 0)
    return res;
  if (!send_all(fd, build_request(method, target, host_, port_, body, headers, false))) {
    ::close(fd);
    return res;
  }
  std::string raw;
  char buf[65536];
  std::size_t head_end = std::string::npos;
  long content_length = -1;
  bool chunked = false;
  while (true) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30000) <= 0)
      break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0)
      break;
    raw.append(buf, static_cast<std::size_t>(n));
    if (head_end == std::string::npos) {
      head_end = raw.find("\r\n\r\n");
      if (head_end == std::string::npos)
        continue;
      res.status = parse_head(raw.substr(0, head_end), res.headers);
      std::string cl = res.header("Content-Length");
      content_length = cl.empty() ? -1 : std::atol(cl.c_str());
      chunked = iequals(res.header("Transfer-Encoding"), "chunked");
    }
    std::string_view rest = std::string_view(raw).substr(head_end + 4);
    if (content_length >= 0 && rest.size() >= static_cast<std::size_t>(content_length))
      break;
    if (chunked) {
      std::string decoded;
      if (dechunk(rest, decoded))
        break;
    }
  }
  ::close(fd);
  if (head_end == std::string::npos)
    return res;
  std::string_view rest = std::string_view(raw).substr(head_end + 4);
  if (chunked)
    dechunk(rest, res.body);
  else
    res.body = std::string(content_length >= 0 ? rest.substr(0, static_cast<std::size_t>(content_length)) : rest);
  return res;
}

watch_reader::watch_reader(const std::string& host, std::uint16_t port, const std::string& target,
                           const header_list& headers) {
  fd_ = connect_to(host, port);
  if (fd_ < 0 || !send_all(fd_, build_request("GET", target, host, port, {}, headers, true))) {
    eof_ = true;
    return;
  }
  while (raw_.find("\r\n\r\n") == std::string::npos)
    if (!fill(std::chrono::seconds(10)))
      return;
  auto head_end = raw_.find("\r\n\r\n");
  status_ = parse_head(raw_.substr(0, head_end), headers_);
  raw_.erase(0, head_end + 4);
  chunked_ = iequals(header("Transfer-Encoding"), "chunked");
  if (!chunked_) {
    data_ = raw_;
    raw_.clear();
  }
}

watch_reader::~watch_reader() { close(); }

void watch_reader::close() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

std::string watch_reader::header(std::string_view name) const {
  for (const auto& [k, v] : headers_)
    if (iequals(k, name))
      return v;
  return {};
}

bool watch_reader::fill(std::chrono::milliseconds timeout) {
  if (fd_ < 0 || eof_)
    return false;
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0)
    return false;
  char buf[65536];
  ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  raw_.append(buf, static_cast<std::size_t>(n));
  return true;
}

bool watch_reader::decode_chunks() {
  if (!chunked_) {
    data_ += raw_;
    raw_.clear();
    return true;
  }
  while (true) {
    auto eol = raw_.find("\r\n");
    if (eol == std::string::npos)
      return true;
    std::size_t size = std::strtoul(raw_.substr(0, eol).c_str(), nullptr, 16);
    if (size == 0 && eol > 0) {
      last_chunk_ = true;
      raw_.clear();
      return true;
    }
    if (raw_.size() < eol + 2 + size + 2)
      return true;
    data_.append(raw_, eol + 2, size);
    raw_.erase(0, eol + 2 + size + 2);
  }
}

std::optional<std::string> watch_reader::next_line(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    decode_chunks();
    auto nl = data_.find('\n');
    if (nl != std::string::npos) {
      std::string line = data_.substr(0, nl);
      data_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || last_chunk_ || !fill(left))
      return std::nullopt;
  }
}

std::optional<json::value> watch_reader::next_event(std::chrono::milliseconds timeout) {
  auto line = next_line(timeout);
  if (!line)
    return std::nullopt;
  auto v = json::parse(*line);
  if (!v)
    return std::nullopt;
  return *v;
}

} // namespace kozmo::test
