// What an MPIJob's actor keeps of the launcher's objects, as reconcile then reads it.
#include "actors/training/mpi_view.hpp"

#include <catch2/catch.hpp>

using namespace kozmo;
using namespace kozmo::training;

namespace {

json::value object(const std::string& text) { return *json::parse(text); }

} // namespace

TEST_CASE("the job's ConfigMap and the launcher's RBAC objects are seen; others are not") {
  mpi_view v;
  v.see("pi", "configmaps", object(R"({"metadata":{"name":"pi-config"},"data":{"hostfile":"pi-worker-0 slots=1"}})"), false);
  v.see("pi", "configmaps", object(R"({"metadata":{"name":"other-config"},"data":{"hostfile":"x"}})"), false);
  v.see("pi", "roles", object(R"({"metadata":{"name":"pi-launcher"},"rules":[{"verbs":["get"]}]})"), false);
  v.see("pi", "serviceaccounts", object(R"({"metadata":{"name":"pi-launcher"}})"), false);
  v.see("pi", "secrets", object(R"({"metadata":{"name":"pi-ssh"}})"), false);
  observed world;
  v.fill(world);
  REQUIRE(world.mpi_config);
  CHECK(world.mpi_config->at("hostfile") == "pi-worker-0 slots=1");
  CHECK(world.mpi_rbac == std::set<std::string>{"roles/pi-launcher", "serviceaccounts/pi-launcher"});
  REQUIRE(world.mpi_role_rules);
  CHECK(json::dump(*world.mpi_role_rules) == R"([{"verbs":["get"]}])");

  // Deleted: the next pass creates them again.
  v.see("pi", "configmaps", object(R"({"metadata":{"name":"pi-config"}})"), true);
  v.see("pi", "roles", object(R"({"metadata":{"name":"pi-launcher"}})"), true);
  observed after;
  v.fill(after);
  CHECK_FALSE(after.mpi_config);
  CHECK(after.mpi_rbac == std::set<std::string>{"serviceaccounts/pi-launcher"});
  CHECK_FALSE(after.mpi_role_rules);
}
