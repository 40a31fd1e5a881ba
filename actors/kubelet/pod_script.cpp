#include "actors/kubelet/pod_script.hpp"

#include "k8s/model/time.hpp"

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
  auto d = k8s::parse_go_duration(text);
  if (d && d->count() < 0)
    return error::bad_request("\"" + std::string(text) + "\" is negative: a duration here is 0 or more");
  return d;
}

expected<pod_script> parse_pod_script(const std::map<std::string, std::string>& annotations) {
  pod_script s;
  for (const auto& [key, value] : annotations) {
    if (key.rfind(annotation_prefix, 0) != 0)
      continue;
    std::string_view name = std::string_view(key).substr(annotation_prefix.size());
    auto as_duration = [&key = key, &value = value](duration& out) -> status {
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
