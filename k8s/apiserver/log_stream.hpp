// GET pods/<name>/log?follow=true: the rest of a running container's log as it grows. The HTTP
// layer writes `initial` first, then calls poll() on a timer and writes what it returns until
// `done`. No networking here: the stream reads the log file (pod_log_layout.hpp) and the pod in
// the store.
#pragma once

#include "k8s/apiserver/store.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace kozmo::apiserver {

struct log_follow {
  std::string path;        // the run's log file
  std::uint64_t offset = 0; // where `initial` ended
  std::string ns, pod, uid, container;
  bool init = false;
  int run = 0;             // the restartCount of the followed run
  std::optional<std::int64_t> limit_bytes; // what may still be sent (after `initial`)
  bool timestamps = false;
  bool line_start = true;  // the output so far ended a line (a timestamp starts the next)
};

class log_stream {
public:
  log_stream(log_follow f, std::string initial) : f_(std::move(f)), initial_(std::move(initial)) {}

  std::string take_initial() { return std::move(initial_); }

  struct chunk {
    std::string data;
    bool done = false;
  };
  // What was appended since the last call. Done once the followed run is over (the container
  // no longer runs it, or the pod is gone) and its file is read to the end, or limitBytes is spent.
  chunk poll(const store& st);

private:
  bool still_running(const store& st) const;

  log_follow f_;
  std::string initial_;
};

} // namespace kozmo::apiserver
