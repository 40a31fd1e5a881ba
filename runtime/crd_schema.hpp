// Kozmo's CRDs with full pod-template schemas, the way controller-gen writes the peer's CRDs.
//
// Kozmo's own CRDs (deploy/crds) keep a pod template as `x-kubernetes-preserve-unknown-fields`:
// small files, and the template is checked where it becomes a pod. The peer's CRDs carry the
// whole corev1.PodTemplateSpec schema instead (~600 KB), so the API server prunes unknown fields
// and applies defaults inside templates. `kozmo crds --pod-schema FILE` writes that form from a
// cluster's own OpenAPI v2 document (`kubectl get --raw /openapi/v2`), so the schema matches the
// Kubernetes version it is installed on. Pure: no I/O.
#pragma once

#include "k8s/error.hpp"
#include "k8s/json/value.hpp"

namespace kozmo::runtime {

// `crd` with every opaque Kubernetes type in its schemas replaced by the structural schema the
// OpenAPI v2 document `openapi` gives for it:
//   - `template` (corev1.PodTemplateSpec; its metadata as labels, annotations, name,
//     namespace and finalizers),
//   - `minResources` (a map of resource.Quantity), `labelSelector` (metav1.LabelSelector),
//   - `metrics` items (autoscaling MetricSpec, v2 or v2beta2, whichever the cluster serves).
// $refs are inlined; IntOrString and Quantity become `x-kubernetes-int-or-string` with the
// `anyOf` controller-gen writes; list-map keys that are neither required nor defaulted get the
// default Kubernetes documents (`protocol: TCP`), as a structural schema requires. Fails when
// the document lacks a definition the CRD needs.
expected<json::value> with_full_pod_schema(const json::value& crd, const json::value& openapi);

} // namespace kozmo::runtime
