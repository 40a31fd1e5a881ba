// The scheduler actor's inspect answers, and the readers of the cell map that wait for it to
// change (GET /v1/inspect/cellmap/since/N, the page's watch): while any waits, the map is
// published twice a second and each reader is answered once it moved past what the reader has,
// or after `hold` with nothing new. Nobody waiting: nothing is computed.
#include "actors/scheduler/inspect_api.hpp"
#include "actors/scheduler/scheduler_actor_state.hpp"

#include <caf/atom.hpp>

#include <chrono>

namespace kozmo::scheduler::shell {
namespace {

constexpr auto tick = std::chrono::milliseconds(500);
// Under the route's deadline (10 s), so that a quiet answer is not a 503.
constexpr std::int64_t hold_ms = 8000;
// More readers than this are answered at once (a poll instead of a watch): memory stays bounded.
constexpr std::size_t max_waiters = 64;

cell_map_journal& journal(scheduler_actor* self) {
  auto& st = self->state;
  if (!st.journal)
    st.journal.emplace(st.cfg.time->now_ms());
  return *st.journal;
}

inspect_reply reply_of(const json::value& v) { return {200, json::dump(v)}; }

} // namespace

inspect_reply answer(scheduler_actor* self, const std::string& path) {
  auto a = answer_inspect(*self->state.core, path, &journal(self), self->state.cfg.time->now_ms());
  return {a.status, std::move(a.body)};
}

void watch_map(scheduler_actor* self, std::uint64_t since, std::function<void(inspect_reply)> done) {
  auto& st = self->state;
  const std::int64_t now = st.cfg.time->now_ms();
  auto& j = journal(self);
  j.publish(st.core->map());
  if (auto delta = j.since(since, now))
    return done(reply_of(*delta));
  if (st.map_waiters.size() >= max_waiters)
    return done(reply_of(j.quiet(now)));
  st.map_waiters.push_back({since, now + hold_ms, std::move(done)});
  if (!st.map_tick_queued) {
    st.map_tick_queued = true;
    self->delayed_send(self, tick, caf::tick_atom::value);
  }
}

void map_tick(scheduler_actor* self) {
  auto& st = self->state;
  st.map_tick_queued = false;
  if (st.map_waiters.empty())
    return;
  const std::int64_t now = st.cfg.time->now_ms();
  auto& j = journal(self);
  j.publish(st.core->map());
  std::vector<scheduler_state::map_waiter> still;
  for (auto& w : st.map_waiters) {
    if (auto delta = j.since(w.since, now))
      w.done(reply_of(*delta));
    else if (now >= w.until_ms)
      w.done(reply_of(j.quiet(now)));
    else
      still.push_back(std::move(w));
  }
  st.map_waiters = std::move(still);
  if (!st.map_waiters.empty()) {
    st.map_tick_queued = true;
    self->delayed_send(self, tick, caf::tick_atom::value);
  }
}

} // namespace kozmo::scheduler::shell
