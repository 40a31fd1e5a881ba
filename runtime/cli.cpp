#include "runtime/cli.hpp"

#include "actors/kubelet/pod_script.hpp"

#include <charconv>
#include <limits>
#include <functional>
#include <map>
#include <sstream>

namespace kozmo::runtime {
namespace {

// A flag table: name → how to consume its value. Boolean flags take no value.
struct flag {
  bool takes_value = true;
  std::function<status(const std::string&)> apply;
};

expected<long> to_number(const std::string& flag_name, const std::string& text, long min, long max) {
  long v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size())
    return error::bad_request("flag --" + flag_name + ": \"" + text + "\" is not a number");
  if (v < min || v > max)
    return error::bad_request("flag --" + flag_name + ": " + text + " is outside " + std::to_string(min) +
                              ".." + std::to_string(max));
  return v;
}

template <class T>
flag number_flag(const std::string& name, T& out, long min, long max) {
  return {true, [&out, name, min, max](const std::string& v) -> status {
            auto n = to_number(name, v, min, max);
            if (!n)
              return n.err();
            out = static_cast<T>(*n);
            return ok;
          }};
}

flag string_flag(std::string& out) {
  return {true, [&out](const std::string& v) -> status {
            out = v;
            return ok;
          }};
}

flag bool_flag(bool& out) {
  return {false, [&out](const std::string&) -> status {
            out = true;
            return ok;
          }};
}

// A Go-style boolean flag: --name, --name=true or --name=false.
flag switch_flag(const std::string& name, bool& out) {
  return {false, [&out, name](const std::string& v) -> status {
            if (v != "" && v != "true" && v != "false")
              return error::bad_request("--" + name + ": \"" + v + "\" is not true or false");
            out = v != "false";
            return ok;
          }};
}

status parse_flags(const std::string& sub, std::vector<std::string>::const_iterator begin,
                   std::vector<std::string>::const_iterator end, const std::map<std::string, flag>& flags) {
  for (auto it = begin; it != end; ++it) {
    const std::string& arg = *it;
    if (arg.rfind("--", 0) != 0)
      return error::bad_request("kozmo " + sub + ": unexpected argument \"" + arg + "\" (flags start with --)");
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    auto f = flags.find(name);
    if (f == flags.end()) {
      std::string known;
      for (const auto& [k, _] : flags)
        known += (known.empty() ? "--" : ", --") + k;
      return error::bad_request("kozmo " + sub + ": unknown flag --" + name + " (known: " + known + ")");
    }
    if (f->second.takes_value && !has_value) {
      if (std::next(it) == end)
        return error::bad_request("kozmo " + sub + ": flag --" + name + " needs a value");
      value = *++it;
    }
    if (auto st = f->second.apply(value); !st)
      return st;
  }
  return ok;
}

} // namespace

// A Go duration in whole seconds ("1h", "90m", "30s"), or "0".
flag seconds_flag(const std::string& name, std::int64_t& out) {
  return {true, [&out, name](const std::string& v) -> status {
            if (v == "0") {
              out = 0;
              return ok;
            }
            auto d = kubelet::parse_duration(v);
            if (!d || d->count() < 0 || d->count() % 1000 != 0)
              return error::bad_request("--" + name + ": \"" + v +
                                        "\" is not a duration in whole seconds (examples: 1h, 30m, 90s; 0 = never)");
            out = d->count() / 1000;
            return ok;
          }};
}

// --enable scheduler,training,tasks: exactly the parts named run.
flag enable_flag(controller_options& o) {
  return {true, [&o](const std::string& v) -> status {
            o.scheduler = o.training = o.tasks = false;
            if (v.empty() || v.back() == ',') // getline would skip the empty last part
              return error::bad_request("--enable: unknown part \"\" (known: scheduler, training, tasks)");
            std::istringstream parts(v);
            for (std::string part; std::getline(parts, part, ',');) {
              bool* on = part == "scheduler" ? &o.scheduler
                         : part == "training" ? &o.training
                         : part == "tasks"    ? &o.tasks
                                              : nullptr;
              if (!on)
                return error::bad_request("--enable: unknown part \"" + part + "\" (known: scheduler, training, tasks)");
              *on = true;
            }
            return ok;
          }};
}

