// Writing stored objects to the wire: stored objects carry no kind/apiVersion (store.hpp), so
// they are stamped here, first in the object as kube-apiserver writes them.
#pragma once

#include "k8s/apiserver/resource_types.hpp"
#include "k8s/json/value.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kozmo::apiserver {

// {"kind":K,"apiVersion":V,...rest of obj...}
void encode_typed_to(std::string& out, std::string_view kind, std::string_view api_version, const json::value& obj);
std::string encode_object(const resource_type& rt, std::string_view version, const json::value& obj);

// A List: {"kind":"PodList","apiVersion":"v1","metadata":{...},"items":[...]}. Items of built-in
// kinds carry no kind/apiVersion (as kube-apiserver's typed lists); custom resources do.
std::string encode_list(const resource_type& rt, std::string_view version, const json::value& list_meta,
                        const std::vector<std::shared_ptr<const json::value>>& items);

// The object without kind/apiVersion, as the store keeps it.
json::value strip_type(json::value obj);

} // namespace kozmo::apiserver
