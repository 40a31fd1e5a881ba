#include "k8s/model/make_event.hpp"

#include "k8s/model/time.hpp"

namespace kozmo::k8s {

object_reference pod_reference(const std::string& ns, const std::string& name, const std::string& uid) {
  object_reference ref;
  ref.api_version = "v1";
  ref.kind = "Pod";
  ref.namespace_ = ns;
  ref.name = name;
  ref.uid = uid;
  return ref;
}

json::value make_event(const object_reference& about, const event_source& source, const std::string& type,
                       const std::string& reason, const std::string& message,
                       std::chrono::system_clock::time_point now) {
  json::value ev;
  ev["apiVersion"] = "v1";
  ev["kind"] = "Event";
  ev["metadata"]["generateName"] = about.name + ".";
  ev["metadata"]["namespace"] = about.namespace_.empty() ? std::string("default") : about.namespace_;
  auto& obj = ev["involvedObject"];
  obj["apiVersion"] = about.api_version;
  obj["kind"] = about.kind;
  if (!about.namespace_.empty())
    obj["namespace"] = about.namespace_;
  obj["name"] = about.name;
  if (!about.uid.empty())
    obj["uid"] = about.uid;
  ev["reason"] = reason;
  ev["message"] = message;
  ev["type"] = type;
  ev["source"]["component"] = source.component;
  if (!source.host.empty())
    ev["source"]["host"] = source.host;
  ev["firstTimestamp"] = format_time(now);
  ev["lastTimestamp"] = format_time(now);
  ev["count"] = 1;
  ev["reportingComponent"] = source.component;
  ev["reportingInstance"] = source.host.empty() ? source.component : source.host;
  return ev;
}

} // namespace kozmo::k8s
