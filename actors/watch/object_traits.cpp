#include "actors/watch/object_traits.hpp"

namespace kozmo::watch {

namespace {

template <class T>
expected<watch_line<T>> to_line(expected<k8s::watch_event<T>> ev) {
  if (!ev)
    return ev.err();
  watch_line<T> out;
  out.resource_version = ev->resource_version;
  using k = typename watch_line<T>::kind;
  switch (ev->type) {
  case k8s::watch_event_type::added: out.what = k::added; break;
  case k8s::watch_event_type::modified: out.what = k::modified; break;
  case k8s::watch_event_type::deleted: out.what = k::deleted; break;
  case k8s::watch_event_type::bookmark: out.what = k::bookmark; return out;
  case k8s::watch_event_type::error:
    out.what = k::error;
    if (ev->status) {
      out.error_code = static_cast<int>(ev->status->code);
      out.error_message = ev->status->message;
    }
    return out;
  }
  out.object = std::make_shared<const T>(std::move(ev->object));
  return out;
}

} // namespace

template <class T>
expected<watch_line<T>> meta_traits<T>::decode_line(std::string_view line) {
  return to_line(k8s::decode_watch_event<T>(line));
}

expected<watch_line<k8s::pod>> object_traits<k8s::pod>::decode_counted_line(std::string_view line) {
  return to_line(k8s::decode_counted_pod_event(line));
}

expected<k8s::object_list<k8s::pod>> object_traits<k8s::pod>::decode_counted_list(std::string_view body) {
  return k8s::decode_counted_pod_list(body);
}

expected<k8s::object_list<k8s::pod>>
object_traits<k8s::pod>::decode_counted_list_protobuf(std::string_view body, std::vector<std::string>& skipped) {
  return k8s::decode_counted_pod_list_protobuf(body, &skipped);
}

template <class T>
expected<k8s::object_list<T>> meta_traits<T>::decode_list(std::string_view body) {
  return k8s::decode_list<T>(body);
}

template struct meta_traits<k8s::pod>;
template struct meta_traits<k8s::node>;
template struct meta_traits<k8s::service>;
template struct meta_traits<k8s::custom_object>;

} // namespace kozmo::watch
