// Counted pods from the API server's protobuf: the fields decode_counted_pod_list reads from
// JSON, at the field numbers of k8s.io/api/core/v1/generated.proto (Pod, PodSpec, Container,
// ResourceRequirements, PodStatus) and apimachinery's meta/v1 (ObjectMeta, ListMeta,
// OwnerReference, Time) and resource (Quantity). Every other field is stepped over unread.
#include "k8s/model/detail/tree_node.hpp"
#include "k8s/model/watch.hpp"
#include "k8s/protobuf_wire.hpp"

#include <chrono>

namespace kozmo::k8s {
namespace {

using protobuf::field;
using protobuf::wire_bytes;
using protobuf::wire_varint;

// Why a pod could not be read, kept for the message; wire errors end the whole list instead.
struct item_error {
  std::string what;
};

std::string text(const field& f) { return std::string(f.bytes); }

// metav1.Time {1: seconds, 2: nanos}. JSON carries whole seconds (RFC 3339 without a
// fraction), and so does the model, whichever form the object came in.
bool read_time(std::string_view data, std::optional<time_point>& out) {
  auto seconds = protobuf::time_seconds(data);
  if (!seconds)
    return false;
  out = time_from_seconds(*seconds);
  return true;
}

// A map entry {1: key, 2: value}: the value's bytes.
bool read_entry(std::string_view data, std::string_view& key, std::string_view& value) {
  return protobuf::each_field(data, [&](const field& f) {
    if (f.wire == wire_bytes && f.number == 1)
      key = f.bytes;
    else if (f.wire == wire_bytes && f.number == 2)
      value = f.bytes;
    return true;
  });
}

// A map<string, string> entry.
bool read_string_entry(std::string_view data, string_map& out) {
  std::string_view key, value;
  if (!read_entry(data, key, value))
    return false;
  out.append_or_reset(key) = std::string(value);
  return true;
}

// A map<string, Quantity> entry, Quantity being {1: string}.
bool read_quantity_entry(std::string_view data, resource_list& out, std::optional<item_error>& bad) {
  std::string_view key, message, value;
  if (!read_entry(data, key, message) || !protobuf::each_field(message, [&](const field& f) {
        if (f.number == 1 && f.wire == wire_bytes)
          value = f.bytes;
        return true;
      }))
    return false;
  quantity parsed;
  if (auto s = detail::tree_node::parse_quantity_text(value, parsed); !s.ok()) {
    if (!bad)
      bad = item_error{"resource " + std::string(key) + ": " + s.to_error().message};
    return true;
  }
  out.append_or_reset(key) = parsed;
  return true;
}

bool read_owner_reference(std::string_view data, owner_reference& o) {
  return protobuf::each_field(data, [&](const field& f) {
    switch (f.number) {
    case 1: o.kind = text(f); break;
    case 3: o.name = text(f); break;
    case 4: o.uid = text(f); break;
    case 5: o.api_version = text(f); break;
    case 6: o.controller = f.varint != 0; break;
    case 7: o.block_owner_deletion = f.varint != 0; break;
    default: break;
    }
    return true;
  });
}

bool read_object_meta(std::string_view data, object_meta& m) {
  return protobuf::each_field(data, [&](const field& f) {
    switch (f.number) {
    case 1: m.name = text(f); return true;
    case 2: m.generate_name = text(f); return true;
    case 3: m.namespace_ = text(f); return true;
    case 5: m.uid = text(f); return true;
    case 6: m.resource_version = text(f); return true;
    case 7: m.generation = protobuf::as_int64(f); return true;
    case 8: return read_time(f.bytes, m.creation_timestamp);
    case 9: return read_time(f.bytes, m.deletion_timestamp);
    case 10: m.deletion_grace_period_seconds = protobuf::as_int64(f); return true;
    case 11: return read_string_entry(f.bytes, m.labels);
    case 12: return read_string_entry(f.bytes, m.annotations);
    case 13: return read_owner_reference(f.bytes, m.owner_references.emplace_back());
    case 14: m.finalizers.push_back(text(f)); return true;
    default: return true; // selfLink, clusterName, managedFields
    }
  });
}

// Container: {1: name, 8: resources {1: limits, 2: requests}}.
bool read_container(std::string_view data, container& c, std::optional<item_error>& bad) {
  return protobuf::each_field(data, [&](const field& f) {
    if (f.number == 1)
      c.name = text(f);
    if (f.number != 8 || f.wire != wire_bytes)
      return true;
    return protobuf::each_field(f.bytes, [&](const field& rf) {
      if (rf.wire != wire_bytes || (rf.number != 1 && rf.number != 2))
        return true;
      return read_quantity_entry(rf.bytes, rf.number == 1 ? c.resources.limits : c.resources.requests, bad);
    });
  });
}

// PodSpec: {2: containers, 10: nodeName, 19: schedulerName, 20: initContainers, 25: priority}.
bool read_spec(std::string_view data, pod_spec& s, std::optional<item_error>& bad) {
  return protobuf::each_field(data, [&](const field& f) {
    switch (f.number) {
    case 2: return read_container(f.bytes, s.containers.emplace_back(), bad);
    case 10: s.node_name = text(f); return true;
    case 19: s.scheduler_name = text(f); return true;
    case 20: return read_container(f.bytes, s.init_containers.emplace_back(), bad);
    case 25: s.priority = protobuf::as_int32(f); return true;
    default: return true;
    }
  });
}

// Pod: {1: metadata, 2: spec, 3: status {1: phase}}.
bool read_counted_pod(std::string_view data, pod& p, std::optional<item_error>& bad) {
  return protobuf::each_field(data, [&](const field& f) {
    if (f.wire != wire_bytes)
      return true;
    switch (f.number) {
    case 1: return read_object_meta(f.bytes, p.metadata);
    case 2: return read_spec(f.bytes, p.spec, bad);
    case 3:
      return protobuf::each_field(f.bytes, [&](const field& sf) {
        if (sf.number == 1 && sf.wire == wire_bytes)
          p.status.phase = text(sf);
        return true;
      });
    default: return true;
    }
  });
}

// ListMeta: {2: resourceVersion, 3: continue, 4: remainingItemCount}.
bool read_list_meta(std::string_view data, object_list<pod>& out) {
  return protobuf::each_field(data, [&](const field& f) {
    if (f.number == 2)
      out.resource_version = text(f);
    else if (f.number == 3)
      out.continue_token = text(f);
    else if (f.number == 4 && f.wire == wire_varint)
      out.remaining_item_count = protobuf::as_int64(f);
    return true;
  });
}

} // namespace

expected<object_list<pod>> decode_counted_pod_list_protobuf(std::string_view body, std::vector<std::string>* skipped) {
  auto env = protobuf::open_envelope(body);
  if (!env)
    return error::bad_request("not a protobuf-encoded Kubernetes object (no k8s prefix, or malformed wire data)");
  if (!env->kind.empty() && env->kind != "PodList")
    return error::bad_request("expected a PodList in protobuf, got " + std::string(env->kind));
  object_list<pod> out;
  std::string problem;
  bool read = protobuf::each_field(env->raw, [&](const field& f) {
    if (f.wire != wire_bytes)
      return true;
    if (f.number == 1) {
      if (!read_list_meta(f.bytes, out))
        problem = "malformed protobuf in a PodList's metadata";
      return problem.empty();
    }
    if (f.number != 2)
      return true;
    pod p;
    std::optional<item_error> bad;
    if (!read_counted_pod(f.bytes, p, bad)) {
      problem = "malformed protobuf in pod " + std::to_string(out.items.size()) + " of a PodList";
      return false;
    }
    if (bad) {
      if (skipped)
        skipped->push_back(p.metadata.namespace_ + "/" + p.metadata.name + ": " + bad->what);
      return true;
    }
    out.items.push_back(std::move(p));
    return true;
  });
  if (!read)
    return error::bad_request(problem.empty() ? "malformed protobuf in a PodList" : problem);
  return out;
}

} // namespace kozmo::k8s
