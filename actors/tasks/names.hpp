// Names generated for what a task creates, by the peer's rule so that a name is stable across
// rounds and restarts (a second create of the same attempt meets the first, never a twin).
#pragma once

#include "k8s/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace kozmo::tasks {

// The peer's default longest generated name.
inline constexpr std::size_t generated_name_max = 50;

// `id` itself when it fits in `max_length`; otherwise "f" followed by the 32-bit FNV-1a hash of
// `id` in base32 (alphabet a-z1-6, no padding): 8 characters, stable for the same id. A result
// shorter than `min_length` is padded on the right with '0'. An error when even the hash does
// not fit in `max_length`.
expected<std::string> generated_name(std::string_view id, std::size_t min_length = 0,
                                     std::size_t max_length = generated_name_max);

// The pod of one attempt: "<task>-<attempt>", through generated_name.
std::string attempt_pod_name(std::string_view task, int attempt);

} // namespace kozmo::tasks
