// The backend that drives the process's CUPTI (see activity_backend.hpp).
#include <ctime>
#include <vector>

#include "regionprof/collect/activity_backend.hpp"
#include "regionprof/collect/buffer_pool.hpp"
#include "regionprof/collect/graph_capture.hpp"
#include "regionprof/trace/clock.hpp"

namespace regionprof::collect {
namespace {

std::uint64_t CUPTIAPI monotonic_timestamp() { return static_cast<std::uint64_t>(monotonic_now_ns()); }

/// CUPTI's own default on Linux (CUPTI docs: clock_gettime(CLOCK_REALTIME)); put back when a session ends
/// so a later CUPTI client in the process (torch.profiler) sees the clock it expects.
std::uint64_t CUPTIAPI realtime_timestamp() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(now.tv_nsec);
}


/// The driver is probed first; without one CUPTI is not even loaded (a CPU-only machine maps no libcupti).
const cupti_library& cupti_after_driver(driver_probe probe) {
  static const cupti_library not_loaded = [] {
    cupti_library library;
    library.error = "CUPTI not loaded: no CUDA driver";
    return library;
  }();
  if (probe != driver_probe::cupti_only && !process_driver().loaded()) return not_loaded;
  return process_cupti();
}

class cupti_backend final : public activity_backend {
 public:
  explicit cupti_backend(driver_probe probe) : activity_backend(cupti_after_driver(probe)), probe_(probe) {}

  backend_status probe() override {
    if (probe_ != driver_probe::cupti_only) {
      const driver_library& driver = process_driver();
      if (!driver.loaded()) return {backend_failure::no_driver, driver.error};
    }
    if (!library().loaded()) return {backend_failure::no_cupti, library().error};
    if (probe_ == driver_probe::initialize) {
      const driver_library& driver = process_driver();
      const CUresult init = driver.fn.init(0);
      if (init == CUDA_ERROR_NO_DEVICE) {
        return {backend_failure::no_device, "no CUDA device (cuInit: " + driver_result_name(driver, init) + ")"};
      }
      if (init != CUDA_SUCCESS) {
        return {backend_failure::no_driver,
                "the CUDA driver does not initialise (cuInit: " + driver_result_name(driver, init) + ")"};
      }
      int count = 0;
      const CUresult counted = driver.fn.device_get_count(&count);
      if (counted != CUDA_SUCCESS || count <= 0) {
        return {backend_failure::no_device,
                "no CUDA device (cuDeviceGetCount: " +
                    (counted != CUDA_SUCCESS ? driver_result_name(driver, counted) : std::string("0 devices")) + ")"};
      }
    }
    return {};
  }

  backend_status enable(bool synchronization_records) override {
    const cupti_library& cupti = library();
    // 1. Claim CUPTI (sharing it where the driver allows several subscribers), or learn who holds it.
    //    The callback notes CUDA graph nodes as they are made (graph_capture.hpp).
    backend_status claimed = subscribe_to_cupti(cupti, &graph_resource_callback, const_cast<cupti_library*>(&cupti),
                                                subscription_);
    if (!claimed.ok()) return claimed;
    cupti_status status;
    for (const CUpti_CallbackId cbid : {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED}) {
      // Without them (an old CUPTI) replays are attributed by launch and counted by the analysis.
      (void)REGIONPROF_CUPTI(cupti, cuptiEnableCallback, 1u, subscription_.handle, CUPTI_CB_DOMAIN_RESOURCE, cbid);
    }

    // 2. API records carry gettid() thread ids, as the NVTX capture does, so calls land on their threads.
    status = REGIONPROF_CUPTI(cupti, cuptiSetThreadIdType, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (!status.ok()) return undo(describe_cupti_failure(status, {}));

    // 3. One clock: CUPTI stamps records with monotonic_now_ns(). Must precede enabling any kind. When
    //    refused, or when CUPTI is shared (the clock is the process's: the other client keeps its own),
    //    the session maps CUPTI's clock onto ours by paired samples.
    if (!subscription_.shared()) {
      clock_registered_ = REGIONPROF_CUPTI(cupti, cuptiActivityRegisterTimestampCallback, &monotonic_timestamp).ok();
    }
    monotonic_ = clock_registered_;

    // 4. Buffers come from the pool.
    status = REGIONPROF_CUPTI(cupti, cuptiActivityRegisterCallbacks, &cupti_buffer_requested, &cupti_buffer_completed);
    if (!status.ok()) return undo(describe_cupti_failure(status, {}));

    // 5. The kinds of docs/gpu.md. Never GRAPH_TRACE: with kernel tracing it would replace the kernels of a
    //    graph by one graph record; the kernels keep the graph launch's correlation id instead.
    std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                             CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
                                             CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_OVERHEAD};
    if (synchronization_records) kinds.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    for (const CUpti_ActivityKind kind : kinds) {
      status = REGIONPROF_CUPTI(cupti, cuptiActivityEnable, kind);
      if (!status.ok()) return undo(describe_cupti_failure(status, {}));
      enabled_.push_back(kind);
    }
    // Allocations and frees, and memory pools' creation, trimming and destruction (docs/design.md,
    // rule 21): optional, so a CUPTI that refuses them still traces the rest.
    for (const CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_MEMORY2, CUPTI_ACTIVITY_KIND_MEMORY_POOL}) {
      if (REGIONPROF_CUPTI(cupti, cuptiActivityEnable, kind).ok()) enabled_.push_back(kind);
    }

