// A JSON document written inline in a test; a typo in it fails the test where it is written.
#pragma once

#include "k8s/json/value.hpp"

#include <catch2/catch.hpp>

#include <string_view>

namespace kozmo::test {

inline json::value doc(std::string_view text) {
  auto v = json::parse(text);
  REQUIRE(v.has_value());
  return *v;
}

} // namespace kozmo::test
