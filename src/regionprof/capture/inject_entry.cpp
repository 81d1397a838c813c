// The injected route: NVTX loads the library named by NVTX_INJECTION64_PATH and calls this export.
// A shared library that combines the capture with other tools (regionprof's CUDA injection library)
// compiles this file with the capture objects, or defines its own InitializeInjectionNvtx2 that calls
// regionprof::attach_nvtx_capture() and defines capture_detail::route_name.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_route.hpp"

extern "C" __attribute__((visibility("default"))) int NVTX_API
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  return regionprof::attach_nvtx_capture(get_export_table);
}

const char* const regionprof::capture_detail::route_name = "injected";