namespace {

expected<command> parse_copilot(const std::vector<std::string>& args, command cmd) {
  if (args.size() < 2 || (args[1] != "download" && args[1] != "upload"))
    return error::bad_request("kozmo copilot: say download or upload (`kozmo help`)");
  cmd.what = command::kind::copilot;
  auto& o = cmd.copilot;
  o.upload = args[1] == "upload";
  std::string sub = "copilot " + args[1];
  std::map<std::string, flag> flags{
      {"termination-log", string_flag(o.termination_log)},
      {"s3-endpoint", string_flag(o.s3_endpoint)},
      {"s3-region", string_flag(o.s3_region)},
      {"s3-virtual-hosted", bool_flag(o.s3_virtual_hosted)},
      {"s3-access-key-id", string_flag(o.s3_access_key_id)},
      {"s3-secret-access-key", string_flag(o.s3_secret_access_key)},
      {"s3-part-size", number_flag("s3-part-size", o.s3_part_size, 5L * 1024 * 1024, 5L * 1024 * 1024 * 1024)},
      {"s3-list-page", number_flag("s3-list-page", o.s3_list_page, 1, 1000)},
      {"log-level", string_flag(o.log_level)},
  };
  if (o.upload) {
    flags.emplace("output-path", string_flag(o.output_path));
    flags.emplace("output-prefix", string_flag(o.output_prefix));
    flags.emplace("timeout", seconds_flag("timeout", o.timeout_seconds));
  } else {
    flags.emplace("input-path", string_flag(o.input_path));
    flags.emplace("max-dataset-size", number_flag("max-dataset-size", o.max_dataset_size, 0, std::numeric_limits<long>::max()));
    flags.emplace("input", flag{true, [&o](const std::string& v) -> status {
                                  auto eq = v.find('=');
                                  if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
                                    return error::bad_request("--input: \"" + v + "\" is not NAME=URI");
                                  std::string name = v.substr(0, eq);
                                  if (name.find('/') != std::string::npos || name == "." || name == ".." || name[0] == '_')
                                    return error::bad_request("--input: \"" + name + "\" is not a file name (no '/', not "
                                                              "starting with '_')");
                                  for (const auto& [n, _] : o.inputs)
                                    if (n == name)
                                      return error::bad_request("--input: \"" + name + "\" is given twice");
                                  o.inputs.emplace_back(name, v.substr(eq + 1));
                                  return ok;
                                }});
  }
  if (auto st = parse_flags(sub, args.begin() + 2, args.end(), flags); !st)
    return st.err();
  if (o.upload && o.output_prefix.empty())
    return error::bad_request("kozmo copilot upload: --output-prefix URI is required");
  if (o.upload && o.timeout_seconds <= 0)
    return error::bad_request("kozmo copilot upload: --timeout must be more than 0");
  return cmd;
}

} // namespace

