// Internal to k8s/client: the state behind `client` (io thread, pool, limiter, retries) and
// behind `watch_handle`. Includes asio; never include it from a public header.
#pragma once

#include "k8s/client/client.hpp"
#include "k8s/client/detail/transport.hpp"
#include "k8s/client/rate_limiter.hpp"

#include <boost/asio/executor_work_guard.hpp>

#include <array>
#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

namespace kozmo::client::detail {

// One watch. `owner` and the atomics may be touched from any thread; the rest belongs to the
// io thread.
struct watch_state {
  std::mutex mu;
  client_impl* owner = nullptr;  // guarded by mu; null once the client shuts down
  std::atomic<bool> cancelled{false};
  std::atomic<bool> closed{false};

  std::shared_ptr<connection> conn;
  std::function<void(std::string_view)> on_line;
  std::function<void(expected<ok_t>)> on_closed;

  // Calls on_closed the first time only.
  void finish(expected<ok_t> how);
};

struct client_impl {
  explicit client_impl(config c);
  ~client_impl();  // interrupts everything in flight, then joins the io thread

  // Any thread.
  void start_request(request req, response_callback done);
  void post(std::function<void()> fn);
  bool on_io_thread() const { return std::this_thread::get_id() == thread_id; }

  // io thread.
  net::awaitable<void> run_request(request req, response_callback done);
  net::awaitable<expected<response>> perform(const request& req);
  struct attempt_outcome {
    std::optional<response> resp;
    std::string reason_phrase;
    transport_failure failure;
  };
  net::awaitable<attempt_outcome> attempt(const request& req);
  net::awaitable<void> run_watch(std::shared_ptr<watch_state> ws, std::string path);
  // Waits `d`; false when interrupted by shutdown.
  net::awaitable<bool> sleep(std::chrono::steady_clock::duration d);
  // A place among the requests on the wire (config::max_connections); false when shutdown
  // interrupted the wait. Every true is matched by one release_slot().
  net::awaitable<bool> acquire_slot(lane which);
  void release_slot();
  std::shared_ptr<connection> take_idle();
  void put_idle(std::shared_ptr<connection> conn);
  const std::string& current_token();
  std::string url(std::string_view path) const { return cfg.server + std::string(path); }
  static error shut_down_error() { return error{"client is shut down"}; }

  const config cfg;
  std::optional<endpoint> ep;
  std::optional<error> config_error;  // bad server URL or TLS material: every request fails
  std::shared_ptr<net::ssl::context> tls_ctx;

  net::io_context ioc;
  net::executor_work_guard<net::io_context::executor_type> work;
  std::atomic<bool> shutting_down{false};
  std::atomic<std::size_t> idle_count{0};

  // io thread only.
  token_bucket limiter;
  backoff_policy backoff;
  std::vector<std::shared_ptr<connection>> idle;
  struct slot_waiter {
    explicit slot_waiter(net::io_context& io) : wake(io, net::steady_timer::time_point::max()) {}
    net::steady_timer wake;  // cancelled to wake the waiter
    bool granted = false;    // the slot was handed over (in_flight already counts it)
    bool abandoned = false;  // the waiter left (shutdown): skip it
  };
  std::size_t in_flight = 0;  // requests holding a slot
  // By lane (request::lane): a freed slot goes to the first waiter of the highest lane.
  std::array<std::deque<std::shared_ptr<slot_waiter>>, lane_count> slot_waiters;
  abort_registry aborts;
  std::mt19937_64 rng;
  std::string token;
  std::chrono::steady_clock::time_point token_read_at{};

  // Watches started, for shutdown (guarded by watches_mu).
  std::mutex watches_mu;
  std::vector<std::weak_ptr<watch_state>> watches;

  std::thread thread;
  std::thread::id thread_id;
};

} // namespace kozmo::client::detail
