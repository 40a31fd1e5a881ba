// Kubeconfig and in-cluster configuration.
#include "k8s/client/config.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kozmo::client {
namespace {

namespace fs = std::filesystem;

expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error{path + ": cannot read: " + std::strerror(errno)};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim_space(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// The entry of a kubeconfig list ("clusters", "users", "contexts") named `name`, as its
// inner map ("cluster", "user", "context"); a null node when missing.
YAML::Node find_named(const YAML::Node& root, const char* list, const char* inner,
                      const std::string& name) {
  YAML::Node entries = root[list];
  if (!entries || !entries.IsSequence()) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& entry : entries) {
    if (entry["name"] && entry["name"].as<std::string>() == name) {
      YAML::Node body = entry[inner];
      return body ? body : YAML::Node(YAML::NodeType::Map);
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string str(const YAML::Node& parent, const char* key) {
  YAML::Node n = parent[key];
  if (!n || n.IsNull()) return {};
  return n.as<std::string>();
}

// Loads inline base64 data (`key_data`) or the file named by `key_file`; relative paths
// resolve against the kubeconfig's directory.
expected<std::string> pem_field(const YAML::Node& node, const char* key_file, const char* key_data,
                                const fs::path& base_dir) {
  std::string data = str(node, key_data);
  if (!data.empty()) {
    auto decoded = base64_decode(data);
    if (!decoded) return error{std::string(key_data) + ": " + decoded.err().message};
    return decoded;
  }
  std::string file = str(node, key_file);
  if (file.empty()) return std::string();
  fs::path p(file);
  if (p.is_relative()) p = base_dir / p;
  auto text = read_file(p.string());
  if (!text) return error{std::string(key_file) + " " + text.err().message};
  return text;
}

expected<config> parse_kubeconfig(const YAML::Node& root, const std::string& path,
                                  const std::string& wanted_context) {
  auto fail = [&](const std::string& what) { return error{"kubeconfig " + path + ": " + what}; };
  fs::path base_dir = fs::absolute(fs::path(path)).parent_path();

  std::string context_name = wanted_context.empty() ? str(root, "current-context") : wanted_context;
  if (context_name.empty()) return fail("no current-context set and no context given");
  YAML::Node ctx = find_named(root, "contexts", "context", context_name);
  if (!ctx) return fail("context \"" + context_name + "\" not found");

  std::string cluster_name = str(ctx, "cluster");
  YAML::Node cluster = find_named(root, "clusters", "cluster", cluster_name);
  if (!cluster)
    return fail("cluster \"" + cluster_name + "\" of context \"" + context_name + "\" not found");
  std::string user_name = str(ctx, "user");
  YAML::Node user;
  if (!user_name.empty()) {
    user = find_named(root, "users", "user", user_name);
    if (!user)
      return fail("user \"" + user_name + "\" of context \"" + context_name + "\" not found");
  } else {
    user = YAML::Node(YAML::NodeType::Map);
  }

  config cfg;
  cfg.server = str(cluster, "server");
  if (cfg.server.empty()) return fail("cluster \"" + cluster_name + "\" has no server");
  if (cluster["insecure-skip-tls-verify"])
    cfg.insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>();
  cfg.tls_server_name = str(cluster, "tls-server-name");
  auto ca = pem_field(cluster, "certificate-authority", "certificate-authority-data", base_dir);
  if (!ca) return fail("cluster \"" + cluster_name + "\": " + ca.err().message);
  cfg.ca_pem = std::move(*ca);

  if (user["exec"] || user["auth-provider"])
    return fail("user \"" + user_name + "\": exec and auth-provider credentials are not supported");
  cfg.token = str(user, "token");
  std::string token_file = str(user, "tokenFile");
  if (cfg.token.empty() && !token_file.empty()) {
    fs::path p(token_file);
    if (p.is_relative()) p = base_dir / p;
    auto t = read_file(p.string());
    if (!t) return fail("user \"" + user_name + "\": tokenFile " + t.err().message);
    cfg.token = trim_space(std::move(*t));
    cfg.token_file = p.string();
  }
  auto cert = pem_field(user, "client-certificate", "client-certificate-data", base_dir);
  if (!cert) return fail("user \"" + user_name + "\": " + cert.err().message);
  auto key = pem_field(user, "client-key", "client-key-data", base_dir);
  if (!key) return fail("user \"" + user_name + "\": " + key.err().message);
  cfg.client_cert_pem = std::move(*cert);
  cfg.client_key_pem = std::move(*key);
  if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty())
    return fail("user \"" + user_name + "\": client certificate and client key must be given together");

  std::string ns = str(ctx, "namespace");
  if (!ns.empty()) cfg.default_namespace = ns;
  return cfg;
}

} // namespace

expected<std::string> base64_decode(std::string_view text) {
  auto value_of = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;  // '-' and '_': the URL-safe alphabet
    if (c == '/' || c == '_') return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned buffer = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    int v = value_of(c);
    if (v < 0 || padding) return error{"invalid base64"};
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  if (bits >= 6) return error{"invalid base64 (truncated)"};
  return out;
}

expected<config> load_kubeconfig(const std::string& path, const std::string& context) {
  auto text = read_file(path);
  if (!text) return error{"kubeconfig " + text.err().message};
  try {
    YAML::Node root = YAML::Load(*text);
    if (!root.IsMap()) return error{"kubeconfig " + path + ": not a kubeconfig (expected a map)"};
    return parse_kubeconfig(root, path, context);
  } catch (const YAML::Exception& ex) {
    return error{"kubeconfig " + path + ": " + ex.what()};
  }
}

std::string default_kubeconfig_path() {
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string_view list = env;
    std::string first;
    while (!list.empty()) {
      auto colon = list.find(':');
      std::string entry(list.substr(0, colon));
      list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
      if (entry.empty()) continue;
      if (first.empty()) first = entry;
      std::error_code ec;
      if (fs::exists(entry, ec)) return entry;
    }
    if (!first.empty()) return first;
  }
  if (const char* home = std::getenv("HOME"); home && *home)
    return (fs::path(home) / ".kube" / "config").string();
  return {};
}

expected<config> discover_config(const std::string& explicit_path) {
  if (!explicit_path.empty()) return load_kubeconfig(explicit_path);
  auto fallback = default_kubeconfig_path();
  std::error_code ec;
  bool have_file = !fallback.empty() && fs::exists(fallback, ec);
  if (!have_file && std::getenv("KUBERNETES_SERVICE_HOST")) return in_cluster_config();
  if (fallback.empty()) return error{"no kubeconfig: pass --kubeconfig or set KUBECONFIG"};
  return load_kubeconfig(fallback);
}

expected<config> in_cluster_config(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port)
    return error{"in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are "
                 "not set (not running in a pod?)"};
  config cfg;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  cfg.server = "https://" + h + ":" + port;

  fs::path dir(sa_dir);
  auto token = read_file((dir / "token").string());
  if (!token) return error{"in-cluster config: token " + token.err().message};
  cfg.token = trim_space(std::move(*token));
  // Bound service-account tokens rotate; the client re-reads the file.
  cfg.token_file = (dir / "token").string();
  if (auto ca = read_file((dir / "ca.crt").string()))
    cfg.ca_pem = std::move(*ca);
  else
    return error{"in-cluster config: ca.crt " + ca.err().message};
  if (auto ns = read_file((dir / "namespace").string())) {
    std::string n = trim_space(std::move(*ns));
    if (!n.empty()) cfg.default_namespace = std::move(n);
  }
  return cfg;
}

} // namespace kozmo::client
