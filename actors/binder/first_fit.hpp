// The default-scheduler stand-in of `kozmo local`: places a pod on the first node with room.
//
// `kozmo local` has no kube-scheduler, so pods that do not ask for Kozmo's GPU scheduler
// (schedulerName empty or "default-scheduler") are placed by this small first-fit rule:
// Ready, schedulable nodes whose labels match the pod's nodeSelector and required node
// affinity, whose NoSchedule taints the pod tolerates, and with enough free GPUs, CPU and memory. When nothing fits, the reason
// reads like kube-scheduler's: "0/3 nodes are available: 1 node(s) were unschedulable,
// 2 Insufficient nvidia.com/gpu."
#pragma once

#include "k8s/error.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace kozmo::binder {

struct taint {
  std::string key;
  std::string value;
  std::string effect;
};

struct toleration {
  std::string key;
  std::string op = "Equal"; // "Equal" or "Exists"
  std::string value;
  std::string effect;       // empty = all effects
  friend bool operator==(const toleration&, const toleration&) = default;
};

struct node_room {
  std::string name;
  bool ready = true;
  bool unschedulable = false;
  std::map<std::string, std::string> labels;
  std::vector<taint> taints;
  std::int64_t gpus = 0;         // allocatable minus what bound pods request
  std::int64_t milli_cpu = 0;
  std::int64_t memory_bytes = 0;
  // Allocatable pods minus bound ones (the kubelet refuses the one past it: OutOfpods); a node
  // that says nothing of pods is not limited.
  std::int64_t pods = std::numeric_limits<std::int64_t>::max();
};

// requiredDuringSchedulingIgnoredDuringExecution: terms ORed, each term's requirements ANDed, on
// node labels (operators In, NotIn, Exists, DoesNotExist, Gt, Lt).
struct label_requirement {
  std::string key;
  std::string op;
  std::vector<std::string> values;
  friend bool operator==(const label_requirement&, const label_requirement&) = default;
};
using node_selector_term = std::vector<label_requirement>;

// Whether `labels` satisfy one term.
bool matches_term(const node_selector_term& term, const std::map<std::string, std::string>& labels);

struct pod_need {
  std::int64_t gpus = 0;
  std::int64_t milli_cpu = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t pods = 1;
  std::map<std::string, std::string> node_selector;
  std::vector<node_selector_term> required_terms; // empty: no required node affinity
  std::vector<toleration> tolerations;
  friend bool operator==(const pod_need&, const pod_need&) = default;
};

// The chosen node's name, or an error whose message explains every node's refusal.
expected<std::string> choose_node(const pod_need& pod, const std::vector<node_room>& nodes);

} // namespace kozmo::binder
