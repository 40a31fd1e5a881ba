// The one way a controller actor watches a kind (actors/controller/watch_into.hpp), over real
// sockets to the embedded API server: the actor has seen every listed object before its gate
// opens (also when it joins a watch listed long before), the work it held runs after, in the
// order it came, and a start-up LIST the server refuses is read again after a growing back-off.
#include "actors/controller/watch_into.hpp"
#include "k8s/apiserver/server.hpp"
#include "k8s/client/client.hpp"
#include "k8s/model/custom_object.hpp"
#include "messages/atoms.hpp"
#include "messages/watch_messages.hpp"
#include "tests/actors/controller/served_system.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <regex>
#include <set>
#include <thread>

using namespace kozmo;
using namespace std::chrono_literals;

namespace {

using work_atom = caf::atom_constant<caf::atom("work")>;
using log_atom = caf::atom_constant<caf::atom("log")>;

client::resource_ref configmaps(const std::string& name = {}) { return {"", "v1", "configmaps", "default", name, ""}; }

json::value configmap(const std::string& name) {
  return *json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name + R"("}})");
}

// A controller-like actor: it keeps the names of the config maps it has seen and writes down,
// for each piece of work it runs, how many it had seen by then.
struct probe_state {
  static inline const char* name = "watch_probe";
  controller::listed_gate gate;
  std::set<std::string> seen;
  std::string log; // one line per piece of work run
};

using probe = caf::stateful_actor<probe_state>;

void note(probe* self, const std::string& what) {
  self->state.log += what + " saw " + std::to_string(self->state.seen.size()) + "\n";
}

caf::behavior probe_handlers(probe* self) {
  self->state.gate.on_open = [self] { note(self, "listed"); };
  // Held from the start: the actor handles no message before its set-up ends.
  self->state.gate.when_listed([self] { note(self, "held at start"); });
  return {
      [self](object_event<k8s::custom_object>& ev) {
        if (ev.type != watch::event_type::deleted)
          self->state.seen.insert(ev.object->metadata.name);
      },
      [self](work_atom, std::string& what) { self->state.gate.when_listed([self, what] { note(self, what); }); },
      [self](log_atom) { return self->state.log; },
  };
}

caf::behavior watching_probe(probe* self, std::shared_ptr<client::client> cli) {
  watch::watch_config wc;
  wc.resource = configmaps();
  controller::watch_into<k8s::custom_object>(self, std::move(cli), wc, &self->state.gate);
  return probe_handlers(self);
}

caf::behavior subscribed_probe(probe* self, caf::actor shared_watch) {
  controller::subscribe_to(self, shared_watch, &self->state.gate);
  return probe_handlers(self);
}

caf::behavior listing_probe(probe* self, std::shared_ptr<client::client> cli) {
  controller::list_into(self, std::move(cli), configmaps(), "probe", self->state.gate, [self](const json::value& list) {
    for (const auto& item : list.find("items")->as_array())
      self->state.seen.insert(item.at_path({"metadata"})->get_string("name"));
  });
  return probe_handlers(self);
}

struct fixture : test::served_system {
  void create(const std::string& name) { REQUIRE(cli->create(configmaps(), configmap(name)).has_value()); }

  std::string log_of(const caf::actor& a) {
    std::string out;
    caf::scoped_actor self{*sys};
    self->request(a, 10s, log_atom::value)
        .receive([&](std::string& log) { out = std::move(log); }, [&](caf::error& e) { FAIL(sys->render(e)); });
    return out;
  }

  // The actor's log once it has `lines` lines (or what it has when that takes too long).
  std::string log_when(const caf::actor& a, std::size_t lines) {
    std::string log;
    for (int i = 0; i < 200; ++i) {
      log = log_of(a);
      if (static_cast<std::size_t>(std::count(log.begin(), log.end(), '\n')) >= lines)
        break;
      std::this_thread::sleep_for(50ms);
    }
    return log;
  }
};

// The delays of the "retrying in N ms" lines the default logger wrote.
std::vector<long> retry_delays(const std::vector<std::string>& lines) {
  static const std::regex delay(R"(probe: cannot list configmaps: .*\(retrying in (\d+) ms\))");
  std::vector<long> out;
  std::smatch m;
  for (const auto& l : lines)
    if (std::regex_search(l, m, delay))
      out.push_back(std::stol(m[1]));
  return out;
}

} // namespace

TEST_CASE("an actor that watches a kind sees every listed object before it counts as listed, and the work it held "
          "runs after, in arrival order",
          "[controller][watch_into]") {
  fixture f;
  for (const auto* name : {"a", "b", "c"})
    f.create(name);
  // The first LISTs are answered 500: the client tries again, and the kind is listed later.
  f.server.faults().fail_next(2, 500, "/api/v1/namespaces/default/configmaps");
  auto a = f.sys->spawn(watching_probe, f.cli);
  caf::anon_send(a, work_atom::value, std::string("first"));
  caf::anon_send(a, work_atom::value, std::string("second"));

  CHECK(f.log_when(a, 4) == "listed saw 3\nheld at start saw 3\nfirst saw 3\nsecond saw 3\n");

  // Once listed, work runs at once, and the actor keeps seeing the kind's changes.
  f.create("d");
  for (int i = 0; i < 100 && f.log_of(a).find("later saw 4") == std::string::npos; ++i) {
    caf::anon_send(a, work_atom::value, std::string("later"));
    std::this_thread::sleep_for(50ms);
  }
  CHECK(f.log_of(a).find("later saw 4") != std::string::npos);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

TEST_CASE("an actor that joins a watch listed long ago has seen its objects before it counts as listed",
          "[controller][watch_into]") {
  fixture f;
  for (const auto* name : {"a", "b", "c"})
    f.create(name);
  watch::watch_config wc;
  wc.resource = configmaps();
  auto shared = watch::spawn_watch<k8s::custom_object>(*f.sys, f.cli, wc);
  {
    caf::scoped_actor self{*f.sys};
    self->request(shared, 10s, atoms::synced_atom::value)
        .receive([](caf::ok_atom) {}, [&](caf::error& e) { FAIL(f.sys->render(e)); });
  }
  auto a = f.sys->spawn(subscribed_probe, shared);
  CHECK(f.log_when(a, 2) == "listed saw 3\nheld at start saw 3\n");
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(shared, caf::exit_reason::user_shutdown);
}

TEST_CASE("a start-up LIST the server refuses is read again after a growing back-off, and held work waits for its "
          "answer",
          "[controller][watch_into]") {
  fixture f;
  f.create("a");
  f.create("b");
  auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  ring->set_pattern("%v");
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("watch_into_test", ring));
  // 403 is an answer the client does not retry: the actor's reader must.
  f.server.faults().fail_next(3, 403, "/api/v1/namespaces/default/configmaps");
  auto a = f.sys->spawn(listing_probe, f.cli);
  caf::anon_send(a, work_atom::value, std::string("asked early"));

  auto log = f.log_when(a, 3);
  spdlog::set_default_logger(previous);
  CHECK(log == "listed saw 2\nheld at start saw 2\nasked early saw 2\n");
  CHECK(f.server.faults().failures_left() == 0);
  // One retry per refusal, each after a longer wait than the one before.
  auto delays = retry_delays(ring->last_formatted());
  REQUIRE(delays.size() == 3);
  CHECK(delays[0] >= 250);
  CHECK(delays[1] > delays[0]);
  CHECK(delays[2] > delays[1]);
  caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}
