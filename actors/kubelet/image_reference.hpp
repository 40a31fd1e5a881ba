#pragma once
// Container image references as a kubelet reads them before a pull: the reference grammar of
// the container runtimes (distribution's `reference` package, Docker Hub's normalisation),
// so that the simulated kubelet answers a name a real one cannot parse with InvalidImageName.
#include <optional>
#include <string>
#include <string_view>

namespace kozmo::kubelet {

// Why `image` does not parse (the parser's own words, e.g. "invalid reference format" or
// "invalid reference format: repository name must be lowercase"), or nothing when it does.
std::optional<std::string> image_reference_error(std::string_view image);

// The waiting message a kubelet gives an unparseable image (reason InvalidImageName), or
// nothing when `image` parses.
std::optional<std::string> invalid_image_message(std::string_view image);

} // namespace kozmo::kubelet
