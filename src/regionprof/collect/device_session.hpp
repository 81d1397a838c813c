// The device half of a profiling session: the narrow boundary between the harness and CUPTI.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "regionprof/trace/trace.hpp"

namespace regionprof {

/// Settings of device tracing.
struct device_options {
  std::size_t buffer_bytes = 4u << 20;         ///< size of one activity buffer (CUPTI wants 8-byte aligned)
  std::size_t max_buffer_bytes = 256u << 20;   ///< cap on all buffers together; past it records are dropped
  bool synchronization_records = false;       ///< also record CUPTI SYNCHRONIZATION activities
  /// After stop(), detach CUPTI from the process (cuptiFinalize) when regionprof was its only
  /// subscriber, so the program does not stay slower; the next session attaches again (docs/gpu.md).
  bool detach_after_stop = true;
};

/// Collects device activity for one profiling session. The harness drives it in this order:
/// start() once before the first (internal warm-up) run, synchronize() around every measured run, stop()
/// once at the end. Implementations never throw from synchronize(); anomalies become trace warnings.
///
/// ```
/// auto device = regionprof::make_device_session();
/// if (!device->available()) std::puts(device->unavailable_reason().c_str());
/// device->start(); run(); device->synchronize(); device->stop(trace);
/// ```
class device_session {
 public:
  virtual ~device_session() = default;

  /// True when device activity can be recorded (driver, device and CUPTI present).
  virtual bool available() const = 0;
  /// Why not, naming what is missing (no driver, no device, no CUPTI, another subscriber); empty if available.
  virtual std::string unavailable_reason() const = 0;
  /// Allocates the buffer pool and enables collection. Throws std::runtime_error (with how to fix it)
  /// only for setup errors of an available device.
  virtual void start() = 0;
  /// Waits until the device has finished all work launched so far; no-op without a device.
  virtual void synchronize() = 0;
  /// Cold runs: overwrites the device's L2 cache (a memset over an L2-sized buffer on the calling
  /// thread's current CUDA context), before a measured run and outside its timing; the caller's
  /// synchronize() then waits for it. No-op without a driver or a current context. Never throws.
  virtual void flush_device_cache() noexcept {}
  /// Flushes and disables collection; appends device ops, API calls (as CPU intervals with correlation
  /// ids, on threads added to `out`), warnings, and sets out.device_tracing. Timestamps are ns on
  /// monotonic_now_ns()'s timeline. Without a device: adds DEVICE_TRACING_UNAVAILABLE saying why.
  virtual void stop(trace& out) = 0;
  /// Windows of a session (docs/design.md, "Long runs: windows"): while collecting, takes the buffers
  /// CUPTI has completed (an unforced flush) and appends to `out`, the window's trace, the API calls that
  /// started before `cut_ns` (monotonic_now_ns()'s timeline) and the device ops they launched; records of
  /// later launches are kept for the next window (or stop()), and records whose window was already
  /// written are counted in that window's `LATE_DEVICE_RECORDS`. `at_exit` (the windows cut just before
  /// stop(), and those of timed runs, which waited for the device): waits for the device and forces the
  /// flush, so those windows lose nothing to CUPTI's unfilled buffers. Sets out.device_tracing. Without a
  /// device: DEVICE_TRACING_UNAVAILABLE saying why, in every window. Default: nothing. Never throws.
  ///
  /// ```
  /// device->start();  ...  device->cut_window(window0, end_of_its_last_run_ns, false);  ...  device->stop(last);
  /// ```
  virtual void cut_window(trace& /*out*/, std::int64_t /*cut_ns*/, bool /*at_exit*/) noexcept {}
};

/// A CUPTI-backed session when the driver and CUPTI load, else one that reports why not and records
/// nothing. Never links libcuda: everything is loaded with dlopen.
std::unique_ptr<device_session> make_device_session(const device_options& options = {});

}  // namespace regionprof
