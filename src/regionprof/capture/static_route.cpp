// The static route: NVTX's loader finds this strong definition of its weak InitializeInjectionNvtx2_fnptr
// in the program's own NVTX instance (NVTX_LOAD_SEQUENCE_VERSION 2, after NVTX_INJECTION64_PATH).
//
// capture_session.cpp refers to `route_name`, so every program that uses the capture API pulls this
// object (and with it the strong symbol) out of the static library.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "regionprof/capture/capture.hpp"
#include "regionprof/capture/capture_route.hpp"

namespace {

int NVTX_API initialize_static_route(NvtxGetExportTableFunc_t get_export_table) {
  return regionprof::attach_nvtx_capture(get_export_table);
}

}  // namespace

extern "C" {
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = initialize_static_route;
}

const char* const regionprof::capture_detail::route_name = "static";
