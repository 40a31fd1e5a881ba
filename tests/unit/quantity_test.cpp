#include "k8s/model/quantity.hpp"

#include <catch2/catch.hpp>

#include <random>

using kozmo::k8s::quantity;
using kozmo::k8s::quantity_format;

namespace {

quantity q(std::string_view s) {
  auto r = quantity::parse(s);
  INFO("parsing " << s << (r ? "" : ": " + r.err().message));
  REQUIRE(r.has_value());
  return *r;
}

std::string canonical(std::string_view s) { return q(s).to_string(); }

} // namespace

TEST_CASE("quantities print in the canonical form Kubernetes prints") {
  // Pairs checked against resource.Quantity's String().
  CHECK(canonical("1.5") == "1500m");
  CHECK(canonical("1.5Gi") == "1536Mi");
  CHECK(canonical("1536Mi") == "1536Mi");
  CHECK(canonical("500m") == "500m");
  CHECK(canonical("0.1") == "100m");
  CHECK(canonical("8Gi") == "8Gi");
  CHECK(canonical("100Ki") == "100Ki");
  CHECK(canonical("1024Ki") == "1Mi");
  CHECK(canonical("1000") == "1k");
  CHECK(canonical("1000m") == "1");
  CHECK(canonical("1e3") == "1e3");
  CHECK(canonical("1E3") == "1e3");
  CHECK(canonical("10e3") == "10e3");
  CHECK(canonical("1.5e3") == "1500");
  CHECK(canonical("2E") == "2E");
  CHECK(canonical("12E") == "12E");
  CHECK(canonical("-1") == "-1");
  CHECK(canonical("0") == "0");
  CHECK(canonical("0Gi") == "0");
  CHECK(canonical("+5") == "5");
  CHECK(canonical("007") == "7");
  CHECK(canonical("100M") == "100M");
  CHECK(canonical("1G") == "1G");
  CHECK(canonical("3T") == "3T");
  CHECK(canonical("5P") == "5P");
  CHECK(canonical("1u") == "1u");
  CHECK(canonical("1n") == "1n");
  CHECK(canonical("1500u") == "1500u");
  CHECK(canonical("0.5Ki") == "512");         // binary below 1024 prints as decimal
  CHECK(canonical("1023") == "1023");
  CHECK(canonical("1.1Ki") == "1126400m");    // not whole: decimal, no precision lost
  CHECK(canonical("1500Mi") == "1500Mi");
  CHECK(canonical("2Ei") == "2Ei");
  CHECK(canonical("1.G") == "1G");            // Kubernetes accepts a trailing dot
}

TEST_CASE("precision below one nano-unit rounds up so a request never becomes zero") {
  CHECK(canonical("0.1n") == "1n");
  CHECK(canonical("0.0000000001") == "1n");
  CHECK(canonical("1e-20") == "1e-9"); // the exponent form is kept
  CHECK(canonical("-0.1n") == "-1n");
  CHECK(canonical("1.0000000001") == "1000000001n");
}

TEST_CASE("binary quantities above 2^63-1 are capped like Kubernetes does") {
  CHECK(canonical("16Ei") == "9223372036854775807");
  CHECK(q("100000000000000000000000000000000Ki").value() == INT64_MAX);
}

TEST_CASE("malformed quantities are rejected with Kubernetes' messages") {
  const std::string regex_msg =
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  for (auto bad : {"", "8Xi", "abc", "1Gb", "1 Gi", "1KiB", "1e3.5", "1.5.5"}) {
    auto r = quantity::parse(bad);
    INFO("input: '" << bad << "'");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.err().message == regex_msg);
    CHECK(r.err().code == 400);
  }
  for (auto bad : {"1K", "1Mii", "1m5", "1e", "1ee3", "5i", "--1"}) {
    auto r = quantity::parse(bad);
    INFO("input: '" << bad << "'");
    REQUIRE_FALSE(r.has_value());
    CHECK(r.err().message == "unable to parse quantity's suffix");
  }
}

TEST_CASE("decimal values beyond the supported range are an error, not a wrong number") {
  auto r = quantity::parse("1e100");
  REQUIRE_FALSE(r.has_value());
  CHECK(r.err().message == "quantity \"1e100\" is too large");
}

TEST_CASE("value and milli_value round up away from zero like Kubernetes") {
  CHECK(q("500m").milli_value() == 500);
  CHECK(q("500m").value() == 1);
  CHECK(q("1.5").value() == 2);
  CHECK(q("-1.5").value() == -2);
  CHECK(q("2").value() == 2);
  CHECK(q("8Gi").value() == 8LL * 1024 * 1024 * 1024);
  CHECK(q("1n").milli_value() == 1);
  CHECK(q("-1n").milli_value() == -1);
  CHECK(q("1Ei").value() == (1LL << 60));
  CHECK(q("12E").value() == INT64_MAX); // saturates
}

TEST_CASE("quantities compare by value whatever their suffix") {
  CHECK(q("1Ki") == q("1024"));
  CHECK(q("1") == q("1000m"));
  CHECK(q("1e3") == q("1k"));
  CHECK(q("500m") < q("1"));
  CHECK(q("1Gi") > q("1G"));
  CHECK(q("-1") < q("0"));
  CHECK(q("100Mi") != q("100M"));
}

TEST_CASE("adding and subtracting is exact and keeps the left format") {
  auto a = q("1.5Gi") + q("512Mi");
  CHECK(a.to_string() == "2Gi");
  auto b = q("100m") + q("200m") + q("700m");
  CHECK(b.to_string() == "1");
  auto c = q("1") - q("1500m");
  CHECK(c.to_string() == "-500m");
  quantity zero;
  zero += q("4Gi");
  CHECK(zero.format() == quantity_format::binary_si); // a zero adopts the other's format
  CHECK(zero.to_string() == "4Gi");
  CHECK((-q("2Ki")).to_string() == "-2Ki");
  CHECK(q("0.1").milli_value() + q("0.2").milli_value() == q("300m").milli_value());
}

TEST_CASE("constructors from integers print like NewQuantity and NewMilliQuantity") {
  CHECK(quantity::from_int(8).to_string() == "8");
  CHECK(quantity::from_int(2048, quantity_format::binary_si).to_string() == "2Ki");
  CHECK(quantity::from_milli(1500).to_string() == "1500m");
  CHECK(quantity::from_milli(2000).to_string() == "2");
}

TEST_CASE("parsing the canonical form gives back the same quantity (seeded random oracle)") {
  std::mt19937_64 rng(20261121);
  const char* suffixes[] = {"", "m", "k", "M", "G", "Ki", "Mi", "Gi", "n", "u", "e3", "e-2", "T", "Ti"};
  for (int i = 0; i < 2000; ++i) {
    std::string text = std::to_string(rng() % 100000);
    if (rng() % 3 == 0)
      text += "." + std::to_string(rng() % 1000);
    if (rng() % 4 == 0)
      text.insert(0, "-");
    text += suffixes[rng() % std::size(suffixes)];
    auto first = q(text);
    auto again = q(first.to_string());
    INFO(text << " -> " << first.to_string());
    CHECK(again == first);
    CHECK(again.to_string() == first.to_string());
  }
}
