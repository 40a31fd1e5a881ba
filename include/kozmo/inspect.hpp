// The GPU scheduler's inspect API (HiveD's GET /v1/inspect/... paths), as engine::inspect()
// answers it in process: the same status and JSON body an HTTP caller gets.
//
//   std::future<kozmo::inspect_answer> f = e.inspect("/v1/inspect/clusterstatus");
//   if (f.wait_for(std::chrono::seconds(5)) == std::future_status::ready) {
//     kozmo::inspect_answer a = f.get();   // a.status 200, a.body: the JSON
//   }
//
// Paths: /v1/inspect/clusterstatus, /v1/inspect/clusterstatus/physicalcluster,
// /v1/inspect/clusterstatus/virtualclusters/[NAME], /v1/inspect/affinitygroups/[NAME].
#pragma once

#include <string>

namespace kozmo {

struct inspect_answer {
  int status = 200;  // an HTTP status: 404 for an unknown path or name, 503 while no scheduler runs
  std::string body;  // JSON (HiveD's {code, message} on errors)
};

} // namespace kozmo
