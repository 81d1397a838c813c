#include "regionprof/collect/cupti_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace regionprof::collect {
namespace {

constexpr int open_flags = RTLD_NOW | RTLD_LOCAL;

/// A function pointer from dlsym without the object-to-function pointer cast ISO C++ leaves undefined.
template <class Function>
Function symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  Function function = nullptr;
  static_assert(sizeof function == sizeof address);
  std::memcpy(&function, &address, sizeof function);
  return function;
}

std::string last_dl_error() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dlopen error";
}

/// The file behind a handle, for messages ("/usr/local/cuda/lib64/libcupti.so.13").
std::string file_of(void* handle, std::string_view fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return std::string(fallback);
}

/// Resolves the table; returns the names of missing required entry points ("" when complete).
std::string resolve(void* handle, cupti_functions& fn) {
  std::string missing;
#define REGIONPROF_RESOLVE_REQUIRED(name)                          \
  fn.name = symbol<decltype(fn.name)>(handle, #name);              \
  if (fn.name == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(#name);
#define REGIONPROF_RESOLVE_OPTIONAL(name) fn.name = symbol<decltype(fn.name)>(handle, #name);
  REGIONPROF_CUPTI_REQUIRED(REGIONPROF_RESOLVE_REQUIRED)
  REGIONPROF_CUPTI_OPTIONAL(REGIONPROF_RESOLVE_OPTIONAL)
#undef REGIONPROF_RESOLVE_REQUIRED
#undef REGIONPROF_RESOLVE_OPTIONAL
  return missing;
}

/// CUPTI major version: from cuptiGetVersion (xxyyzz since CUDA 13; 19..28 for CUDA 12.x), else the file
/// name, else the version regionprof was built for. cuptiGetVersion reports 0 on some machines without a
/// driver, hence the fallbacks.
unsigned detect_major(const cupti_library& library) {
  std::uint32_t version = 0;
  if (library.fn.cuptiGetVersion != nullptr && library.fn.cuptiGetVersion(&version) == CUPTI_SUCCESS &&
      version != 0) {
    if (version >= 10000) return version / 10000;
    if (version >= 19) return 12;
    return 11;
  }
  if (library.path.find(".so.12") != std::string::npos) return 12;
  if (library.path.find(".so.13") != std::string::npos) return 13;
  return built_cupti_major;
}

/// Fills `library` from an open handle; false (with the reason appended to `tried`) when unusable.
bool adopt(void* handle, std::string_view name, cupti_library& library, std::string& tried) {
  cupti_functions fn;
  const std::string missing = resolve(handle, fn);
  if (!missing.empty()) {
    tried += "; " + std::string(name) + ": lacks " + missing;
    return false;
  }
  library.fn = fn;
  library.path = file_of(handle, name);
  library.major = detect_major(library);
  if (library.fn.cuptiGetVersion != nullptr) {
    std::uint32_t version = 0;
    if (library.fn.cuptiGetVersion(&version) == CUPTI_SUCCESS) library.api_version = version;
  }
  if (library.major < 12) {
    tried += "; " + library.path + ": CUPTI older than CUDA 12 (regionprof decodes CUPTI 12 and 13 records)";
    library.fn = {};
    library.path.clear();
    return false;
  }
  library.error.clear();
  return true;
}

std::vector<std::string> toolkit_candidates() {
  std::vector<std::string> roots;
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* value = std::getenv(variable);
    if (value != nullptr && value[0] != '\0') roots.emplace_back(value);
  }
  roots.emplace_back("/usr/local/cuda");
  std::vector<std::string> files;
  for (const std::string& root : roots) {
    for (const char* folder : {"/extras/CUPTI/lib64/", "/lib64/"}) {
      for (const char* file : {"libcupti.so.13", "libcupti.so.12"}) files.push_back(root + folder + file);
    }
  }
  return files;
}

}  // namespace

cupti_library load_cupti_library(std::string_view override_path) {
  cupti_library library;
  std::string tried;

  // A copy already loaded (PyTorch's wheel brings one) is the one to use: two libcupti in one process
  // would both attach to the driver.
  for (const char* soname : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
    if (void* handle = dlopen(soname, open_flags | RTLD_NOLOAD)) {
      if (adopt(handle, soname, library, tried)) return library;
    }
  }

  if (!override_path.empty()) {
    const std::string path(override_path);
    if (void* handle = dlopen(path.c_str(), open_flags)) {
      if (adopt(handle, path, library, tried)) return library;
    } else {
      tried += "; " + path + ": " + last_dl_error();
    }
    library.error = "no usable CUPTI at REGIONPROF_CUPTI_PATH (" + tried.substr(2) +
                    "); point REGIONPROF_CUPTI_PATH at CUDA 13's libcupti.so.13 or unset it";
    return library;
  }

  std::vector<std::string> candidates = {"libcupti.so.13", "libcupti.so.12"};
  for (std::string& file : toolkit_candidates()) candidates.push_back(std::move(file));
  for (const std::string& candidate : candidates) {
    if (void* handle = dlopen(candidate.c_str(), open_flags)) {
      if (adopt(handle, candidate, library, tried)) return library;
    } else if (candidate.find('/') == std::string::npos) {
      tried += "; " + candidate + ": " + last_dl_error();
    } else {
      dlerror();  // clear; a missing toolkit path is listed without the loader's wording
      tried += "; " + candidate + ": absent";
    }
  }
  library.error = "no CUPTI (tried " + tried.substr(2) +
                  "); install the CUDA toolkit's CUPTI or set REGIONPROF_CUPTI_PATH to libcupti.so.13";
  return library;
}

const cupti_library& process_cupti() {
  static const cupti_library library = [] {
    const char* override_path = std::getenv("REGIONPROF_CUPTI_PATH");
    return load_cupti_library(override_path != nullptr ? override_path : "");
  }();
  return library;
}

std::string cupti_result_name(const cupti_library& library, CUptiResult result) {
  const char* text = nullptr;
  if (library.fn.cuptiGetResultString != nullptr && library.fn.cuptiGetResultString(result, &text) == CUPTI_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return "CUPTI result " + std::to_string(static_cast<int>(result));
}

cupti_status check_cupti(const cupti_library& library, CUptiResult result, const char* call, const char* file,
                         int line) noexcept {
  cupti_status status;
  status.result = result;
  if (result == CUPTI_SUCCESS) return status;
  try {
    const char* base = std::strrchr(file, '/');
    status.message = std::string(call) + " -> " + cupti_result_name(library, result) + " (" +
                     std::to_string(static_cast<int>(result)) + ") at " + (base != nullptr ? base + 1 : file) + ":" +
                     std::to_string(line);
  } catch (...) {
    // Out of memory while describing a failure: the result code alone still says it failed.
  }
  return status;
}

cupti_status missing_cupti_entry(const char* call, const char* file, int line) noexcept {
  cupti_status status;
  status.result = CUPTI_ERROR_NOT_SUPPORTED;
  try {
    const char* base = std::strrchr(file, '/');
    status.message = std::string(call) + " is not in the loaded CUPTI at " + (base != nullptr ? base + 1 : file) +
                     ":" + std::to_string(line);
  } catch (...) {
  }
  return status;
}

const driver_library& process_driver() {
  static const driver_library driver = [] {
    driver_library loaded;
    void* handle = dlopen("libcuda.so.1", open_flags);
    if (handle == nullptr) {
      loaded.error = "no CUDA driver (" + last_dl_error() + ")";  // dlerror names libcuda.so.1
      return loaded;
    }
    driver_functions& fn = loaded.fn;
    fn.init = symbol<decltype(fn.init)>(handle, "cuInit");
    fn.device_get_count = symbol<decltype(fn.device_get_count)>(handle, "cuDeviceGetCount");
    fn.device_get = symbol<decltype(fn.device_get)>(handle, "cuDeviceGet");
    fn.primary_ctx_get_state = symbol<decltype(fn.primary_ctx_get_state)>(handle, "cuDevicePrimaryCtxGetState");
    fn.primary_ctx_retain = symbol<decltype(fn.primary_ctx_retain)>(handle, "cuDevicePrimaryCtxRetain");
    fn.primary_ctx_release = symbol<decltype(fn.primary_ctx_release)>(handle, "cuDevicePrimaryCtxRelease_v2");
    fn.ctx_get_current = symbol<decltype(fn.ctx_get_current)>(handle, "cuCtxGetCurrent");
    fn.ctx_push_current = symbol<decltype(fn.ctx_push_current)>(handle, "cuCtxPushCurrent_v2");
    fn.ctx_pop_current = symbol<decltype(fn.ctx_pop_current)>(handle, "cuCtxPopCurrent_v2");
    fn.ctx_synchronize = symbol<decltype(fn.ctx_synchronize)>(handle, "cuCtxSynchronize");
    fn.get_error_name = symbol<decltype(fn.get_error_name)>(handle, "cuGetErrorName");
    fn.ctx_get_device = symbol<decltype(fn.ctx_get_device)>(handle, "cuCtxGetDevice");
    fn.device_get_attribute = symbol<decltype(fn.device_get_attribute)>(handle, "cuDeviceGetAttribute");
    fn.mem_alloc = symbol<decltype(fn.mem_alloc)>(handle, "cuMemAlloc_v2");
    fn.mem_free = symbol<decltype(fn.mem_free)>(handle, "cuMemFree_v2");
    fn.memset_d8_async = symbol<decltype(fn.memset_d8_async)>(handle, "cuMemsetD8Async");
    if (fn.init == nullptr || fn.device_get_count == nullptr || fn.ctx_get_current == nullptr ||
        fn.ctx_synchronize == nullptr) {
      loaded.error = "no usable CUDA driver (libcuda.so.1 lacks cuInit, cuDeviceGetCount, cuCtxGetCurrent or "
                     "cuCtxSynchronize)";
    }
    return loaded;
  }();
  return driver;
}

std::string driver_result_name(const driver_library& driver, CUresult result) {
  const char* name = nullptr;
  std::string text;
  if (driver.fn.get_error_name != nullptr && driver.fn.get_error_name(result, &name) == CUDA_SUCCESS &&
      name != nullptr) {
    text = name;
  } else {
    text = "CUresult";
  }
  return text + " (" + std::to_string(static_cast<int>(result)) + ")";
}

}  // namespace regionprof::collect
