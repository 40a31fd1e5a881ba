// Persistence of the store under a data directory: a snapshot plus an append-only log.
//
//   <dir>/snapshot.jsonl  first line {"rv":N}, then one {"r":resource,"k":key,"o":object} per object
//   <dir>/journal.jsonl   one line per write since the snapshot:
//                         {"rv":N,"r":...,"k":...,"o":{...}} or {"rv":N,"r":...,"k":...,"d":1}
//
// Every write is appended and flushed to the OS before the client gets its answer, so a killed
// process loses nothing it acknowledged (a lost power supply may lose the last writes). A torn
// last line (crash mid-write) is ignored on load. The log is folded into a new snapshot at open
// and whenever it grows past a threshold; the snapshot is replaced atomically (rename).
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kozmo::apiserver {

class journal {
public:
  struct record {
    std::string resource;
    std::string key;
    json::value object;
  };
  struct loaded_state {
    std::uint64_t rv = 0;
    std::vector<record> objects;
  };

  // Creates the directory if needed, takes its lock (one server per directory) and loads what
  // it holds.
  static expected<std::unique_ptr<journal>> open(const std::string& dir, loaded_state& out);
  ~journal();

  void append_put(std::uint64_t rv, const std::string& resource, const std::string& key, const json::value& obj);
  void append_delete(std::uint64_t rv, const std::string& resource, const std::string& key);
  bool wants_compaction() const { return appended_ >= compact_every_; }
  // Writes a fresh snapshot from `each` (called with a sink per object) and empties the log.
  status compact(std::uint64_t rv,
                 const std::function<void(const std::function<void(const std::string&, const std::string&,
                                                                   const json::value&)>&)>& each);

private:
  journal(std::string dir) : dir_(std::move(dir)) {}
  void append_line(const std::string& line);
  std::string dir_;
  std::FILE* log_ = nullptr;
  int lock_fd_ = -1;
  std::size_t appended_ = 0;
  std::size_t compact_every_ = 20000;
};

} // namespace kozmo::apiserver
