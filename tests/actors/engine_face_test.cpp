// The engine as a host holds it (include/kozmo/engine.hpp): inspect through a future, and the
// rules the public face states (no leader election without a `lost` callback; no environment).
#include <kozmo/engine.hpp>

#include "runtime/engine_internal.hpp"
#include "runtime/hived_shape.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>

using namespace kozmo;
using namespace std::chrono_literals;

TEST_CASE("engine::inspect answers through a future: the scheduler's view, or 503 without one", "[engine][inspect]") {
  SECTION("before start") {
    engine e(engine_options{});
    auto a = e.inspect("/v1/inspect/clusterstatus");
    REQUIRE(a.wait_for(0s) == std::future_status::ready);
    CHECK(a.get().status == 503);
  }
  SECTION("an engine without a scheduler") {
    engine_options o;
    o.api.embedded = true;
    engine e(o);
    REQUIRE(e.start());
    auto a = e.inspect("/v1/inspect/clusterstatus").get();
    CHECK(a.status == 503);
    CHECK_THAT(a.body, Catch::Contains("the scheduler is not running"));
  }
  SECTION("an engine with the GPU scheduler") {
    engine_options o;
    o.api.embedded = true;
    o.parts.nodes = uniform_nodes(2, 8);
    o.parts.scheduler_config = runtime::hived_config_from_shape(cluster_shape_of(o.parts.nodes));
    engine e(o);
    REQUIRE(e.start());
    auto answer = e.inspect("/v1/inspect/clusterstatus");
    REQUIRE(answer.wait_for(60s) == std::future_status::ready); // once it has recovered its placements
    auto a = answer.get();
    CHECK(a.status == 200);
    CHECK_THAT(a.body, Catch::Contains("physicalCluster") && Catch::Contains("node-1"));
    CHECK(e.inspect("/v1/inspect/nonsense").get().status == 404);
  }
}

TEST_CASE("leader election needs the host to say what losing the lease does", "[engine][leader-election]") {
  engine_options o;
  o.api.embedded = true;
  o.leader_election.enabled = true;
  engine e(o);
  auto st = e.start();
  REQUIRE_FALSE(st);
  CHECK_THAT(st.err().message, Catch::Contains("leader_election.lost"));
}

TEST_CASE("the engine reads no KOZMO_WORKERS: a bad value in the environment does not stop it", "[engine]") {
  ::setenv("KOZMO_WORKERS", "many", 1);
  engine_options o;
  o.api.embedded = true;
  engine e(o);
  auto st = e.start();
  ::unsetenv("KOZMO_WORKERS");
  INFO((st ? "" : st.err().message));
  CHECK(st);
}
