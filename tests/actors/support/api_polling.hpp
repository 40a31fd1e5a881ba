// What the actor tests ask of the API server while actors work: poll an object until it
// reaches a state, and read an object's Events as text to search.
#pragma once

#include "k8s/client/client.hpp"
#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace kozmo::test {

// Fetches every 100 ms until `pred` holds or `timeout` passes; returns the last value fetched
// (null when none was), so a failing CHECK can show how far the object got.
inline json::value poll_until(const std::function<expected<json::value>()>& fetch,
                              const std::function<bool(const json::value&)>& pred,
                              std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  json::value last;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto v = fetch()) {
      last = *v;
      if (pred(last))
        return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return last;
}

// The Events about `name` in `ns`, one line each: "reason: message", or "type reason: message"
// with `with_type`.
inline std::string events_text(client::client& cli, const std::string& ns, const std::string& name,
                               bool with_type = false) {
  client::list_options lo;
  lo.field_selector = "involvedObject.name=" + name;
  auto list = cli.list({"", "v1", "events", ns, "", ""}, lo);
  std::string out;
  if (list)
    for (const auto& ev : list->find("items")->as_array())
      out += (with_type ? ev.get_string("type") + " " : std::string()) + ev.get_string("reason") + ": " +
             ev.get_string("message") + "\n";
  return out;
}

} // namespace kozmo::test
