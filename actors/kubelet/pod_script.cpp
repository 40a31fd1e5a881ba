#include "actors/kubelet/pod_script.hpp"

#include <charconv>
#include <cmath>

namespace kozmo::kubelet {
namespace {

expected<int> parse_int(std::string_view key, std::string_view text) {
  int v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size())
    return error::bad_request("annotation " + std::string(key) + ": \"" + std::string(text) +
                              "\" is not an integer");
  return v;
}

expected<scripted_failure> parse_failure(std::string_view text) {
  if (text == "ImagePullBackOff" || text == "ErrImagePull")
    return scripted_failure::image_pull_backoff;
  if (text == "InvalidImageName")
    return scripted_failure::invalid_image_name;
  if (text == "CreateContainerConfigError")
    return scripted_failure::create_container_config_error;
  if (text == "OOMKilled")
    return scripted_failure::oom_killed;
  if (text.empty() || text == "none")
    return scripted_failure::none;
  return error::bad_request("annotation kozmo.io/sim-fail: \"" + std::string(text) +
                            "\" is not one of ImagePullBackOff, ErrImagePull, InvalidImageName, "
                            "CreateContainerConfigError, OOMKilled");
}

} // namespace

expected<duration> parse_duration(std::string_view text) {
  auto bad = [&] {
    return error::bad_request("\"" + std::string(text) +
                              "\" is not a duration (examples: 250ms, 5s, 1.5m, 1h)");
  };
  if (text.empty())
    return bad();
  double total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
      ++i;
    if (start == i)
      return bad();
    double number = 0;
    auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + i, number);
    if (ec != std::errc{} || ptr != text.data() + i)
      return bad();
    std::size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i])))
      ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale = 0;
    if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60'000;
    else if (unit == "h")
      scale = 3'600'000;
    else if (unit.empty() && number == 0)
      scale = 0; // a bare "0" is allowed, as in Go
    else
      return bad();
    total_ms += number * scale;
  }
  return duration{static_cast<long long>(std::llround(total_ms))};
}

expected<pod_script> parse_pod_script(const std::map<std::string, std::string>& annotations) {
  pod_script s;
  for (const auto& [key, value] : annotations) {
    if (key.rfind(annotation_prefix, 0) != 0)
      continue;
    std::string_view name = std::string_view(key).substr(annotation_prefix.size());
    auto as_duration = [&](duration& out) -> status {
      auto d = parse_duration(value);
      if (!d)
        return error::bad_request("annotation " + key + ": " + d.err().message);
      out = *d;
      return ok;
    };
    status st = ok;
    if (name == "duration") {
      if (value == "forever")
        s.run_forever = true;
      else
        st = as_duration(s.run_duration);
    } else if (name == "pull-duration") {
      st = as_duration(s.pull_duration);
    } else if (name == "restart-backoff") {
      st = as_duration(s.restart_backoff);
    } else if (name == "stop-duration") {
      st = as_duration(s.stop_duration);
    } else if (name == "exit-code") {
      auto v = parse_int(key, value);
      if (!v)
        return v.err();
      if (*v < 0 || *v > 255)
        return error::bad_request("annotation " + key + ": exit code " + value + " is outside 0..255");
      s.exit_code = *v;
    } else if (name == "fail-times") {
      auto v = parse_int(key, value);
      if (!v)
        return v.err();
      s.fail_times = *v;
    } else if (name == "fail") {
      auto f = parse_failure(value);
      if (!f)
        return f.err();
      s.failure = *f;
    } else {
      return error::bad_request("unknown annotation " + key +
                                ": known are kozmo.io/sim-duration, sim-pull-duration, sim-exit-code, "
                                "sim-fail-times, sim-fail, sim-restart-backoff, sim-stop-duration");
    }
    if (!st)
      return st.err();
  }
  return s;
}

} // namespace kozmo::kubelet
