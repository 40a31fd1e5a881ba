#include "actors/controller/leader_elector_actor.hpp"

#include "actors/controller/event_recorder_actor.hpp"
#include "k8s/client/client.hpp"
#include "k8s/metrics/registry.hpp"
#include "messages/atoms.hpp"
#include "messages/local_message.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <random>

namespace kozmo::controller {
namespace {

using steady = std::chrono::steady_clock;

metrics::gauge& leading_gauge() {
  static metrics::gauge g = metrics::add_gauge(
      "kozmo_leader_election_leading", "1 while this replica holds the leader-election Lease, 0 while it stands by");
  return g;
}

// client-go's leader_election_master_status{name} (the Lease's name) beside Kozmo's own gauge,
// and the acquisitions: summed over the replicas, how often leadership changed hands.
void set_leading(const elector_config& cfg, bool leading) {
  static const auto status = metrics::gauges(
      "leader_election_master_status",
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. "
      "'name' is the string used to identify the lease.");
  leading_gauge().set(leading ? 1 : 0);
  status.series({{"name", cfg.lease_name}}).set(leading ? 1 : 0);
}

metrics::counter& transitions() {
  static metrics::counter c =
      metrics::counters("kozmo_leader_transitions_total",
                        "Times this replica took the leader-election Lease (summed over replicas: leadership changes)")
          .series({});
  return c;
}

// A try's answer: the Lease read (or the write's outcome) back on the elector's thread.
struct lease_read {
  std::shared_ptr<expected<json::value>> got;
};
struct lease_written {
  election_core::write w;
  bool succeeded = false;
  std::string message;
  std::shared_ptr<json::value> lease; // what the server answered
  bool release = false;               // the graceful stop's write
};
KOZMO_LOCAL_MESSAGE(lease_read)
KOZMO_LOCAL_MESSAGE(lease_written)

struct elector_state {
  static inline const char* name = "leader-elector";
  std::shared_ptr<client::client> cli;
  elector_config cfg;
  std::unique_ptr<election_core> core;
  bool in_flight = false;
  bool leader = false;     // started_leading was called
  bool over = false;       // stopped_leading was called (or released)
  std::string resource_version; // of the Lease as last read or written
  std::mt19937 rng{std::random_device{}()};
  caf::response_promise release_reply;
  // A graceful stop came while a try was out: the release waits for its answer, whose write
  // moves the Lease's resourceVersion (released with the older one, it met a 409 and the
  // standby waited a whole leaseDuration).
  bool release_pending = false;
};

using elector_actor = caf::stateful_actor<elector_state>;

client::resource_ref lease_ref(const elector_config& c, bool named = true) {
  return {"coordination.k8s.io", "v1", "leases", c.lease_namespace, named ? c.lease_name : "", ""};
}

std::chrono::milliseconds next_tick(elector_actor* self) {
  auto& st = self->state;
  auto retry = st.cfg.timing.retry_period;
  if (st.leader)
    return retry;
  std::uniform_real_distribution<double> jitter(0.0, 1.2);
  return std::chrono::milliseconds(static_cast<long long>(retry.count() * (1.0 + jitter(st.rng))));
}

std::string resource_version_of(const json::value& lease) {
  const json::value* md = lease.find("metadata");
  return md ? md->get_string("resourceVersion") : std::string();
}

// client-go's Event when a candidate takes the Lease: about the Lease, "<identity> became leader".
void record_became_leader(const elector_state& st, const json::value* lease) {
  event_note note;
  note.about.kind = "Lease";
  note.about.api_version = "coordination.k8s.io/v1";
  note.about.namespace_ = st.cfg.lease_namespace;
  note.about.name = st.cfg.lease_name;
  if (const json::value* md = lease ? lease->find("metadata") : nullptr)
    note.about.uid = md->get_string("uid");
  note.source.component = "kozmo-controller";
  note.type = "Normal";
  note.reason = "LeaderElection";
  note.message = st.core->identity() + " became leader";
  record(st.cfg.recorder, std::move(note));
}

json::value lease_body(const elector_config& c, const lease_record& r, const std::string& rv) {
  json::value body;
  body["apiVersion"] = "coordination.k8s.io/v1";
  body["kind"] = "Lease";
  body["metadata"]["name"] = c.lease_name;
  body["metadata"]["namespace"] = c.lease_namespace;
  if (!rv.empty())
    body["metadata"]["resourceVersion"] = rv;
  body["spec"] = lease_spec_json(r);
  return body;
}

void lose(elector_actor* self, const std::string& why) {
  auto& st = self->state;
  if (st.over)
    return;
  st.over = true;
  set_leading(st.cfg, false);
  spdlog::error("leader election: {} lost the lease {}/{}: {}", st.core->identity(), st.cfg.lease_namespace,
                st.cfg.lease_name, why);
  if (st.leader && st.cfg.stopped_leading)
    st.cfg.stopped_leading();
  self->quit();
}

void try_once(elector_actor* self) {
  auto& st = self->state;
  if (st.in_flight || st.over)
    return;
  st.in_flight = true;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  st.cli->get(lease_ref(st.cfg), [me](expected<json::value> r) {
    caf::anon_send(me, lease_read{std::make_shared<expected<json::value>>(std::move(r))});
  });
}

void write(elector_actor* self, const election_core::write& w, bool release = false) {
  auto& st = self->state;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  auto done = [me, w, release](expected<json::value> r) {
    lease_written lw{w, r.has_value(), r ? std::string() : r.err().message, nullptr, release};
    if (r)
      lw.lease = std::make_shared<json::value>(std::move(*r));
    caf::anon_send(me, std::move(lw));
  };
  auto body = lease_body(st.cfg, w.record, w.what == election_core::write::kind::update ? st.resource_version : "");
  if (w.what == election_core::write::kind::create)
    st.cli->create(lease_ref(st.cfg, false), body, done);
  else
    st.cli->update(lease_ref(st.cfg), body, done);
}

// The graceful stop's write: the Lease handed back (holder cleared), at the resourceVersion
// last read or written.
void release_now(elector_actor* self) {
  auto& st = self->state;
  st.release_pending = false;
  election_core::write w;
  w.what = election_core::write::kind::update;
  w.record = st.core->release_record(micro_time(st.cfg.time->now()));
  write(self, w, true);
}

caf::behavior elector(elector_actor* self, std::shared_ptr<client::client> cli, elector_config cfg) {
  auto& st = self->state;
  st.cli = std::move(cli);
  if (cfg.identity.empty())
    cfg.identity = default_identity();
  st.core = std::make_unique<election_core>(cfg.identity, cfg.timing);
  st.cfg = std::move(cfg);
  set_leading(st.cfg, false);
  transitions(); // listed at 0 from the start
  spdlog::info("leader election: {} is a candidate for the lease {}/{}", st.core->identity(),
               st.cfg.lease_namespace, st.cfg.lease_name);
  self->send(self, atoms::renew_atom::value);
  return {
      [self](atoms::renew_atom) {
        auto& st = self->state;
        if (st.over)
          return;
        if (st.leader && !st.core->leading(steady::now()))
          return lose(self, "no renewal succeeded for " + std::to_string(st.cfg.timing.renew_deadline.count()) +
                                " ms (renewDeadline)");
        try_once(self);
        self->delayed_send(self, next_tick(self), atoms::renew_atom::value);
      },
      [self](lease_read& r) {
        auto& st = self->state;
        if (st.over) {
          if (st.release_pending) {
            st.in_flight = false;
            if (*r.got)
              st.resource_version = resource_version_of(**r.got);
            release_now(self);
          }
          return;
        }
        std::optional<lease_record> current;
        if (*r.got) {
          current = lease_record_from(**r.got);
          st.resource_version = resource_version_of(**r.got);
        } else if (r.got->err().code != 404) {
          st.in_flight = false;
          spdlog::warn("leader election: cannot read the lease {}/{}: {}", st.cfg.lease_namespace,
                       st.cfg.lease_name, r.got->err().message);
          return;
        }
        auto w = st.core->attempt(current, micro_time(st.cfg.time->now()), steady::now());
        if (w.what == election_core::write::kind::none) {
          st.in_flight = false;
          return;
        }
        write(self, w);
      },
      [self](lease_written& lw) {
        auto& st = self->state;
        st.in_flight = false;
        if (lw.release) {
          set_leading(st.cfg, false);
          if (!lw.succeeded)
            spdlog::warn("leader election: could not release the lease: {}", lw.message);
          st.release_reply.deliver(caf::unit);
          self->quit();
          return;
        }
        if (st.over) {
          if (st.release_pending) {
            if (lw.lease)
              st.resource_version = resource_version_of(*lw.lease);
            release_now(self);
          }
          return;
        }
        st.core->written(lw.w, lw.succeeded, steady::now());
        if (lw.lease) {
          st.resource_version = resource_version_of(*lw.lease);
        } else {
          spdlog::debug("leader election: write of the lease failed: {}", lw.message);
        }
        if (!st.leader && st.core->leading(steady::now())) {
          st.leader = true;
          spdlog::info("leader election: {} now leads (lease {}/{})", st.core->identity(), st.cfg.lease_namespace,
                       st.cfg.lease_name);
          set_leading(st.cfg, true);
          transitions().inc();
          record_became_leader(st, lw.lease.get());
          if (st.cfg.started_leading)
            st.cfg.started_leading();
        }
      },
      [self](atoms::release_atom) -> caf::result<caf::unit_t> {
        auto& st = self->state;
        if (!st.leader || st.over || !st.core->leading(steady::now())) {
          st.over = true;
          self->quit();
          return caf::unit;
        }
        st.over = true; // no further tries; the release answers
        st.release_reply = self->make_response_promise();
        if (st.in_flight)
          st.release_pending = true; // after the try's answer
        else
          release_now(self);
        return st.release_reply;
      },
  };
}

} // namespace

caf::actor spawn_leader_elector(caf::actor_system& sys, std::shared_ptr<client::client> cli, elector_config cfg) {
  return sys.spawn(elector, std::move(cli), std::move(cfg));
}

} // namespace kozmo::controller
