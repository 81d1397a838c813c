// CUPTI and the CUDA driver, loaded at run time with dlopen (never linked), and the one checking macro
// every CUPTI call goes through.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "regionprof/collect/cupti_records.hpp"

namespace regionprof::collect {

// The CUPTI entry points regionprof uses. REQUIRED ones must resolve for CUPTI to count as present;
// OPTIONAL ones are newer than CUPTI 12.0 and are used when the loaded library has them (without the
// timestamp callback, CUPTI's clock is mapped onto ours by paired samples).
#define REGIONPROF_CUPTI_REQUIRED(X)        \
  X(cuptiGetResultString)                   \
  X(cuptiGetCallbackName)                   \
  X(cuptiActivityGetNextRecord)             \
  X(cuptiActivityRegisterCallbacks)         \
  X(cuptiActivityEnable)                    \
  X(cuptiActivityDisable)                   \
  X(cuptiActivityFlushAll)                  \
  X(cuptiActivityGetNumDroppedRecords)      \
  X(cuptiGetTimestamp)                      \
  X(cuptiSetThreadIdType)                   \
  X(cuptiSubscribe)                         \
  X(cuptiUnsubscribe)
#define REGIONPROF_CUPTI_OPTIONAL(X)       \
  X(cuptiGetVersion)                       \
  X(cuptiActivityRegisterTimestampCallback) \
  X(cuptiSubscribe_v2)                     \
  X(cuptiActivityEnableRuntimeApi)         \
  X(cuptiActivityEnableDriverApi)           \
  X(cuptiEnableCallback)                    \
  X(cuptiGetGraphNodeId)                    \
  X(cuptiFinalize)

/// Function table of CUPTI, resolved with dlsym. A null entry is an optional function the library lacks.
struct cupti_functions {
#define REGIONPROF_CUPTI_MEMBER(name) decltype(&::name) name = nullptr;
  REGIONPROF_CUPTI_REQUIRED(REGIONPROF_CUPTI_MEMBER)
  REGIONPROF_CUPTI_OPTIONAL(REGIONPROF_CUPTI_MEMBER)
#undef REGIONPROF_CUPTI_MEMBER
};

/// A loaded libcupti (or why none could be loaded). Libraries are never unloaded.
struct cupti_library {
  cupti_functions fn;
  std::string path;       ///< the file loaded, when loaded
  std::string error;      ///< why CUPTI is unavailable; empty when loaded
  unsigned major = 0;     ///< CUPTI major version (13, 12); 0 when unknown
  /// cuptiGetVersion's answer: 19..28 for CUDA 12.x, xxyyzz (130001) since CUDA 13; 0 when unknown.
  std::uint32_t api_version = 0;
  bool loaded() const noexcept { return error.empty(); }
};

/// Loads CUPTI: a libcupti already in the process (a second copy would fight the first for the driver),
/// else `override_path` alone when non-empty (REGIONPROF_CUPTI_PATH), else libcupti.so.13, libcupti.so.12
/// from the loader's search path, else the toolkit's usual places ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda:
/// extras/CUPTI/lib64 and lib64). The error names every place tried.
cupti_library load_cupti_library(std::string_view override_path);

/// The process's CUPTI, loaded once on first use with REGIONPROF_CUPTI_PATH as the override.
const cupti_library& process_cupti();

/// The outcome of one CUPTI call. Never thrown: callers turn failures into warnings or reasons.
struct cupti_status {
  CUptiResult result = CUPTI_SUCCESS;
  std::string message;  ///< "cuptiX(args) -> CUPTI_ERROR_Y (n) at file:line"; empty on success
  bool ok() const noexcept { return result == CUPTI_SUCCESS; }
};

/// Turns a CUPTI result into a cupti_status naming the call, the result string and file:line.
cupti_status check_cupti(const cupti_library& library, CUptiResult result, const char* call, const char* file,
                         int line) noexcept;
/// The status of a call to an optional entry point the loaded CUPTI lacks (CUPTI_ERROR_NOT_SUPPORTED).
cupti_status missing_cupti_entry(const char* call, const char* file, int line) noexcept;
/// CUPTI_ERROR_X for `result` (through cuptiGetResultString when loaded).
std::string cupti_result_name(const cupti_library& library, CUptiResult result);

/// The one way regionprof calls CUPTI: REGIONPROF_CUPTI(library, cuptiActivityEnable, kind) calls the entry
/// point through `library.fn` (when the library has it) and evaluates to a cupti_status.
#define REGIONPROF_CUPTI(library, call, ...)                                                                  \
  ((library).fn.call != nullptr                                                                               \
       ? ::regionprof::collect::check_cupti((library), (library).fn.call(__VA_ARGS__), #call "(" #__VA_ARGS__ ")", \
                                            __FILE__, __LINE__)                                               \
       : ::regionprof::collect::missing_cupti_entry(#call "(" #__VA_ARGS__ ")", __FILE__, __LINE__))

/// The CUDA driver entry points regionprof uses (probe and synchronisation), resolved from libcuda.so.1 by
/// their exported names (cuda.h maps some to `_v2` symbols with macros, so members are named apart).
struct driver_functions {
  CUresult (*init)(unsigned int) = nullptr;                                  // cuInit
  CUresult (*device_get_count)(int*) = nullptr;                              // cuDeviceGetCount
  CUresult (*device_get)(CUdevice*, int) = nullptr;                          // cuDeviceGet
  CUresult (*primary_ctx_get_state)(CUdevice, unsigned int*, int*) = nullptr;  // cuDevicePrimaryCtxGetState
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;            // cuDevicePrimaryCtxRetain
  CUresult (*primary_ctx_release)(CUdevice) = nullptr;                       // cuDevicePrimaryCtxRelease_v2
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;                         // cuCtxGetCurrent
  CUresult (*ctx_push_current)(CUcontext) = nullptr;                         // cuCtxPushCurrent_v2
  CUresult (*ctx_pop_current)(CUcontext*) = nullptr;                         // cuCtxPopCurrent_v2
  CUresult (*ctx_synchronize)() = nullptr;                                   // cuCtxSynchronize
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;              // cuGetErrorName
  // Cold runs (device_l2_flusher): optional, the flush is skipped without them.
  CUresult (*ctx_get_device)(CUdevice*) = nullptr;                           // cuCtxGetDevice
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;  // cuDeviceGetAttribute
  CUresult (*mem_alloc)(CUdeviceptr*, std::size_t) = nullptr;                // cuMemAlloc_v2
  CUresult (*mem_free)(CUdeviceptr) = nullptr;                               // cuMemFree_v2
  CUresult (*memset_d8_async)(CUdeviceptr, unsigned char, std::size_t, CUstream) = nullptr;  // cuMemsetD8Async
};

/// libcuda.so.1 when the dynamic loader finds it (never linked: nothing in regionprof links libcuda).
struct driver_library {
  driver_functions fn;
  std::string error;  ///< "no CUDA driver (...)" when absent; empty when loaded
  bool loaded() const noexcept { return error.empty(); }
};

/// The process's driver, probed once on first use.
const driver_library& process_driver();

/// CUDA_ERROR_X (n) for a driver result.
std::string driver_result_name(const driver_library& driver, CUresult result);

}  // namespace regionprof::collect
