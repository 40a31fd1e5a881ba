// Messages of the task controller: between task actors, the resource manager and the pod
// template store.
//
//   task ──pool_acquire (request)──▶ resource manager ──pool_answer
//   resource manager ──pool_granted──▶ task        (later: a waiting request was served)
//   task ──pool_release──▶ resource manager        (a terminal phase, a delete)
//   task ──template_request (request)──▶ template store ──template_reply
//
// The resource manager answers nothing before it has rebuilt the tokens held from the tasks'
// statuses (restart safety): requests that arrive earlier wait.
#pragma once

#include "k8s/json/value.hpp"
#include "messages/local_message.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace kozmo {

// One token of `pool` for the task whose uid is `token`; the sender is told later
// (pool_granted) when it has to wait now.
struct pool_acquire {
  std::string pool;
  std::string token;
  std::string ns;
  std::string project;
  std::string task;          // "ns/name"
  std::int64_t since_ms = 0; // when the task first asked (its place in the queue)
};
struct pool_answer {
  bool granted = false;
  bool no_pool = false; // waiting because the pool does not exist
  std::string message;  // why it waits, for the task's status
};
struct pool_granted {
  std::string pool;
  std::string token;
};
// Gives the token back, or withdraws a waiting request.
struct pool_release {
  std::string pool;
  std::string token;
};

// The PodTemplate `name` for a task of namespace `ns` (the platform's namespace is looked in
// when `ns` has none).
struct template_request {
  std::string ns;
  std::string name;
};
struct template_reply {
  std::string name;
  std::shared_ptr<const json::value> found; // the PodTemplate object; null: none exists
};

KOZMO_LOCAL_MESSAGE(pool_acquire)
KOZMO_LOCAL_MESSAGE(pool_answer)
KOZMO_LOCAL_MESSAGE(pool_granted)
KOZMO_LOCAL_MESSAGE(pool_release)
KOZMO_LOCAL_MESSAGE(template_request)
KOZMO_LOCAL_MESSAGE(template_reply)

} // namespace kozmo
