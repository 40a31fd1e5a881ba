#include "k8s/serve/limits.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace kozmo::serve {
namespace {

std::uint64_t soft_open_file_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
    return 1u << 20;
  return rl.rlim_cur;
}

} // namespace

std::size_t connection_budget(std::size_t requested) {
  if (requested != 0)
    return requested;
  std::uint64_t budget = soft_open_file_limit() / 4 * 3;
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(budget, 32, 16384));
}

std::uint64_t raise_open_file_limit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return soft_open_file_limit();
  if (rl.rlim_cur != rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  return soft_open_file_limit();
}

} // namespace kozmo::serve
