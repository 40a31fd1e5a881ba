// The S3 answers the copilot (`kozmo copilot download|upload`) reads: ListObjectsV2 pages and
// error bodies (runtime/s3_xml.hpp, used by runtime/object_store.cpp). Input: the listed prefix
// on the first line, the XML after it.
// Properties: every listed key lies below the prefix and is not a folder marker (the copilot
// cuts the prefix off it); unescape inverts escape, and a tag holding an escaped text gives the
// text back.
#include "runtime/s3_xml.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kozmo;
namespace x = runtime::s3_xml;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto [prefix, xml] = fuzz::split_once(fuzz::as_text(data, size), "\n");
  auto page = x::parse_list_page(xml, prefix);
  for (const auto& item : page.items) {
    fuzz::require(item.key.size() > prefix.size(), "a listed key is longer than the prefix", item.key);
    fuzz::require(item.key.back() != '/', "a folder marker is not listed", item.key);
    (void)item.key.substr(prefix.size());
  }
  if (!page.truncated)
    fuzz::require(page.continuation_token.empty(), "a last page has no continuation token");
  (void)x::parse_error(xml);

  std::string escaped = x::escape(xml);
  fuzz::require(x::unescape(escaped) == xml, "unescape(escape(s)) == s", xml);
  auto tagged = x::tag("<Key>" + escaped + "</Key>", "Key");
  fuzz::require(tagged.has_value() && *tagged == xml, "tag gives back an escaped text", xml);
  return 0;
}
