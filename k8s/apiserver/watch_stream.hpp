// One watch request: what it selects and how its events are written (JSON lines of
// {"type":...,"object":...}, objects as JSON, Table rows or PartialObjectMetadata). The HTTP
// layer owns the connection, the timers and the queue; this class only decides bytes.
//
// Not thread-safe: used from the strand of the connection that streams it.
#pragma once

#include "k8s/apiserver/request_util.hpp"
#include "k8s/apiserver/resource_types.hpp"
#include "k8s/apiserver/status.hpp"
#include "k8s/apiserver/store.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace kozmo::apiserver {

struct watch_params {
  resource_ptr rt;
  std::string version;
  std::string ns;                          // "" = all namespaces
  object_predicate filter;                 // selectors (empty = all)
  std::optional<std::uint64_t> from_rv;    // nullopt: initial ADDED events for existing objects
  bool send_initial_events = false;        // sendInitialEvents=true: ADDED events, then a bookmark
  bool bookmarks = false;                  // allowWatchBookmarks
  std::int64_t timeout_seconds = 0;        // 0 = no server-side timeout
  accept_choice accept;
};

class watch_stream {
public:
  explicit watch_stream(watch_params p) : p_(std::move(p)) {}

  const watch_params& params() const { return p_; }

  // Registers with the store; `sink` gets every event (called under the store's lock: it must
  // only queue). Fails with 410 Expired when from_rv is older than the watch history.
  expected<store::watch_id> subscribe(store& s, std::function<void(const change_event&)> sink);

  // One event as a line (with '\n').
  std::string encode(const change_event& ev);
  // A BOOKMARK line at `rv` when the client has not seen `rv` yet, else "".
  std::string bookmark(std::uint64_t rv);
  // {"type":"ERROR","object":<Status>} line.
  static std::string error_line(const api_error& e);

  std::uint64_t last_rv() const { return last_rv_; }

private:
  std::string bookmark_line(std::uint64_t rv, bool initial_events_end);
  watch_params p_;
  std::uint64_t last_rv_ = 0;
  bool columns_sent_ = false;
};

} // namespace kozmo::apiserver
