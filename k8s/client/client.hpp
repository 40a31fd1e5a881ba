// The Kubernetes REST client: HTTP/1.1 over plain TCP or TLS, keep-alive connection pool,
// client-side rate limit, retries with back-off, and a line-oriented watch stream.
//
// Threading (read before use):
//  1. A client owns one io thread. Every callback (`send`'s `done`, the async verbs, watch
//     callbacks) runs on that thread and MUST NOT block; hand the result to an actor.
//  2. All public methods are thread-safe. The `*_sync` forms block the calling thread and
//     must not be called from the io thread (they return an error instead of deadlocking).
//  3. Destroying the client ends every watch (on_closed(ok)), fails every request still in
//     flight with "client is shut down", then joins the io thread. When the last owner lets
//     go inside a callback (on the io thread), that shutdown finishes on a helper thread
//     after the callback returns.
//
// Errors: a status >= 400 comes back as kozmo::error with code/reason/message from the
// Kubernetes Status body; a transport failure has code 0 and names the server
// ("connect 127.0.0.1:6443: connection refused"). See retry.hpp for what is retried.
#pragma once

#include "k8s/client/config.hpp"
#include "k8s/client/resource.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kozmo::client {

// Where a request waits when every connection is busy (config::max_connections). A freed
// connection goes to the first waiting request of the highest lane, as Kubernetes' API Priority
// and Fairness serves the nodes and the scheduler before a controller's bookkeeping, and
// client-go's event broadcaster never holds up the controller that records.
enum class lane : unsigned char {
  normal,      // binds, the nodes' pod statuses, the scheduler's writes
  closing,     // a controller's write that ends a piece of work (a task's last status): nothing
               // of it follows, and whoever waits for the work is done once it lands
  background,  // a controller's other writes, which can wait (client::background_view)
  events,      // Events: after every other waiting request
};
inline constexpr std::size_t lane_count = static_cast<std::size_t>(lane::events) + 1;

// A LIST answer's items as they arrive, in batches ({"items":[...]}, list_splitter.hpp; or, for
// an answer in protobuf, an envelope around a run of items, protobuf_list_splitter.hpp), for a
// large LIST that should not be held as one body. Both run on the client's io thread: restart
// when an answer with status 200 begins (again, when a failed attempt is retried: drop what
// the earlier one handed over), then batch for each batch.
struct list_items_handler {
  std::function<void()> restart;
  std::function<void(std::string batch, std::size_t count)> batch;
};

struct request {
  std::string method;
  std::string path;  // absolute path including the query: "/api/v1/pods?limit=500"
  std::string body;
  std::string content_type = "application/json";
  std::string accept = "application/json";
  // The lane it waits in for a connection (a view puts `normal` ones in its own lane).
  enum lane lane = lane::normal;
  // More header lines, sent as given after the standard ones (an object store's signed
  // x-amz-* and Authorization headers, a Range). The config's bearer token is still added
  // when set: a client for a non-Kubernetes server leaves it empty.
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, a 200 answer's items go to it (list_items_handler) and the response's body holds
  // the rest of the answer, without its items. JSON and protobuf answers are split; other
  // answers come whole, as always.
  std::shared_ptr<const list_items_handler> list_items;
};

struct response {
  int status = 0;
  std::string body;
  // Header names in lower case ("content-type", "retry-after").
  std::map<std::string, std::string> headers;
};

using response_callback = std::function<void(expected<response>)>;
using json_callback = std::function<void(expected<json::value>)>;

namespace detail {
struct watch_state;
struct client_impl;
// Sends through the engine directly; callbacks that chain requests (list_all's pager) use it
// because the engine outlives the `client` object while its last callbacks run.
void send(client_impl* impl, request req, response_callback done);
} // namespace detail

// Controls one running watch. Copies share the watch. Dropping every handle does NOT stop the
// watch; call cancel().
class watch_handle {
public:
  watch_handle() = default;
  explicit watch_handle(std::shared_ptr<detail::watch_state> s) : state_(std::move(s)) {}

  // Stops the watch. Thread-safe and idempotent. on_closed then runs once with ok (unless
  // the watch had already ended); no event line is delivered after the io thread has seen
  // the cancel.
  void cancel();
  // True once on_closed has run.
  bool closed() const;
  explicit operator bool() const { return state_ != nullptr; }

private:
  std::shared_ptr<detail::watch_state> state_;
};

class client {
public:
  // Never fails: a bad server URL or TLS material is reported by the first request.
  explicit client(config cfg);
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  const config& cfg() const;

