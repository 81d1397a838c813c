// BM_PushPop_NoTool's loop, in a shared library of its own: its NVTX instance (NVTX's globals are
// hidden, one per module) has no tool, while regionprof_bench's own instance has the static capture tool.
#include "notool_push_pop.hpp"

#include <nvtx3/nvToolsExt.h>

void regionprof_bench_notool_push_pop(benchmark::State& state) {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("regionprof");
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attributes.message.registered = nvtxDomainRegisterStringA(domain, "region:bench");
  for (auto _ : state) {
    nvtxDomainRangePushEx(domain, &attributes);
    nvtxDomainRangePop(domain);
  }
}

bool regionprof_bench_notool_attached() {
  // With no tool, NVTX hands out null handles.
  return nvtxDomainCreateA("regionprof") != nullptr;
}