    // 6. Like Kineto, skip the calls frameworks make by the thousand that launch nothing (optional entry
    //    points: CUPTI 12.5+). Their time stays inside the enclosing ranges.
    (void)REGIONPROF_CUPTI(cupti, cuptiActivityEnableRuntimeApi, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0);
    for (const CUpti_CallbackId cbid :
         {CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
          CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState}) {
      (void)REGIONPROF_CUPTI(cupti, cuptiActivityEnableDriverApi, cbid, 0);
    }
    return {};
  }

  backend_status flush() override {
    const cupti_status status =
        REGIONPROF_CUPTI(library(), cuptiActivityFlushAll, static_cast<std::uint32_t>(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    if (status.ok()) return {};
    return {backend_failure::cupti_error, status.message};
  }

  backend_status flush_completed() override {
    const cupti_status status = REGIONPROF_CUPTI(library(), cuptiActivityFlushAll, 0u);
    if (status.ok()) return {};
    return {backend_failure::cupti_error, status.message};
  }

  void disable() override {
    for (auto kind = enabled_.rbegin(); kind != enabled_.rend(); ++kind) {
      (void)REGIONPROF_CUPTI(library(), cuptiActivityDisable, *kind);
    }
    enabled_.clear();
  }

  void release() override { (void)undo({}); }

  void detach() noexcept override {
    // cuptiFinalize is safe here: every kind is disabled, the forced flush returned every buffer,
    // regionprof's subscription is gone and no other subscriber shares CUPTI. CUPTI 12+ attaches again
    // on the next subscription. A copy of CUPTI another client loaded (torch.profiler's) is left alone:
    // that client may still hold state in it.
    if (was_shared_ || library().major < 12) return;
    (void)REGIONPROF_CUPTI(library(), cuptiFinalize);
  }

  std::uint64_t take_dropped_records() override {
    // Since CUDA 6 all buffers are global: the NULL context's queue holds every drop.
    std::size_t dropped = 0;
    if (!REGIONPROF_CUPTI(library(), cuptiActivityGetNumDroppedRecords, nullptr, 0u, &dropped).ok()) return 0;
    return dropped;
  }

  bool timestamps_are_monotonic() const override { return monotonic_; }

  std::optional<std::uint64_t> timestamp() override {
    std::uint64_t now = 0;
    if (!REGIONPROF_CUPTI(library(), cuptiGetTimestamp, &now).ok()) return std::nullopt;
    return now;
  }

  void synchronize_device() noexcept override {
    if (probe_ == driver_probe::cupti_only) return;
    const driver_library& driver = process_driver();
    if (!driver.loaded()) return;
    // The calling thread's context first (the runtime's primary context when the caller launched work).
    CUcontext current = nullptr;
    if (driver.fn.ctx_get_current(&current) == CUDA_SUCCESS && current != nullptr) {
      (void)driver.fn.ctx_synchronize();
    }
    // Then every other device's active primary context, for work launched from other threads.
    int count = 0;
    if (driver.fn.device_get_count == nullptr || driver.fn.device_get_count(&count) != CUDA_SUCCESS) return;
    if (driver.fn.device_get == nullptr || driver.fn.primary_ctx_get_state == nullptr ||
        driver.fn.primary_ctx_retain == nullptr || driver.fn.primary_ctx_release == nullptr ||
        driver.fn.ctx_push_current == nullptr || driver.fn.ctx_pop_current == nullptr) {
      return;
    }
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      CUdevice device = 0;
      unsigned int flags = 0;
      int active = 0;
      if (driver.fn.device_get(&device, ordinal) != CUDA_SUCCESS ||
          driver.fn.primary_ctx_get_state(device, &flags, &active) != CUDA_SUCCESS || active == 0) {
        continue;
      }
      CUcontext primary = nullptr;
      if (driver.fn.primary_ctx_retain(&primary, device) != CUDA_SUCCESS) continue;
      if (primary != current && driver.fn.ctx_push_current(primary) == CUDA_SUCCESS) {
        (void)driver.fn.ctx_synchronize();
        CUcontext popped = nullptr;
        (void)driver.fn.ctx_pop_current(&popped);
      }
      (void)driver.fn.primary_ctx_release(device);
    }
  }

 private:
  /// Disables what was enabled, restores CUPTI's default clock, releases CUPTI; returns `result`.
  backend_status undo(backend_status result) {
    const cupti_library& cupti = library();
    for (auto kind = enabled_.rbegin(); kind != enabled_.rend(); ++kind) {
      (void)REGIONPROF_CUPTI(cupti, cuptiActivityDisable, *kind);
    }
    enabled_.clear();
    if (clock_registered_) {
      (void)REGIONPROF_CUPTI(cupti, cuptiActivityRegisterTimestampCallback, &realtime_timestamp);
      clock_registered_ = false;
    }
    if (subscription_.handle != nullptr) {
      (void)REGIONPROF_CUPTI(cupti, cuptiUnsubscribe, subscription_.handle);
      was_shared_ = subscription_.shared();
      subscription_ = {};
    }
    return result;
  }

  driver_probe probe_;
  cupti_subscription subscription_;
  bool was_shared_ = false;  // the last subscription shared CUPTI with another client
  std::vector<CUpti_ActivityKind> enabled_;
  bool clock_registered_ = false;  // our timestamp callback is CUPTI's clock now
  bool monotonic_ = false;         // this session's records are on monotonic_now_ns() (kept after disable)
};

}  // namespace

