#include "runtime/status_cli.hpp"

#include <charconv>

namespace kozmo::runtime {
namespace {

expected<double> interval_of(const std::string& text) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size())
    return error::bad_request("kozmo status: --interval \"" + text + "\" is not a number of seconds");
  if (!(v >= 0.2 && v <= 3600))
    return error::bad_request("kozmo status: --interval " + text + " is outside 0.2..3600 seconds");
  return v;
}

} // namespace

expected<status_options> parse_status_options(const std::vector<std::string>& args) {
  status_options o;
  bool namespace_given = false, all_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i], value;
    bool has_value = false;
    // --flag=value, and kubectl's glued short forms: -ojson, -nteam.
    if (name.rfind("--", 0) == 0) {
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
    } else if (name.size() > 2 && name[0] == '-' && (name[1] == 'o' || name[1] == 'n')) {
      value = name.substr(2);
      name = name.substr(0, 2);
      has_value = true;
    }
    auto take = [&]() -> expected<std::string> {
      if (has_value)
        return value;
      if (i + 1 == args.size())
        return error::bad_request("kozmo status: flag " + name + " needs a value");
      return args[++i];
    };
    auto boolean = [&](bool& out) -> status {
      if (has_value && value != "true" && value != "false")
        return error::bad_request("kozmo status: " + name + ": \"" + value + "\" is not true or false");
      out = !has_value || value == "true";
      return ok;
    };
    status st = ok;
    if (name == "--kubeconfig" || name == "--context" || name == "--inspect-url" || name == "--inspect-ca" ||
        name == "-n" || name == "--namespace" || name == "-o" || name == "--output" || name == "--interval") {
      auto v = take();
      if (!v)
        return v.err();
      if (v->empty())
        return error::bad_request("kozmo status: flag " + name + " needs a value");
      if (name == "--kubeconfig")
        o.kubeconfig = *v;
      else if (name == "--context")
        o.context = *v;
      else if (name == "--inspect-url")
        o.inspect_url = *v;
      else if (name == "--inspect-ca")
        o.inspect_ca_file = *v;
      else if (name == "-n" || name == "--namespace")
        o.ns = *v, namespace_given = true;
      else if (name == "--interval") {
        auto seconds = interval_of(*v);
        if (!seconds)
          return seconds.err();
        o.interval_seconds = *seconds;
      } else {
        if (*v != "wide" && *v != "json" && *v != "yaml")
          return error::bad_request("kozmo status: -o \"" + *v + "\" is not one of wide, json, yaml");
        o.output = *v;
      }
    } else if (name == "-A" || name == "--all-namespaces") {
      st = boolean(all_given);
    } else if (name == "-w" || name == "--watch") {
      st = boolean(o.watch);
    } else if (name == "--insecure-skip-tls-verify") {
      st = boolean(o.insecure_skip_tls_verify);
    } else if (name == "--finished") {
      st = boolean(o.finished);
    } else {
      return error::bad_request("kozmo status: unknown flag or argument \"" + args[i] + "\" (see `kozmo help`)");
    }
    if (!st)
      return st.err();
  }
  // As kubectl: -A wins over -n.
  o.all_namespaces = all_given || !namespace_given;
  if (o.all_namespaces)
    o.ns.clear();
  if (!o.inspect_url.empty() && o.inspect_url.rfind("https://", 0) != 0 && o.inspect_url.rfind("http://", 0) != 0)
    return error::bad_request("kozmo status: --inspect-url \"" + o.inspect_url + "\" is not an http:// or https:// URL");
  return o;
}

} // namespace kozmo::runtime
