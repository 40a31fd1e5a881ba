// POST /debug/faults on an embedded API server started with fault injection (`kozmo local
// --fault-injection`): what a flaky network or an overloaded kube-apiserver does to its clients,
// switched on from outside the process, for the chaos harness (tests/chaos). The route sits
// behind the server's authentication like every other path. Bodies (JSON):
//   {"action":"dropWatches"}                          close every open watch now
//   {"action":"dropWatchesAfter","events":N}          close each watch after N more events (0: off)
//   {"action":"expireResumes","on":true}              a watch resuming from a version gets 410
//   {"action":"failNext","count":N,"status":S,"prefix":"/api/v1/pods","retryAfter":1}
//   {"action":"latency","ms":N}                       delay every response by N ms
//   {"action":"clear"}                                back to normal service
#pragma once

#include "k8s/apiserver/faults.hpp"
#include "k8s/apiserver/server.hpp"

#include <string>

namespace kozmo::apiserver {

server::route_reply fault_route(fault_injector& faults, const std::string& method, const std::string& body);

} // namespace kozmo::apiserver