std::string usage() {
  return R"(kozmo — a Kubernetes-native engine for GPU workloads

Usage:
  kozmo local [flags]       embedded API server + simulated GPU nodes + controller, on loopback
      --port N                  API server port (0 = pick a free one; default 0)
      --nodes N                 simulated nodes (default 2)
      --gpus-per-node G         GPUs per simulated node (default 8)
      --cluster FILE            cluster shape file (YAML, docs/local.md) instead of --nodes/--gpus-per-node
      --data-dir DIR            keep the API server's state in DIR across restarts
      --event-ttl DURATION      Events expire this long after their last write (default 1h; 0 = never)
      --write-kubeconfig PATH   write the kubeconfig kubectl needs: the server runs TLS and callers
                                authenticate (its CA, an admin certificate and a bearer token)
      --demo                    create a demo pod and narrate its life on the terminal
      --config FILE             Kozmo's configuration (YAML): the task platform's `tasks:` section
      --runtime sim|process     how the nodes run pods: simulated (default), or their containers'
                                commands as local processes (no isolation; local use and tests);
                                with process, a pod annotated kozmo.io/runtime: sim is simulated
      --allow-process-runtime   simulated by default, but a pod annotated kozmo.io/runtime: process
                                runs its commands on this host (without this flag or --runtime
                                process, such a pod waits in CreateContainerConfigError)
      --process-user USER       who process containers run as when kozmo runs as root: a user name
                                or UID:GID (default nobody)
      --fault-injection         POST /debug/faults makes the API server drop watches, answer 410,
                                429 or 5xx, or slow down (for chaos tests; authenticated callers only)
      --log-level LEVEL         trace, debug, info, warn, error (default info)
  kozmo kubelet [flags]     simulated GPU nodes against any API server
      --kubeconfig PATH         (default: $KUBECONFIG or ~/.kube/config)
      --nodes N  --gpus-per-node G  --cluster FILE  --node-prefix NAME  --log-level LEVEL
      --training                also run the training-job controller (CRDs must be installed;
                                --nodes 0 runs the controller alone)
      --mpi-kubectl-delivery-image IMAGE   the MPIJob launcher's init container that brings
                                kubectl and waits for the workers (default kubeflow/kubectl-delivery:latest)
      --kube-api-qps N  --kube-api-burst N   the client's rate limit (default 50 and 100)
  kozmo apiserver [flags]   only the embedded API server (TLS; callers authenticate)
      --port N  --data-dir DIR  --event-ttl DURATION  --log-level LEVEL
      --write-kubeconfig PATH   write the kubeconfig kubectl needs (the CA and an admin certificate)
  kozmo extender [flags]    kube-scheduler extender (filter/preempt/bind, inspect API)
      --config FILE             HiveD configuration (required)
      --kubeconfig PATH         (default: the config's kubeConfigFilePath, in-cluster, $KUBECONFIG)
      --listen HOST:PORT        (default: the config's webServerAddress, else 127.0.0.1:9096); an
                                address other hosts reach needs --client-ca-file or --insecure
      --client-ca-file FILE     serve TLS and accept the client certificates this CA signed (the one
                                kube-scheduler's extender tlsConfig presents); callers without one
                                need a token the cluster's TokenReview and SubjectAccessReview allow
      --tls-cert-file FILE  --tls-private-key-file FILE   the serving certificate (default: self-signed)
      --insecure                plain HTTP that anyone who reaches the address may call (HiveD's way)
      --health-probe-bind-address A   /healthz and /readyz alone on A (they reveal nothing; for a
                                kubelet's probes when --listen is loopback)
      --kube-api-qps N          API requests per second (default 200; bindings go first)
      --kube-api-burst N        requests allowed above that in a burst (default 400)
      --log-level LEVEL
  kozmo controller [flags]  the controller for a real cluster: GPU scheduler (schedulerName: kozmo),
                            training jobs, tasks
      --kubeconfig PATH         (default: $KUBECONFIG, ~/.kube/config, in-cluster)
      --config FILE             Kozmo's configuration (YAML): scheduler, tasks, client, leaderElection
      --enable LIST             which parts run: scheduler,training,tasks (default: all three)
      --leader-elect            one replica leads (Lease kozmo-system/kozmo-controller); the others wait
      --metrics-bind-address A  /metrics and /v1/inspect/... (default 127.0.0.1:8080; 0 = off)
      --health-probe-bind-address A   /healthz and /readyz (default :8081; 0 = off)
      --metrics-secure          serve the metrics address over TLS, callers checked with the
                                cluster's TokenReview and SubjectAccessReview (alias --secure-serving)
      --tls-cert-file FILE      its certificate (PEM; default: a self-signed one made at start)
      --tls-private-key-file FILE   the certificate's key (PEM)
      --log-level LEVEL
  kozmo crds [flags]        print Kozmo's CRDs (JSON; `kozmo crds | kubectl create -f -`)
      --kind KIND               only this kind (repeatable; e.g. PyTorchJob)
      --pod-schema FILE         give pod templates the full schema of the OpenAPI v2 document
                                FILE (`kubectl get --raw /openapi/v2`), as the peer's CRDs have
  kozmo copilot download [flags]   fetch a task's inputs (the copilot's init container)
      --input NAME=URI          an input (repeatable): one object into <input-path>/NAME, or every
                                object under a prefix/directory into <input-path>/NAME/...
      --input-path DIR          where the inputs go (default /var/kozmo/inputs); _inputs.json there
                                lists each input's URI, size and sha256
      --max-dataset-size BYTES  refuse inputs whose total is larger (default 0 = no cap)
  kozmo copilot upload [flags]     wait for the task's container, then store what it wrote
      --output-path DIR         what to upload (default /var/kozmo/outputs)
      --output-prefix URI       where to (required): file:///dir/ or s3://bucket/prefix/
      --timeout DURATION        how long to wait for <output-path>/_EXIT (default 1h)
    both:
      --termination-log PATH    where a failure is written for Kubernetes (default
                                /dev/termination-log when it exists)
      --s3-endpoint URL         an S3-compatible server (default https://s3.<region>.amazonaws.com)
      --s3-region REGION        (default us-east-1)
      --s3-virtual-hosted       address buckets as bucket.endpoint (default: endpoint/bucket)
      --s3-access-key-id ID  --s3-secret-access-key KEY   (default: $AWS_ACCESS_KEY_ID,
                                $AWS_SECRET_ACCESS_KEY; $AWS_SESSION_TOKEN is used when set)
      --s3-part-size BYTES      ranged GETs and multipart upload parts (default 64 MiB)
      --s3-list-page N          keys per ListObjectsV2 page (default and most 1000)
      --log-level LEVEL
  kozmo status [flags]      virtual clusters' GPUs, waiting gangs and why, jobs and tasks; also
                            `kubectl kozmo status` (the kubectl-kozmo link `meson install` puts
                            next to kozmo). See docs/status.md
      --kubeconfig PATH  --context NAME   (default: $KUBECONFIG, ~/.kube/config, in-cluster)
      -n, --namespace NS        jobs and tasks of NS only (default: all namespaces)
      -A, --all-namespaces      jobs and tasks of every namespace (the default)
      -o, --output FORMAT       wide (reasons in full, with their kind), json or yaml
      -w, --watch               redraw every --interval seconds until Ctrl-C
      --interval SECONDS        (default 2; 0.2..3600)
      --finished                also list Succeeded, Failed and Aborted jobs and tasks
      --inspect-url URL         the scheduler's inspect address (`kozmo controller`'s
                                --metrics-bind-address), e.g. https://127.0.0.1:8080; default:
                                the API server, then its service proxy to deploy/'s Service
      --inspect-ca FILE         the CA of the inspect address's certificate (default: the cluster's)
      --insecure-skip-tls-verify   do not check server certificates
  kozmo version
  kozmo help
)";
}

expected<command> parse_command_line(const std::vector<std::string>& args) {
  command cmd;
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    cmd.what = command::kind::help;
    return cmd;
  }
  const std::string& sub = args[0];
  auto rest = args.begin() + 1;
  if (sub == "version" || sub == "--version") {
    cmd.what = command::kind::version;
    return cmd;
  }
  if (sub == "local") {
    cmd.what = command::kind::local;
    auto& o = cmd.local;
    std::map<std::string, flag> flags{
        {"port", number_flag("port", o.port, 0, 65535)},
        {"nodes", number_flag("nodes", o.nodes, 0, 100000)},
        {"gpus-per-node", number_flag("gpus-per-node", o.gpus_per_node, 0, 1024)},
        {"cluster", string_flag(o.cluster_file)},
        {"data-dir", string_flag(o.data_dir)},
        {"event-ttl", seconds_flag("event-ttl", o.event_ttl_seconds)},
        {"write-kubeconfig", string_flag(o.write_kubeconfig)},
        {"demo", bool_flag(o.demo)},
        {"config", string_flag(o.config_file)},
        {"runtime", {true, [&o](const std::string& v) -> status {
                       if (v != "sim" && v != "process")
                         return error::bad_request("--runtime: \"" + v + "\" is not sim or process");
                       o.runtime = v;
                       return ok;
                     }}},
        {"allow-process-runtime", switch_flag("allow-process-runtime", o.allow_process_runtime)},
        {"process-user", string_flag(o.process_user)},
        {"fault-injection", switch_flag("fault-injection", o.fault_injection)},
        {"log-level", string_flag(o.log_level)},
    };
    if (auto st = parse_flags(sub, rest, args.end(), flags); !st)
      return st.err();
    return cmd;
  }
  if (sub == "kubelet") {
    cmd.what = command::kind::kubelet;
    auto& o = cmd.kubelet;
    std::map<std::string, flag> flags{
        {"kubeconfig", string_flag(o.kubeconfig)},
        {"nodes", number_flag("nodes", o.nodes, 0, 100000)},
        {"gpus-per-node", number_flag("gpus-per-node", o.gpus_per_node, 0, 1024)},
        {"cluster", string_flag(o.cluster_file)},
        {"node-prefix", string_flag(o.node_prefix)},
        {"training", bool_flag(o.training)},
        {"mpi-kubectl-delivery-image", string_flag(o.mpi_kubectl_delivery_image)},
        {"kube-api-qps", number_flag("kube-api-qps", o.kube_api_qps, 1, 100000)},
        {"kube-api-burst", number_flag("kube-api-burst", o.kube_api_burst, 1, 100000)},
        {"log-level", string_flag(o.log_level)},
    };
    if (auto st = parse_flags(sub, rest, args.end(), flags); !st)
      return st.err();
    return cmd;
  }
  if (sub == "apiserver") {
    cmd.what = command::kind::apiserver;
    auto& o = cmd.apiserver;
    std::map<std::string, flag> flags{
        {"port", number_flag("port", o.port, 0, 65535)},
        {"data-dir", string_flag(o.data_dir)},
        {"event-ttl", seconds_flag("event-ttl", o.event_ttl_seconds)},
        {"write-kubeconfig", string_flag(o.write_kubeconfig)},
        {"log-level", string_flag(o.log_level)},
    };
    if (auto st = parse_flags(sub, rest, args.end(), flags); !st)
      return st.err();
    return cmd;
  }
  if (sub == "extender") {
    cmd.what = command::kind::extender;
    auto& o = cmd.extender;
    std::map<std::string, flag> flags{
        {"config", string_flag(o.config)},
        {"kubeconfig", string_flag(o.kubeconfig)},
        {"listen", string_flag(o.listen)},
        {"client-ca-file", string_flag(o.client_ca_file)},
        {"tls-cert-file", string_flag(o.tls_cert_file)},
        {"tls-private-key-file", string_flag(o.tls_private_key_file)},
        {"insecure", switch_flag("insecure", o.insecure)},
        {"health-probe-bind-address", string_flag(o.probe_address)},
        {"log-level", string_flag(o.log_level)},
        {"kube-api-qps", number_flag("kube-api-qps", o.kube_api_qps, 1, 100000)},
        {"kube-api-burst", number_flag("kube-api-burst", o.kube_api_burst, 1, 100000)},
    };
    if (auto st = parse_flags(sub, rest, args.end(), flags); !st)
      return st.err();
    if (o.config.empty())
      return error::bad_request("kozmo extender: --config FILE (a HiveD configuration) is required");
    if (o.insecure && !o.client_ca_file.empty())
      return error::bad_request("kozmo extender: --insecure serves plain HTTP; --client-ca-file does not apply");
    if (o.client_ca_file.empty() && !o.tls_cert_file.empty())
      return error::bad_request("kozmo extender: --tls-cert-file serves TLS for mutual TLS: give --client-ca-file too");
    if (o.tls_cert_file.empty() != o.tls_private_key_file.empty())
      return error::bad_request("kozmo extender: give --tls-cert-file and --tls-private-key-file together");
    return cmd;
  }
  if (sub == "controller") {
    cmd.what = command::kind::controller;
    auto& o = cmd.controller;
    std::map<std::string, flag> flags{
        {"kubeconfig", string_flag(o.kubeconfig)},
        {"config", string_flag(o.config_file)},
        {"enable", enable_flag(o)},
        {"leader-elect", switch_flag("leader-elect", o.leader_elect)},
        {"metrics-bind-address", string_flag(o.metrics_bind_address)},
        {"metrics-secure", switch_flag("metrics-secure", o.metrics_secure)},
        {"secure-serving", switch_flag("secure-serving", o.metrics_secure)},
        {"tls-cert-file", string_flag(o.tls_cert_file)},
        {"tls-private-key-file", string_flag(o.tls_private_key_file)},
        {"health-probe-bind-address", string_flag(o.health_probe_bind_address)},
        {"log-level", string_flag(o.log_level)},
    };
    if (auto st = parse_flags(sub, rest, args.end(), flags); !st)
      return st.err();
    if (o.tls_cert_file.empty() != o.tls_private_key_file.empty())
      return error::bad_request("kozmo controller: --tls-cert-file and --tls-private-key-file go together");
    if (!o.tls_cert_file.empty() && !o.metrics_secure)
      return error::bad_request("kozmo controller: --tls-cert-file needs --metrics-secure (the metrics address "
                                "serves plain HTTP without it)");
    return cmd;
  }
  if (sub == "crds") {
    cmd.what = command::kind::crds;
    auto& o = cmd.crds;
    std::map<std::string, flag> flags{
        {"pod-schema", string_flag(o.pod_schema)},
        {"kind", {true, [&o](const std::string& v) -> status {
                    o.kinds.push_back(v);
                    return ok;
                  }}},
    };
    if (auto st = parse_flags(sub, rest, args.end(), flags); !st)
      return st.err();
    return cmd;
  }
  if (sub == "copilot")
    return parse_copilot(args, cmd);
  if (sub == "status") {
    auto o = parse_status_options(std::vector<std::string>(rest, args.end()));
    if (!o)
      return o.err();
    cmd.what = command::kind::status;
    cmd.status = std::move(*o);
    return cmd;
  }
  return error::bad_request("unknown command \"" + sub + "\"; run `kozmo help`");
}

} // namespace kozmo::runtime
