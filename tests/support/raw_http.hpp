// A minimal blocking HTTP/1.1 client over a POSIX socket, for talking to a server the way
// kube-scheduler does (keep-alive) and the way a broken or hostile client would (garbage, a
// head sent half, a connection held idle).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>

namespace kozmo::test {

struct http_reply {
  int status = 0; // 0: the connection closed before a full answer
  std::map<std::string, std::string> headers; // lower-case names
  std::string body;
};

class raw_connection {
public:
  explicit raw_connection(unsigned short port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0}; // a hung server fails the test instead of hanging it
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~raw_connection() { ::close(fd_); }
  raw_connection(const raw_connection&) = delete;
  raw_connection& operator=(const raw_connection&) = delete;

  bool connected() const { return connected_; }

  void send_raw(const std::string& bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      auto n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }

  http_reply request(const std::string& method, const std::string& target, const std::string& body = {}) {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!body.empty() || method == "POST")
      req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    req += "\r\n" + body;
    send_raw(req);
    return read_reply();
  }

  http_reply read_reply() {
    http_reply r;
    std::size_t head_end;
    while ((head_end = pending_.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return r;
    std::string head = pending_.substr(0, head_end);
    pending_.erase(0, head_end + 4);
    auto line_end = head.find("\r\n");
    std::string status_line = head.substr(0, line_end);
    r.status = std::atoi(status_line.substr(status_line.find(' ') + 1, 3).c_str());
    std::size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      auto end = head.find("\r\n", pos);
      if (end == std::string::npos) end = head.size();
      auto line = head.substr(pos, end - pos);
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        auto value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        r.headers[name] = value;
      }
      pos = end + 2;
    }
    std::size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    while (pending_.size() < length)
      if (!fill()) {
        r.status = 0;
        return r;
      }
    r.body = pending_.substr(0, length);
    pending_.erase(0, length);
    return r;
  }

  // True when the server closed the connection (reads EOF).
  bool closed_by_server() {
    char c;
    return ::recv(fd_, &c, 1, 0) == 0;
  }

  // True when the server closes the connection (EOF or reset) within `ms`, whatever it sends
  // before; false while it stays open.
  bool closed_within(int ms) {
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, ms) <= 0) return false;
      char buf[4096];
      auto n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) return true;
    }
  }

private:
  bool fill() {
    char buf[4096];
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    pending_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

} // namespace kozmo::test