backend_status subscribe_to_cupti(const cupti_library& cupti, CUpti_CallbackFunc callback, void* userdata,
                                  cupti_subscription& out) {
  out = {};
  char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = {};
  cupti_status status;
  bool asked_to_share = false;
  if (cupti.fn.cuptiSubscribe_v2 != nullptr) {
    // First with allowMultipleSubscribers (CUPTI 13.2's layout), then with the 13.0 fields alone.
    subscriber_params_13_2 params{};
    params.base.subscriberName = "regionprof";
    params.base.oldSubscriberName = holder;
    params.base.oldSubscriberSize = sizeof holder;
    params.allowMultipleSubscribers = 1;
    params.base.structSize = subscriber_params_13_2_size;
    status = REGIONPROF_CUPTI(cupti, cuptiSubscribe_v2, &out.handle, callback, userdata, &params.base);
    asked_to_share = true;
    if (status.result == CUPTI_ERROR_INVALID_PARAMETER) {
      asked_to_share = false;
      params.base.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
      status = REGIONPROF_CUPTI(cupti, cuptiSubscribe_v2, &out.handle, callback, userdata, &params.base);
    }
  }
  if (cupti.fn.cuptiSubscribe_v2 == nullptr || status.result == CUPTI_ERROR_INVALID_PARAMETER) {
    // No cuptiSubscribe_v2, or one that does not know CUpti_SubscriberParams at all: the plain call.
    asked_to_share = false;
    status = REGIONPROF_CUPTI(cupti, cuptiSubscribe, &out.handle, callback, userdata);
  }
  holder[sizeof holder - 1] = '\0';
  if (!status.ok()) {
    out = {};
    return describe_cupti_failure(status, holder);
  }
  // Granted sharing: CUPTI names the first subscriber, which is another client unless it is us.
  const std::string first(holder);
  if (asked_to_share && !first.empty() && first.find("regionprof") == std::string::npos) out.other = first;
  return {};
}

backend_status describe_cupti_failure(const cupti_status& status, const std::string& holder) {
  switch (status.result) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return {backend_failure::subscriber_conflict,
              "CUPTI is already in use by " +
                  (holder.empty() ? std::string("another tool (Nsight Systems, Nsight Compute, torch.profiler/Kineto "
                                                "or a CUDA debugger)")
                                  : holder) +
                  " (" + status.message +
                  "); profile without the other tool, or where the driver lets CUPTI serve several subscribers "
                  "(CUDA 13.3), to get device time"};
    case CUPTI_ERROR_UNKNOWN:
      // What CUPTI answers when no driver is loaded (checked on a driverless machine).
      return {backend_failure::no_driver, "no CUDA driver (" + status.message + ")"};
    default:
      return {backend_failure::cupti_error, status.message};
  }
}

std::unique_ptr<activity_backend> make_cupti_backend(driver_probe probe) {
  return std::make_unique<cupti_backend>(probe);
}

}  // namespace regionprof::collect