  // --- Generic requests -----------------------------------------------------------------
  void send(request req, response_callback done);
  expected<response> send_sync(request req);

  // --- Verbs. Each returns the decoded JSON body. Sync forms block; async forms call
  // `done` on the io thread. -------------------------------------------------------------
  expected<json::value> get(const resource_ref& ref);
  void get(const resource_ref& ref, json_callback done);

  // One page: the list object (kind XList, metadata.resourceVersion/continue, items).
  expected<json::value> list(const resource_ref& ref, const list_options& opts = {});
  void list(const resource_ref& ref, const list_options& opts, json_callback done);
  // All pages, following metadata.continue; returns one list object holding every item and
  // the resourceVersion of the snapshot. An expired continue token (410) restarts as one
  // unpaged list, as client-go's pager does.
  expected<json::value> list_all(const resource_ref& ref, const list_options& opts = {});
  void list_all(const resource_ref& ref, const list_options& opts, json_callback done);

  // POST to the collection of `ref` (its name is ignored).
  expected<json::value> create(const resource_ref& ref, const json::value& body);
  void create(const resource_ref& ref, const json::value& body, json_callback done);
  // PUT to `ref`.
  expected<json::value> update(const resource_ref& ref, const json::value& body);
  void update(const resource_ref& ref, const json::value& body, json_callback done);
  expected<json::value> patch(const resource_ref& ref, patch_type type, const json::value& body,
                              const patch_options& opts = {});
  void patch(const resource_ref& ref, patch_type type, const json::value& body,
             const patch_options& opts, json_callback done);
  // DELETE; returns what the server answers (the object for pods, a Status for others).
  expected<json::value> remove(const resource_ref& ref, const delete_options& opts = {});
  void remove(const resource_ref& ref, const delete_options& opts, json_callback done);

  // The "status" subresource of `ref` (ref.subresource is overridden).
  expected<json::value> update_status(const resource_ref& ref, const json::value& body);
  void update_status(const resource_ref& ref, const json::value& body, json_callback done);
  expected<json::value> patch_status(const resource_ref& ref, patch_type type,
                                     const json::value& body, const patch_options& opts = {});
  void patch_status(const resource_ref& ref, patch_type type, const json::value& body,
                    const patch_options& opts, json_callback done);

  // POST /api/v1/namespaces/NS/pods/POD/binding with a v1 Binding.
  expected<json::value> bind(const binding& b);
  void bind(const binding& b, json_callback done);

  // POST a core/v1 Event to its namespace (metadata.namespace, else the default namespace).
  // Sent in the events lane (lane::events).
  expected<json::value> create_event(const json::value& event);
  void create_event(const json::value& event, json_callback done);

  // --- Watch ------------------------------------------------------------------------------
  // Streams the watch of `ref`'s collection (a set ref.name becomes a metadata.name field
  // selector). on_event_line gets each complete JSON line, undecoded (the view is valid only
  // during the call). on_closed runs exactly once: ok when the server ended the stream
  // cleanly or the watch was cancelled; an error for a non-200 answer (decoded Status,
  // e.g. 410 / 404), a connection failure or a stream broken mid-way. No reconnect, no
  // rate limit, no retry: the caller decides.
  watch_handle watch(const resource_ref& ref, const watch_options& opts,
                     std::function<void(std::string_view line)> on_event_line,
                     std::function<void(expected<ok_t>)> on_closed);

  // Runs `fn` on the io thread (for callers that want to serialize with callbacks).
  void post(std::function<void()> fn);

  // Connections currently idle in the keep-alive pool (for tests).
  std::size_t idle_connections() const;

  // A client that shares this one's connections, io thread and rate limit, and whose requests
  // wait in `which` (those that name no lane of their own; Events stay in lane::events). The
  // connection pool is shut down when the last client sharing it goes.
  std::shared_ptr<client> view(enum lane which);
  // view(lane::background): requests that go after every waiting request of the others, as
  // Kubernetes' API Priority and Fairness ranks a controller's bookkeeping below the nodes' and
  // the scheduler's writes. For parts of one process that write a lot and can wait (the task
  // controller's status writes next to the simulated kubelets' pod statuses in `kozmo local`).
  std::shared_ptr<client> background_view();

private:
  struct view_tag {};
  client(view_tag, std::shared_ptr<detail::client_impl> impl, enum lane which);

  // Blocks on an async verb; an error when called on the io thread.
  expected<json::value> wait(const std::function<void(json_callback)>& start);

  std::shared_ptr<detail::client_impl> impl_;
  enum lane lane_ = lane::normal; // where requests naming no lane wait
};

} // namespace kozmo::client
