// A tiny HTTP/1.1 server for client tests: real sockets (plain or TLS), one thread per
// connection, and a handler per request that scripts the answer byte by byte when needed
// (a 429 then a 200, a watch stream cut at awkward places, a keep-alive connection closed
// behind the client's back).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::test {

struct received_request {
  std::string method;
  std::string target;  // path and query
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  int connection = 0;  // 1-based index of the connection it came on
  int index_on_connection = 0;  // 1 for the first request on that connection
};

// The server side of one connection, handed to the handler.
class server_connection {
public:
  virtual ~server_connection() = default;
  // Raw bytes, exactly as given.
  virtual void write(std::string_view raw) = 0;
  // Blocks until the client closes the connection (or the server stops).
  virtual void wait_for_client_close() = 0;
  // The subject of the client certificate ("" when none).
  virtual std::string client_subject() const = 0;

  // A complete response with Content-Length.
  void respond(int status, std::string_view body,
               const std::vector<std::pair<std::string, std::string>>& headers = {});
  // The head of a chunked response; then send_chunk() pieces and end_chunks().
  void start_chunked(int status, std::string_view content_type = "application/json");
  void send_chunk(std::string_view data);
  void end_chunks();

  // Close the connection once the handler returns (else it stays open for the next request).
  void close_after() { close_after_ = true; }
  bool closing() const { return close_after_; }

private:
  bool close_after_ = false;
};

struct tls_setup {
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;  // when set, a client certificate signed by it is required
};

class scripted_server {
public:
  using handler = std::function<void(const received_request&, server_connection&)>;

  explicit scripted_server(handler h, std::optional<tls_setup> tls = std::nullopt);
  ~scripted_server();
  scripted_server(const scripted_server&) = delete;
  scripted_server& operator=(const scripted_server&) = delete;

  std::uint16_t port() const;
  // "http://127.0.0.1:PORT" or "https://127.0.0.1:PORT".
  std::string url() const;
  std::vector<received_request> requests() const;
  int connections() const;
  // Closes every open connection from the server side (simulating an idle timeout).
  void drop_connections();

  struct impl;

private:
  std::unique_ptr<impl> impl_;
};

// A standard reason phrase for the status line.
std::string_view reason_phrase(int status);

} // namespace kozmo::test
