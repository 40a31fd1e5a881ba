// What becomes of an Event note: Kubernetes' event correlation (client-go's EventCorrelator),
// so that a controller may report the same thing every pass without flooding the API server
// or `kubectl describe`. Pure: no I/O; the caller passes the time.
//
// Rules, in the order they apply (client-go's defaults):
//  1. Spam filter: each source (component, host) and object has a token bucket of 25 notes,
//     refilled by one every 5 minutes; a note without a token is dropped.
//  2. Aggregation: notes about one object with the same source, type and reason but different
//     messages are "similar". From the 10th distinct message within 10 minutes on, they count
//     on one Event whose message reads "(combined from similar events): <latest message>".
//  3. Dedup: a note that repeats an Event already recorded (same object, source, type,
//     reason and message) creates nothing new: that Event's count goes up, and its
//     lastTimestamp (and message) are patched.
// Memory is bounded: each cache keeps its 4096 most recently used keys.
#pragma once

#include "actors/controller/event_note.hpp"
#include "k8s/json/value.hpp"

#include <chrono>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>

namespace kozmo::controller {

struct correlator_options {
  int spam_burst = 25;
  std::chrono::seconds spam_refill{300}; // one token per this much time
  std::size_t max_similar = 10;
  std::chrono::seconds similar_window{600};
  std::size_t cache_size = 4096;
};

// What to send to the API server for one note.
struct event_write {
  enum class kind { create, update, drop } what = kind::drop;
  std::string key;   // the Event the note counts on (create and update)
  std::string ns;
  std::string name;  // the Event's metadata.name
  json::value body;  // create: the whole Event; update: a merge patch of count, lastTimestamp, message
};

class event_correlator {
public:
  using time_point = std::chrono::system_clock::time_point;

  explicit event_correlator(correlator_options opts = {});

  event_write observe(const event_note& note, time_point now);
  // The Event `key` is gone (a patch answered 404: expired): the whole Event as it should be
  // now, to create again under a new name; a drop when the key is unknown.
  event_write recreate(const std::string& key, time_point now);

  std::size_t size() const { return events_.order.size(); }

private:
  // An LRU map: `order` front is the most recently used key.
  template <class V>
  struct lru {
    std::list<std::pair<std::string, V>> order;
    std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index;
    V* find(const std::string& key);
    V& insert(const std::string& key, V value, std::size_t capacity);
  };
  struct bucket {
    double tokens = 0;
    time_point last;
  };
  struct similar {
    std::list<std::string> messages; // distinct messages seen in the window (bounded)
    time_point last;
  };
  // What is kept of an Event written: enough to count on it and to write it again.
  struct recorded {
    event_note note;   // the latest note counted on it (its message, as combined)
    std::string name;
    time_point first;
    int count = 0;
  };

  bool take_token(const std::string& spam_key, time_point now);
  std::string unique_name(const std::string& object_name, time_point now);

  correlator_options opts_;
  lru<bucket> buckets_;
  lru<similar> similar_;
  lru<recorded> events_;
  std::uint64_t sequence_ = 0;
};

} // namespace kozmo::controller
