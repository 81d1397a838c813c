// The extension as an NVTX injection library: regionprof/__init__.py points NVTX_INJECTION64_PATH at
// this shared object (unless another tool is named there), so every NVTX instance of the process
// (torch's, the `nvtx` package's, this extension's own) attaches the one capture linked in here.
#include <cstdint>

#include "regionprof/capture/capture.hpp"

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(std::uint32_t)) {
  return regionprof::attach_nvtx_capture(get_export_table);
}
