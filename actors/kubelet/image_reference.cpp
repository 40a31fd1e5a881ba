#include "actors/kubelet/image_reference.hpp"

#include "k8s/text.hpp"

#include <algorithm>

namespace kozmo::kubelet {
namespace {

using text::lower;
using text::split;

constexpr std::size_t max_name_length = 255;
constexpr std::size_t max_tag_length = 128;
constexpr std::size_t min_digest_hex = 32;

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool alnum(char c) { return alpha(c) || (c >= '0' && c <= '9'); }
bool word(char c) { return alnum(c) || c == '_'; }
bool hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// A path component: runs of [a-z0-9] joined by ".", "_", "__" or any number of "-".
bool path_component(std::string_view s) {
  std::size_t i = 0;
  auto run = [&] {
    std::size_t from = i;
    while (i < s.size() && lower_alnum(s[i]))
      ++i;
    return i > from;
  };
  if (!run())
    return false;
  while (i < s.size()) {
    if (s[i] == '.')
      ++i;
    else if (s[i] == '_')
      i += i + 1 < s.size() && s[i + 1] == '_' ? 2 : 1;
    else if (s[i] == '-')
      while (i < s.size() && s[i] == '-')
        ++i;
    else
      return false;
    if (!run())
      return false;
  }
  return true;
}

// A registry host: labels of letters, digits and inner "-", joined by ".", and an optional port.
bool domain(std::string_view s) {
  if (auto colon = s.rfind(':'); colon != std::string_view::npos) {
    auto port = s.substr(colon + 1);
    if (port.empty())
      return false;
    for (char c : port)
      if (c < '0' || c > '9')
        return false;
    s = s.substr(0, colon);
  }
  for (auto label : split(s, '.')) {
    if (label.empty() || !alnum(label.front()) || !alnum(label.back()))
      return false;
    for (char c : label)
      if (!alnum(c) && c != '-')
        return false;
  }
  return true;
}

bool tag(std::string_view s) {
  if (s.empty() || s.size() > max_tag_length || !word(s.front()))
    return false;
  for (char c : s)
    if (!word(c) && c != '.' && c != '-')
      return false;
  return true;
}

// algorithm ":" hex, the algorithm being letter-led parts joined by one of "-_+.".
bool digest(std::string_view s) {
  auto colon = s.find(':');
  if (colon == std::string_view::npos)
    return false;
  std::string_view algorithm = s.substr(0, colon), encoded = s.substr(colon + 1);
  std::size_t i = 0;
  while (true) {
    if (i >= algorithm.size() || !alpha(algorithm[i]))
      return false;
    while (i < algorithm.size() && alnum(algorithm[i]))
      ++i;
    if (i == algorithm.size())
      break;
    char sep = algorithm[i];
    if (sep != '-' && sep != '_' && sep != '+' && sep != '.')
      return false;
    ++i;
  }
  if (encoded.size() < min_digest_hex)
    return false;
  for (char c : encoded)
    if (!hex(c))
      return false;
  return true;
}

// The name: path components, the first of them possibly a registry host instead.
bool name(std::string_view s) {
  auto parts = split(s, '/');
  bool rest_are_paths = true;
  for (std::size_t i = 1; i < parts.size(); ++i)
    rest_are_paths = rest_are_paths && path_component(parts[i]);
  if (!rest_are_paths)
    return false;
  return path_component(parts[0]) || (parts.size() > 1 && domain(parts[0]));
}

// name [":" tag] ["@" digest], all of `s`; the name's length when it matches.
std::optional<std::size_t> match(std::string_view s) {
  if (auto at = s.find('@'); at != std::string_view::npos) {
    if (!digest(s.substr(at + 1)))
      return std::nullopt;
    s = s.substr(0, at);
  }
  auto colon = s.rfind(':');
  auto slash = s.rfind('/');
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    if (!tag(s.substr(colon + 1)))
      return std::nullopt;
    s = s.substr(0, colon);
  }
  if (!name(s))
    return std::nullopt;
  return s.size();
}

// The strict parse of a full reference (its registry spelled out).
std::optional<std::string> parse_error(std::string_view s) {
  auto length = match(s);
  if (!length)
    return std::string(match(lower(s)) ? "repository name must be lowercase" : "invalid reference format");
  if (*length > max_name_length)
    return "repository name must not be more than " + std::to_string(max_name_length) + " characters";
  return std::nullopt;
}

} // namespace

std::optional<std::string> image_reference_error(std::string_view image) {
  // A bare 64-character hex string reads as an image ID, which a reference may not be.
  auto lower_hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (image.size() == 64 && std::all_of(image.begin(), image.end(), lower_hex))
    return "invalid repository name (" + std::string(image) + "), cannot specify 64-byte hexadecimal strings";
  // Docker Hub's normalisation: a first part without ".", ":" or capitals that is not
  // "localhost" is a repository path on docker.io; one-part names live under library/.
  std::string host = "docker.io";
  std::string remainder(image);
  if (auto slash = image.find('/'); slash != std::string_view::npos) {
    std::string_view first = image.substr(0, slash);
    bool is_host = first.find_first_of(".:") != std::string_view::npos || first == "localhost" || lower(first) != first;
    if (is_host) {
      host = first == "index.docker.io" ? "docker.io" : std::string(first);
      remainder = image.substr(slash + 1);
    }
  }
  if (host == "docker.io" && remainder.find('/') == std::string::npos)
    remainder = "library/" + remainder;
  std::string repository = remainder.substr(0, remainder.find(':'));
  if (lower(repository) != repository)
    return "invalid reference format: repository name must be lowercase";
  return parse_error(host + "/" + remainder);
}

std::optional<std::string> invalid_image_message(std::string_view image) {
  auto why = image_reference_error(image);
  if (!why)
    return std::nullopt;
  std::string quoted = "\"" + std::string(image) + "\"";
  return "Failed to apply default image tag " + quoted + ": couldn't parse image reference " + quoted + ": " + *why;
}

} // namespace kozmo::kubelet
