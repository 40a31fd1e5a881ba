// Errors as values, for the whole tree: the public face's kozmo::error, expected<T> and status
// (include/kozmo/status.hpp), which a host sees too.
#pragma once

#include <kozmo/status.hpp>
