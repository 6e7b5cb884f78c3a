#pragma once

// The Eviction API (POST /api/v1/namespaces/<ns>/pods/<name>/eviction, a policy/v1 Eviction),
// as `kubectl drain` and cluster autoscalers use it. For a pod that is still running, the API
// server first marks it with the condition DisruptionTarget=True, reason
// EvictionByEvictionAPI, "Eviction API: evicting", then deletes it; a pod that has already
// finished is deleted as it is. The answer is a Status Success with code 201. The sandbox has
// no PodDisruptionBudgets, so no eviction is refused with a 429 (docs/sandbox.md).

namespace Starforge::Sandbox {

class ObjectStore;
struct RequestInfo;
namespace Http {
struct Request;
class Responder;
}

namespace Eviction {

void serve(ObjectStore &store, const RequestInfo &info, const Http::Request &request, Http::Responder *responder);

} // namespace Eviction

} // namespace Starforge::Sandbox
