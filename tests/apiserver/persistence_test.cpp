#include "tests/apiserver/fixture.hpp"

#include <filesystem>
#include <unistd.h>

using namespace kozmo;
using namespace kozmo::test;

namespace {
struct temp_dir {
  temp_dir() {
    path = std::filesystem::temp_directory_path() / ("kozmo-apiserver-" + std::to_string(::getpid()) + "-" +
                                                      std::to_string(counter++));
    std::filesystem::remove_all(path);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
  static inline int counter = 0;
};
} // namespace

TEST_CASE("objects, CRDs and the resourceVersion counter survive a restart with a data dir") {
  temp_dir dir;
  std::string uid, rv, kept_rv;
  {
    running_server s(apiserver::server::options{.data_dir = dir.path.string()});
    s.http->post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                 R"({"metadata":{"name":"things.example.com"},"spec":{"group":"example.com","scope":"Namespaced",
                     "names":{"plural":"things","kind":"Thing"},"versions":[{"name":"v1","served":true,"storage":true}]}})");
    s.http->post("/apis/example.com/v1/namespaces/default/things",
                 R"({"kind":"Thing","apiVersion":"example.com/v1","metadata":{"name":"t"},"spec":{"x":1}})");
    auto cm = s.http->post(configmaps, configmap("kept")).json();
    s.http->post(configmaps, configmap("deleted"));
    s.http->del(configmaps + "/deleted");
    uid = str(cm, {"metadata", "uid"});
    kept_rv = str(cm, {"metadata", "resourceVersion"});
    rv = str(s.http->get(configmaps).json(), {"metadata", "resourceVersion"});
  }
  running_server s(apiserver::server::options{.data_dir = dir.path.string()});
  auto cm = s.http->get(configmaps + "/kept");
  REQUIRE(cm.status == 200);
  CHECK(str(cm.json(), {"metadata", "uid"}) == uid);
  CHECK(s.http->get(configmaps + "/deleted").status == 404);
  CHECK(s.http->get("/apis/example.com/v1/namespaces/default/things/t").status == 200);
  auto next = s.http->post(configmaps, configmap("after")).json();
  CHECK(std::stol(str(next, {"metadata", "resourceVersion"})) > std::stol(rv));
  // Watches cannot resume from before the restart: that history is gone.
  auto w = s.watch(configmaps + "?watch=1&resourceVersion=" + kept_rv);
  auto ev = w->next_event();
  REQUIRE(ev);
  CHECK(ev->get_string("type") == "ERROR");
}

TEST_CASE("a second server cannot open a data dir that is in use") {
  temp_dir dir;
  running_server first(apiserver::server::options{.data_dir = dir.path.string()});
  apiserver::server second(apiserver::server::options{.data_dir = dir.path.string()});
  auto port = second.start();
  REQUIRE_FALSE(port.has_value());
  CHECK(port.err().message.find("in use") != std::string::npos);
}
