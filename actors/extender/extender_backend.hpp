// The seam between Kozmo's HTTP routes and whatever answers them: the extender actor (which
// owns a scheduler core, extender_actor.hpp), the scheduler actor in `kozmo local` (inspect
// only, wired in runtime/engine_http.cpp), or a test's direct backend.
//
// Rules for implementations:
//  1. Every call answers exactly once through `done`. `done` may run on any thread, now or
//     later (an actor answers from its own thread); the callers cope with both.
//  2. An error's `code` becomes the HTTP status with HiveD's body {"code", "message"}; a user
//     error is 4xx (bad request, wrong node), a platform error 5xx. Outcomes kube-scheduler must
//     show to the user (a malformed scheduling spec, a failed binding write) are NOT errors:
//     they travel in the result's Error field with HTTP 200, because kube-scheduler drops the
//     body of a non-200 answer and would only log "code 400".
//  3. inspect answers with scheduler::answer_inspect (inspect_api.hpp), so that every front
//     door gives the same bytes.
#pragma once

#include "actors/extender/extender_codec.hpp"
#include "actors/scheduler/inspect_api.hpp"
#include "k8s/error.hpp"

#include <functional>
#include <string>

namespace kozmo::extender {

using scheduler::inspect_kind;
using scheduler::inspect_query;

template <class T>
using reply_fn = std::function<void(expected<T>)>;
using inspect_fn = std::function<void(scheduler::inspect_answer)>;

class extender_backend {
public:
  virtual ~extender_backend() = default;
  virtual void filter(filter_args args, reply_fn<filter_result> done) = 0;
  virtual void preempt(preempt_args args, reply_fn<preempt_result> done) = 0;
  virtual void bind(bind_args args, reply_fn<bind_result> done) = 0;
  // GET `path` (an inspect path: parse_inspect_path accepts it).
  virtual void inspect(std::string path, inspect_fn done) = 0;
  // GET /readyz: "" when ready, else why not (answered 503).
  virtual std::string not_ready() { return {}; }
};

} // namespace kozmo::extender
