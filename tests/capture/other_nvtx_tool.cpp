// Another NVTX tool: attaches (returns success) and records nothing. Under NVTX_INJECTION64_PATH it
// owns NVTX, so a program's static regionprof tool never attaches (NVTX_TOOL_CONFLICT).
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

extern "C" __attribute__((visibility("default"))) int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t) {
  return 1;
}
