// A program built WITHOUT regionprof's static tool: only NVTX's own header. test_capture runs it under
// NVTX_INJECTION64_PATH=libregionprof_nvtx_inject.so and checks the trace that library writes.
//
// What it emits (every name and count is checked): on the main thread, 3 x range `step` (domain
// `plain_app`, registered) each holding `layer_0` .. `layer_3` (nvtxRangePushA); a worker thread with
// 1000 `worker_op` ranges (nvtxRangePushW); a range `handoff` started on the main thread and ended on the
// worker.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <string>
#include <thread>

int main() {
  const nvtxDomainHandle_t domain = nvtxDomainCreateA("plain_app");
  nvtxEventAttributes_t step{};
  step.version = NVTX_VERSION;
  step.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  step.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  step.message.registered = nvtxDomainRegisterStringA(domain, "step");
  for (int s = 0; s < 3; ++s) {
    nvtxDomainRangePushEx(domain, &step);
    for (int layer = 0; layer < 4; ++layer) {
      const std::string name = "layer_" + std::to_string(layer);
      nvtxRangePushA(name.c_str());
      nvtxRangePop();
    }
    nvtxDomainRangePop(domain);
  }
  const nvtxRangeId_t handoff = nvtxRangeStartA("handoff");
  std::thread worker([handoff] {
    for (int i = 0; i < 1000; ++i) {
      nvtxRangePushW(L"worker_op");
      nvtxRangePop();
    }
    nvtxRangeEnd(handoff);
  });
  worker.join();
  std::puts("plain app done");
  return 0;
}
