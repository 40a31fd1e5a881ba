#include "actors/watch/watch_cache.hpp"

#include <catch2/catch.hpp>

#include <random>

using namespace kozmo::watch;

namespace {

struct thing {
  std::string name;
  std::string rv;
  std::string node;
};

struct thing_traits {
  static std::string key(const thing& t) { return "ns/" + t.name; }
  static std::string resource_version(const thing& t) { return t.rv; }
  static void index_values(const thing& t, index_kind kind, std::vector<std::string>& out) {
    if (kind == index_kind::node_name && !t.node.empty())
      out.push_back(t.node);
  }
};

using thing_cache = cache<thing, thing_traits>;

std::shared_ptr<const thing> make(std::string name, int rv, std::string node = {}) {
  return std::make_shared<const thing>(thing{std::move(name), std::to_string(rv), std::move(node)});
}

// What a subscriber sees: it applies the events it is given to its own map.
struct subscriber_view {
  std::map<std::string, std::string> items; // key → rv
  int duplicates = 0;
  void see(const event<thing>& ev) {
    auto key = thing_traits::key(*ev.object);
    if (ev.type == event_type::deleted) {
      if (!items.erase(key))
        ++duplicates;
      return;
    }
    if (ev.type == event_type::added && items.count(key))
      ++duplicates;
    if (ev.type == event_type::modified && items[key] == ev.object->rv)
      ++duplicates;
    items[key] = ev.object->rv;
  }
};

} // namespace

TEST_CASE("a replayed watch event at the cached resourceVersion is not delivered twice") {
  thing_cache c;
  REQUIRE(c.apply(event_type::added, make("a", 5)));
  CHECK_FALSE(c.apply(event_type::added, make("a", 5)));
  CHECK_FALSE(c.apply(event_type::modified, make("a", 5)));
  auto ev = c.apply(event_type::modified, make("a", 6));
  REQUIRE(ev);
  CHECK(ev->type == event_type::modified);
  CHECK(ev->previous->rv == "5");
  CHECK(c.resource_version() == "6");
}

TEST_CASE("a DELETED for an object the cache never held is dropped") {
  thing_cache c;
  CHECK_FALSE(c.apply(event_type::deleted, make("ghost", 3)));
  CHECK(c.size() == 0);
}

TEST_CASE("a relist emits exactly the differences as synthetic events") {
  thing_cache c;
  c.apply(event_type::added, make("stays", 1));
  c.apply(event_type::added, make("changes", 2));
  c.apply(event_type::added, make("vanishes", 3));
  auto events = c.replace({make("stays", 1), make("changes", 9), make("appears", 10)}, "11");
  std::map<std::string, event_type> by_name;
  for (auto& e : events)
    by_name[e.object->name] = e.type;
  CHECK(by_name.size() == 3);
  CHECK(by_name.at("changes") == event_type::modified);
  CHECK(by_name.at("vanishes") == event_type::deleted);
  CHECK(by_name.at("appears") == event_type::added);
  CHECK(c.resource_version() == "11");
}

TEST_CASE("objects can be selected by node and move between index entries when they change") {
  thing_cache c;
  c.apply(event_type::added, make("p1", 1, "n1"));
  c.apply(event_type::added, make("p2", 2, "n1"));
  c.apply(event_type::added, make("p3", 3, ""));
  CHECK(c.select(index_kind::node_name, "n1").size() == 2);
  c.apply(event_type::modified, make("p2", 4, "n2"));
  CHECK(c.select(index_kind::node_name, "n1").size() == 1);
  CHECK(c.select(index_kind::node_name, "n2").size() == 1);
  c.apply(event_type::deleted, make("p1", 5, "n1"));
  CHECK(c.select(index_kind::node_name, "n1").empty());
  CHECK(c.select(index_kind::all).size() == 2);
}

TEST_CASE("a subscriber converges on the server's state through lost events and relists (random oracle)") {
  std::mt19937 rng(20261121);
  for (int round = 0; round < 200; ++round) {
    std::map<std::string, int> server; // name → rv
    int rv = 0;
    thing_cache c;
    subscriber_view sub;
    for (int step = 0; step < 60; ++step) {
      // The server changes; the watch delivers the event, loses it, or delivers it twice.
      std::string name = "o" + std::to_string(rng() % 8);
      event_type type;
      if (!server.count(name))
        type = event_type::added;
      else
        type = rng() % 3 == 0 ? event_type::deleted : event_type::modified;
      ++rv;
      if (type == event_type::deleted)
        server.erase(name);
      else
        server[name] = rv;
      int fate = static_cast<int>(rng() % 10);
      if (fate >= 2)
        if (auto ev = c.apply(type, make(name, rv)))
          sub.see(*ev);
      if (fate == 9) // a duplicate delivery
        if (auto ev = c.apply(type, make(name, rv)))
          sub.see(*ev);
      if (rng() % 15 == 0) { // 410 Gone: relist
        std::vector<std::shared_ptr<const thing>> items;
        for (auto& [n, r] : server)
          items.push_back(make(n, r));
        for (auto& ev : c.replace(items, std::to_string(rv)))
          sub.see(ev);
        std::map<std::string, std::string> expected;
        for (auto& [n, r] : server)
          expected["ns/" + n] = std::to_string(r);
        REQUIRE(sub.items == expected);
      }
    }
    CHECK(sub.duplicates == 0);
  }
}
