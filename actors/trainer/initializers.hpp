// Claims and initializers of a TrainJob (jobset.hpp's rules 9 and 10):
//   9. Claims: each volumeClaimPolicies template N becomes one PersistentVolumeClaim `N-<trainjob>`
//      (labelled with the job, owned by it unless retentionPolicy.whenDeleted is Retain), and every
//      pod whose containers mount a volume named N gets the volume {N: claim N-<trainjob>}. A TrainJob
//      with an initializer whose runtime declares no claim `initializer` gets one anyway (the peer
//      asks every runtime to bring it): `initializer-<trainjob>`, ReadWriteOnce, 10Gi (or the
//      TrainJob's annotation kozmo.io/initializer-storage), mounted at /workspace in the initializer
//      and trainer containers that mount nothing there.
//  10. Native initializers (options.native_initializers, kozmo local): an initializer container
//      without a command fetches its STORAGE_URI itself with `kozmo copilot download` into
//      /workspace/dataset or /workspace/model (file:// and s3://; ENDPOINT and REGION in the
//      initializer's env name the S3 server). Another scheme (hf://) cannot be fetched here: the
//      TrainJob fails at once with reason InitializerNotSupported and what to use instead.
#pragma once

#include "actors/trainer/jobset.hpp"

#include <string>
#include <vector>

namespace kozmo::trainer {

struct claim_plan {
  std::vector<json::value> claims; // complete PersistentVolumeClaims
  std::vector<std::string> names;  // the volume names (templates' metadata.name)
  bool automatic = false;          // rule 9's claim `initializer` added by Kozmo
};

expected<claim_plan> plan_claims(const train_job& job, const runtime_spec& rt);

// Rule 9 on one pod spec: volumes for the claims its containers mount; with `automatic`, the
// /workspace mount on the container `main` (an initializer's or the trainer's).
void attach_claims(json::value& pod_spec, const claim_plan& claims, const std::string& job, const std::string& main);

// Rule 10 on an initializer container (`step_name`: dataset-initializer or model-initializer).
expected<bool> native_initializer(json::value& container, const initializer& init, std::string_view step_name);

// The peer's check: a TrainJob's initializer needs the runtime's replicated job of that name.
expected<bool> check_initializers(const train_job& job, const runtime_spec& rt);

} // namespace kozmo::trainer
