// json::parse (simdjson into json::value) and the writers: whatever parses must dump to a text
// that parses again to an equal value, compact and pretty alike, and whose dump is a fixed point
// after one round. Every request body, watch line and stored object goes through these.
#include "k8s/json/value.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kozmo;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parsed = json::parse(fuzz::as_text(data, size));
  if (!parsed)
    return 0;
  std::string compact = json::dump(*parsed);
  auto again = json::parse(compact);
  fuzz::require(again.has_value(), "json::dump writes text json::parse accepts", compact);
  fuzz::require(*again == *parsed, "json::parse(json::dump(v)) == v", compact);
  // dump(parse(dump(v))) may differ from dump(v) once: -0.0 is written "-0" (as Go does) and
  // reads back as the integer 0. After that round the text is a fixed point.
  std::string settled = json::dump(*again);
  auto third = json::parse(settled);
  fuzz::require(third.has_value() && json::dump(*third) == settled, "json::dump settles after a round trip", settled);

  std::string pretty = json::dump_pretty(*parsed);
  auto from_pretty = json::parse(pretty);
  fuzz::require(from_pretty.has_value(), "json::dump_pretty writes text json::parse accepts", pretty);
  fuzz::require(*from_pretty == *parsed, "dump_pretty and dump hold the same value", pretty);
  return 0;
}
