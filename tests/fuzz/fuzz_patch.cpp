// PATCH bodies (k8s/json/patch.hpp): merge patch (RFC 7386), JSON patch (RFC 6902) and
// strategic merge patch, applied to a document as the embedded API server applies them.
// Input: the kind on the first line (for the strategic merge patch: Pod, Node, Service, ...),
// then the document, a line "---", the patch.
// Properties: every result is a document that dumps to valid JSON; a merge patch is idempotent
// (RFC 7386); the merge patch create_merge_patch computes between the document and the result
// turns the document into the result.
#include "k8s/json/patch.hpp"
#include "k8s/json/value.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace kozmo;

namespace {

void valid(const json::value& v, const char* what) {
  std::string text = json::dump(v);
  fuzz::require(json::parse(text).has_value(), what, text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto [kind, rest] = fuzz::split_once(fuzz::as_text(data, size), "\n");
  auto [doc_text, patch_text] = fuzz::split_once(rest, "\n---\n");
  auto doc = json::parse(doc_text);
  auto patch = json::parse(patch_text);
  if (!doc || !patch)
    return 0;

  json::value merged = json::apply_merge_patch(*doc, *patch);
  valid(merged, "a merge patch gives valid JSON");
  fuzz::require(json::apply_merge_patch(merged, *patch) == merged, "a merge patch is idempotent",
                json::dump(merged));
  if (doc->is_object() && merged.is_object()) {
    json::value diff = json::create_merge_patch(*doc, merged);
    fuzz::require(json::apply_merge_patch(*doc, diff) == merged,
                  "apply_merge_patch(doc, create_merge_patch(doc, m)) == m", json::dump(diff));
  }

  if (auto r = json::apply_json_patch(*doc, *patch))
    valid(*r, "a JSON patch gives valid JSON");

  if (json::strategic_patch_supported(kind))
    if (auto r = json::apply_strategic_patch(*doc, *patch, kind))
      valid(*r, "a strategic merge patch gives valid JSON");
  return 0;
}
