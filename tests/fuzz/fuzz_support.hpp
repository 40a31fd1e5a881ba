// What the fuzz targets share: the libFuzzer entry point's signature, a property check that
// fails loudly (libFuzzer and the replay runner both treat an abort as a crash), and ways to
// cut one input into the pieces a target needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace kozmo::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A property every input must keep. The message names it; `detail` shows what broke it.
[[noreturn]] inline void property_failed(const char* what, std::string_view detail = {}) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what);
  if (!detail.empty())
    std::fprintf(stderr, "  %.*s\n", static_cast<int>(detail.size() < 2000 ? detail.size() : 2000), detail.data());
  std::abort();
}

inline void require(bool cond, const char* what, std::string_view detail = {}) {
  if (!cond)
    property_failed(what, detail);
}

// The text before and after the first `sep`; all of `text` and "" when there is none.
inline std::pair<std::string_view, std::string_view> split_once(std::string_view text, std::string_view sep) {
  auto at = text.find(sep);
  if (at == std::string_view::npos)
    return {text, {}};
  return {text.substr(0, at), text.substr(at + sep.size())};
}

} // namespace kozmo::fuzz
