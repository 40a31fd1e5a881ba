// The cache store over real sockets to the embedded API server: entries are TaskCacheEntry
// objects, two owners asking for one key's reservation at once get one holder, stored outputs
// reach the waiting task as cache_changed and are what a later lookup finds, and the key of a
// file:// input follows the file's content.
#include "tests/support/json_doc.hpp"
#include "actors/tasks/cache_store_actor.hpp"
#include "k8s/client/client.hpp"

#include "tests/actors/support/server_with_crds.hpp"

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace kozmo;
using namespace kozmo::tasks;
using test::doc;
using namespace std::chrono_literals;

namespace {

struct fixture : test::server_with_crds {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::actor store;

  fixture() {
    REQUIRE(cli->create({"", "v1", "namespaces", "", "", ""},
                        doc(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ml"}})"))
                .has_value());
    sys = std::make_unique<caf::actor_system>(cfg);
    store = spawn_cache_store(*sys, {cli, nullptr});
  }
  ~fixture() {
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    sys.reset();
  }

  cache_answer ask(caf::scoped_actor& self, cache_ask a) {
    cache_answer out;
    self->request(store, 10s, cache_request{"ml", std::move(a), 10s})
        .receive([&](cache_reply& r) { out = std::move(r.answer); }, [&](caf::error& e) { FAIL(to_string(e)); });
    return out;
  }
};

cache_ask first_ask(cache_op op, const std::string& owner, std::map<std::string, std::string> inputs = {}) {
  cache_ask a;
  a.op = op;
  a.signature = "type=container\nversion=1\n";
  a.inputs = std::move(inputs);
  a.owner = owner;
  return a;
}

} // namespace

TEST_CASE_METHOD(fixture, "two owners reserving one key at once: one holds it, the other is told when outputs are stored") {
  caf::scoped_actor a{*sys}, b{*sys};
  // Both asks are out before either answer is read.
  a->send(store, cache_request{"ml", first_ask(cache_op::reserve, "taskexecution/a"), 10s});
  b->send(store, cache_request{"ml", first_ask(cache_op::reserve, "taskexecution/b"), 10s});
  cache_answer ra, rb;
  a->receive([&](cache_reply& r) { ra = std::move(r.answer); });
  b->receive([&](cache_reply& r) { rb = std::move(r.answer); });
  REQUIRE(ra.error.empty());
  REQUIRE(rb.error.empty());
  CHECK(ra.key == rb.key);
  CHECK(ra.key.size() == 64);
  bool a_holds = holds_reservation(ra.entry, "taskexecution/a", ra.at);
  bool b_holds = holds_reservation(rb.entry, "taskexecution/b", rb.at);
  CHECK(a_holds != b_holds);

  // The entry is an object users can read.
  auto obj = cli->get({"kozmo.io", "v1alpha1", "taskcacheentries", "ml", cache_entry_name(ra.key), ""});
  REQUIRE(obj.has_value());
  CHECK(obj->at_path({"spec", "reservation", "owner"})->as_string() == (a_holds ? "taskexecution/a" : "taskexecution/b"));

  // The holder stores its outputs: the waiting one hears of it, and a lookup finds them.
  auto& holder = a_holds ? a : b;
  auto& waiter = a_holds ? b : a;
  cache_ask st;
  st.op = cache_op::store;
  st.key = ra.key;
  st.owner = a_holds ? "taskexecution/a" : "taskexecution/b";
  st.outputs = {"file:///out/", "ml/holder", "uid-h", std::chrono::system_clock::now()};
  auto stored = ask(holder, st);
  CHECK(stored.error.empty());
  bool told = false;
  waiter->receive([&](cache_changed& c) { told = c.key == ra.key && c.ns == "ml"; }, caf::after(5s) >> [] {});
  CHECK(told);
  cache_ask look;
  look.op = cache_op::lookup;
  look.key = ra.key;
  auto found = ask(waiter, look);
  REQUIRE(found.entry);
  REQUIRE(found.entry->outputs);
  CHECK(found.entry->outputs->task == "ml/holder");
  CHECK_FALSE(found.entry->reservation);
}

TEST_CASE_METHOD(fixture, "the key of a file:// input follows its content, not its path") {
  auto dir = std::filesystem::temp_directory_path() / ("kozmo-cache-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "tree");
  auto write = [&](const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(dir / "in.txt", "hello");
  write(dir / "tree" / "a", "1");
  caf::scoped_actor self{*sys};
  auto key_of = [&](const std::string& uri) {
    auto a = ask(self, first_ask(cache_op::lookup, "taskexecution/x", {{"text", uri}}));
    INFO(a.error);
    return a.key;
  };
  std::string file = "file://" + (dir / "in.txt").string();
  auto k1 = key_of(file);
  CHECK(k1.size() == 64);
  CHECK(key_of(file) == k1);
  write(dir / "in.txt", "HELLO");
  CHECK(key_of(file) != k1);
  std::string tree = "file://" + (dir / "tree").string();
  auto t1 = key_of(tree);
  write(dir / "tree" / "b", "2");
  CHECK(key_of(tree) != t1);
  // Not there: an answer with an error (the task runs uncached), not a crash or a hang.
  auto missing = ask(self, first_ask(cache_op::lookup, "taskexecution/x", {{"text", "file:///nonexistent/x"}}));
  CHECK(missing.error.find("/nonexistent/x does not exist") != std::string::npos);
  // Other schemes: by URI.
  CHECK(*digest_by_content("s3://b/k") == *digest_by_uri("s3://b/k"));
  std::filesystem::remove_all(dir);
}
