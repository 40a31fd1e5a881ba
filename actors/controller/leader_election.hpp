// Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules (its
// leaderelection package, which controller-runtime's --leader-elect uses). Pure: the actor
// (leader_elector_actor.hpp) reads and writes the Lease; this decides what to write and who
// leads.
//
// - A try: read the Lease. None: create it holding it. Held by another and its record has not
//   changed for leaseDuration (this candidate's own setting, as client-go), as timed by this
//   process's own clock since it last saw the record change (not by the record's renewTime:
//   the writers' clocks may disagree): take it over. Held by another and fresh: wait. Held by us: renew.
// - Writes carry the read resourceVersion: of two candidates racing, one gets a 409 and waits.
// - A taker sets acquireTime and adds one to leaseTransitions; a renewal keeps both.
// - The leader tries every retryPeriod; when no renewal has succeeded for renewDeadline it has
//   lost, whatever the Lease says (another may have taken over by then).
// - Releasing (a graceful stop) writes an empty holder with a 1 s lease, so that a standby
//   takes over at its next try instead of after leaseDuration.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kozmo::json {
class value;
}

namespace kozmo::controller {

// The Lease's spec (times as RFC 3339 with microseconds, as client-go writes MicroTime).
struct lease_record {
  std::string holder;                 // holderIdentity
  std::int64_t lease_duration_s = 0;  // leaseDurationSeconds
  std::string acquire_time;           // acquireTime
  std::string renew_time;             // renewTime
  std::int64_t transitions = 0;       // leaseTransitions
  bool operator==(const lease_record&) const = default;
};

// The Lease's spec read from its JSON (a missing spec is an empty record).
lease_record lease_record_from(const json::value& lease);
// The JSON of a spec (for a create's or an update's body).
json::value lease_spec_json(const lease_record& r);

struct election_timing {
  std::chrono::milliseconds lease_duration{15000}; // client-go's and controller-runtime's defaults
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

// An error naming the field when the timing cannot work (client-go refuses the same):
// leaseDuration > renewDeadline > retryPeriod * 1.2 (its jitter factor), all positive.
std::optional<std::string> check_timing(const election_timing& t);

class election_core {
public:
  using steady = std::chrono::steady_clock::time_point;

  election_core(std::string identity, election_timing timing);

  struct write {
    enum class kind { none, create, update } what = kind::none;
    lease_record record;                // what to write
  };

  // A try: `current` is the Lease as read (nullopt: it does not exist); `now_wall` the RFC 3339
  // time to write; `now` this process's monotonic time. Says what to write, if anything.
  write attempt(const std::optional<lease_record>& current, const std::string& now_wall, steady now);
  // The answer to the write `attempt` asked for: succeeded or not (a conflict, an error).
  void written(const write& w, bool succeeded, steady now);
  // Whether this process leads at `now`: its last successful write was at most renewDeadline ago.
  bool leading(steady now) const;
  // The holder as last seen ("" when none or not yet read).
  const std::string& observed_holder() const { return observed_.holder; }
  const std::string& identity() const { return identity_; }
  const election_timing& timing() const { return timing_; }

  // The record a graceful stop writes: no holder, a 1 s lease, our transitions kept.
  lease_record release_record(const std::string& now_wall) const;

private:
  std::string identity_;
  election_timing timing_;
  lease_record observed_;
  steady observed_at_{};
  bool have_observed_ = false;
  std::optional<steady> renewed_at_; // last successful write of ours
};

// RFC 3339 with microseconds in UTC ("2026-11-25T05:10:02.123456Z") for a wall-clock time.
std::string micro_time(std::chrono::system_clock::time_point t);

// Who this process is in the election: $POD_NAME (the downward API) or the host name, plus
// "_" and a random suffix, as controller-runtime does, so that two processes on one host differ.
std::string default_identity();

} // namespace kozmo::controller
