// Decoding from a json::value tree (objects held by the embedded API server, documents
// already parsed for another reason). Same decoders as the fast path.
#include "k8s/model/codec.hpp"
#include "k8s/model/detail/tree_node.hpp"

namespace kozmo::k8s {

template <class T>
expected<T> from_json(const json::value& v) {
  T out{};
  detail::tree_node n(v);
  if (auto s = detail::decode(n, out); !s.ok())
    return s.to_error();
  return out;
}

template expected<pod> from_json<pod>(const json::value&);
template expected<node> from_json<node>(const json::value&);
template expected<service> from_json<service>(const json::value&);
template expected<event> from_json<event>(const json::value&);
template expected<lease> from_json<lease>(const json::value&);
template expected<namespace_object> from_json<namespace_object>(const json::value&);
template expected<pod_template> from_json<pod_template>(const json::value&);
template expected<pod_template_spec> from_json<pod_template_spec>(const json::value&);
template expected<pod_spec> from_json<pod_spec>(const json::value&);
template expected<object_meta> from_json<object_meta>(const json::value&);
template expected<api_status> from_json<api_status>(const json::value&);
template expected<custom_object> from_json<custom_object>(const json::value&);

expected<custom_object> custom_object_from(json::value&& document) {
  custom_object out;
  if (auto s = detail::decode_custom_object_tree(std::move(document), out); !s.ok())
    return s.to_error();
  return out;
}

} // namespace kozmo::k8s
