// make_nvml_monitor: libnvidia-ml.so.1 loaded with dlopen (never linked, no NVML header), the GPUs' names,
// clocks, clock event (throttle) reasons, maximum memory clock and memory bus width. NVML's ABI as used
// here: int results (0 = NVML_SUCCESS), opaque device handles, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2.
#include <dlfcn.h>

#include <cstring>

#include "regionprof/machine/machine.hpp"

namespace regionprof {
namespace {

using nvml_device = void*;
using nvml_result = int;
constexpr nvml_result nvml_success = 0;
constexpr int nvml_clock_sm = 1;
constexpr int nvml_clock_mem = 2;

template <typename F>
F symbol(void* handle, const char* name) {
  void* address = dlsym(handle, name);
  F fn = nullptr;
  static_assert(sizeof fn == sizeof address);
  std::memcpy(&fn, &address, sizeof fn);
  return fn;
}

struct nvml_functions {
  nvml_result (*init)() = nullptr;                                          // nvmlInit_v2
  nvml_result (*device_count)(unsigned*) = nullptr;                         // nvmlDeviceGetCount_v2
  nvml_result (*handle_by_index)(unsigned, nvml_device*) = nullptr;         // nvmlDeviceGetHandleByIndex_v2
  nvml_result (*name)(nvml_device, char*, unsigned) = nullptr;              // nvmlDeviceGetName
  nvml_result (*clock_info)(nvml_device, int, unsigned*) = nullptr;         // nvmlDeviceGetClockInfo
  nvml_result (*max_clock_info)(nvml_device, int, unsigned*) = nullptr;     // nvmlDeviceGetMaxClockInfo
  nvml_result (*bus_width)(nvml_device, unsigned*) = nullptr;               // nvmlDeviceGetMemoryBusWidth
  nvml_result (*reasons)(nvml_device, unsigned long long*) = nullptr;       // ...ClocksEventReasons or ThrottleReasons
};

/// NVML, loaded and initialised once per process on first use and kept for the process's life (no
/// shutdown race with other users of NVML in the process; nvmlInit is not repeated per profile).
struct nvml_library {
  nvml_functions fn;
  bool ready = false;
};

const nvml_library& process_nvml() {
  static const nvml_library library = [] {
    nvml_library loaded;
    void* handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return loaded;
    nvml_functions& fn = loaded.fn;
    fn.init = symbol<decltype(fn.init)>(handle, "nvmlInit_v2");
    fn.device_count = symbol<decltype(fn.device_count)>(handle, "nvmlDeviceGetCount_v2");
    fn.handle_by_index = symbol<decltype(fn.handle_by_index)>(handle, "nvmlDeviceGetHandleByIndex_v2");
    fn.name = symbol<decltype(fn.name)>(handle, "nvmlDeviceGetName");
    fn.clock_info = symbol<decltype(fn.clock_info)>(handle, "nvmlDeviceGetClockInfo");
    fn.max_clock_info = symbol<decltype(fn.max_clock_info)>(handle, "nvmlDeviceGetMaxClockInfo");
    fn.bus_width = symbol<decltype(fn.bus_width)>(handle, "nvmlDeviceGetMemoryBusWidth");  // optional: older drivers lack it
    fn.reasons = symbol<decltype(fn.reasons)>(handle, "nvmlDeviceGetCurrentClocksEventReasons");
    if (fn.reasons == nullptr) fn.reasons = symbol<decltype(fn.reasons)>(handle, "nvmlDeviceGetCurrentClocksThrottleReasons");
    loaded.ready = fn.init != nullptr && fn.device_count != nullptr && fn.handle_by_index != nullptr &&
                   fn.name != nullptr && fn.clock_info != nullptr && fn.init() == nvml_success;
    return loaded;
  }();
  return library;
}

class nvml_monitor final : public gpu_monitor {
 public:
  nvml_monitor() : fn_(process_nvml().fn), ready_(process_nvml().ready) {}

  std::vector<gpu_environment> devices() override {
    std::vector<gpu_environment> out;
    unsigned count = 0;
    if (!ready_ || fn_.device_count(&count) != nvml_success) return out;
    for (unsigned i = 0; i < count; ++i) {
      nvml_device device = nullptr;
      if (fn_.handle_by_index(i, &device) != nvml_success) continue;
      char name[256] = {};
      gpu_environment gpu;
      gpu.index = i;
      if (fn_.name(device, name, sizeof name) == nvml_success) gpu.name = name;
      out.push_back(std::move(gpu));
    }
    return out;
  }

  std::optional<gpu_clock_state> clocks(std::uint32_t index) override {
    nvml_device device = nullptr;
    if (!ready_ || fn_.handle_by_index(index, &device) != nvml_success) return std::nullopt;
    gpu_clock_state state;
    unsigned mhz = 0;
    if (fn_.clock_info(device, nvml_clock_sm, &mhz) != nvml_success) return std::nullopt;
    state.sm_clock_mhz = mhz;
    if (fn_.clock_info(device, nvml_clock_mem, &mhz) == nvml_success) state.memory_clock_mhz = mhz;
    unsigned long long reasons = 0;
    if (fn_.reasons != nullptr && fn_.reasons(device, &reasons) == nvml_success) {
      state.throttle_reasons = gpu_throttle_reason_names(reasons);
    }
    return state;
  }

  std::optional<gpu_memory_interface> memory_interface(std::uint32_t index) override {
    nvml_device device = nullptr;
    if (!ready_ || fn_.max_clock_info == nullptr || fn_.bus_width == nullptr ||
        fn_.handle_by_index(index, &device) != nvml_success) {
      return std::nullopt;
    }
    gpu_memory_interface memory;
    unsigned mhz = 0;
    unsigned bits = 0;
    if (fn_.max_clock_info(device, nvml_clock_mem, &mhz) != nvml_success ||
        fn_.bus_width(device, &bits) != nvml_success) {
      return std::nullopt;
    }
    memory.max_memory_clock_mhz = mhz;
    memory.bus_width_bits = bits;
    return memory;
  }

 private:
  const nvml_functions& fn_;
  bool ready_;
};

}  // namespace

std::unique_ptr<gpu_monitor> make_nvml_monitor() { return std::make_unique<nvml_monitor>(); }

}  // namespace regionprof
