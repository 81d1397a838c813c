// The narrow boundary between the collector and CUPTI: available / enable / flush / for-each-record.
//
// The real backend drives CUPTI; tests substitute one that hands the pool buffers they built from real
// CUPTI record structs. Both walk buffers with CUPTI's own walker (cuptiActivityGetNextRecord, which
// works without a driver) and name API calls with CUPTI's callback-name lookup: those two are not
// virtual, so the decode path under test is the production one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "regionprof/collect/cupti_library.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::collect {

/// Why device activity cannot be recorded.
enum class backend_failure : std::uint8_t {
  none = 0,
  no_cupti = 1,             ///< libcupti not found or unusable
  no_driver = 2,            ///< libcuda.so.1 absent, or CUPTI answers CUPTI_ERROR_UNKNOWN (what it does without one)
  no_device = 3,            ///< a driver but no CUDA device
  subscriber_conflict = 4,  ///< another CUPTI client (Nsight Systems, torch.profiler, ...) holds CUPTI
  cupti_error = 5,          ///< any other CUPTI failure; the message names the call
};

/// The outcome of probing or enabling; `message` says what is missing or which call failed.
struct backend_status {
  backend_failure failure = backend_failure::none;
  std::string message;
  bool ok() const noexcept { return failure == backend_failure::none; }
};

/// What one walk over a completed buffer found.
struct walk_summary {
  std::uint64_t records = 0;      ///< records handed to the visitor
  std::size_t record_bytes = 0;   ///< bytes of those records
  std::size_t unread_bytes = 0;   ///< valid bytes after the last record that could not be read (truncated)
  bool invalid_record = false;    ///< the walk stopped at a record CUPTI calls invalid (CUPTI_ERROR_INVALID_KIND)
  std::string error;              ///< any other walker failure, naming the call
};

using record_visitor = std::function<void(const activity_record&)>;

/// How the real backend checks for a device before collecting.
enum class driver_probe : std::uint8_t {
  initialize = 0,  ///< load libcuda.so.1, cuInit, count devices (the in-process harness)
  injected = 1,    ///< load libcuda.so.1 only: called from inside cuInit (CUDA_INJECTION64_PATH)
  cupti_only = 2,  ///< skip the driver checks and let CUPTI answer (tests of the CUPTI error mapping)
};

class activity_backend {
 public:
  explicit activity_backend(const cupti_library& library) : library_(library) {}
  virtual ~activity_backend() = default;
  activity_backend(const activity_backend&) = delete;
  activity_backend& operator=(const activity_backend&) = delete;

  /// Whether device activity can be recorded here.
  virtual backend_status probe() = 0;
  /// Claims CUPTI (cuptiSubscribe), sets its clock to monotonic_now_ns(), registers the pool's buffer
  /// callbacks and enables the activity kinds (SYNCHRONIZATION too when asked). On failure nothing
  /// stays enabled and CUPTI is released.
  virtual backend_status enable(bool synchronization_records) = 0;
  /// Disables the activity kinds enable() enabled (records already taken stay in CUPTI's buffers).
  virtual void disable() = 0;
  /// Forced flush: every buffer CUPTI holds comes back through cupti_buffer_completed.
  virtual backend_status flush() = 0;
  /// Windows: an unforced flush, while collection goes on: the buffers CUPTI has completed come back
  /// through cupti_buffer_completed, those it is still filling stay. Default: flush() (test backends
  /// serve what they hold either way).
  virtual backend_status flush_completed() { return flush(); }
  /// Ends the session with CUPTI after the flush: restores CUPTI's default clock (records are converted
  /// to our clock until the flush) and releases the subscription.
  virtual void release() = 0;
  /// After release(): detaches CUPTI from the process (cuptiFinalize) when no other subscriber shares
  /// it and the loaded CUPTI supports attaching again; else nothing. Never throws.
  virtual void detach() noexcept = 0;
  /// Records CUPTI dropped (no buffer space) since the last call.
  virtual std::uint64_t take_dropped_records() = 0;
  /// True when CUPTI accepted monotonic_now_ns() as its timestamp source.
  virtual bool timestamps_are_monotonic() const = 0;
  /// CUPTI's clock now (cuptiGetTimestamp), to pair with ours; nullopt when it cannot be read.
  virtual std::optional<std::uint64_t> timestamp() = 0;
  /// Waits until the device has finished the work launched so far. Never throws.
  virtual void synchronize_device() noexcept = 0;

  /// Walks a completed buffer with CUPTI's walker, calling `visit` for each record; never reads past
  /// `valid_bytes`.
  walk_summary for_each_record(const std::uint8_t* buffer, std::size_t valid_bytes,
                               const record_visitor& visit) const;
  /// The name of a runtime or driver API function from CUPTI's callback-name lookup, without CUPTI's
  /// version tag ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel"; "cuMemAlloc_v2" stays, it is the symbol).
  std::string api_name(interval_kind kind, std::uint32_t cbid) const;
  const cupti_library& library() const noexcept { return library_; }

 private:
  /// Size of the record at `record`: learned from the distance between consecutive records of its kind,
  /// else the struct size when the loaded CUPTI is the one regionprof was built for; 0 when unknown.
  std::size_t record_size(const activity_record& record) const;

  const cupti_library& library_;
  mutable std::array<std::uint32_t, 64> learned_sizes_{};  // by kind; walks run on one thread at a time
};

/// Why device tracing is off after a failed CUPTI call: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED is
/// another client (`holder` names it when CUPTI did), CUPTI_ERROR_UNKNOWN is what CUPTI answers without a
/// driver, anything else is reported as the call that failed.
backend_status describe_cupti_failure(const cupti_status& status, const std::string& holder);

/// How a backend holds CUPTI.
struct cupti_subscription {
  CUpti_SubscriberHandle handle = nullptr;
  std::string other;  ///< the subscriber CUPTI is shared with (allowMultipleSubscribers granted); empty: none
  bool shared() const noexcept { return !other.empty(); }
};

/// Subscribes `callback` (with `userdata`): cuptiSubscribe_v2 asking to share CUPTI with other
/// subscribers (CUPTI 13.2+ with a driver that allows it), then cuptiSubscribe_v2 without the request (a
/// CUPTI that refuses the larger structSize), then cuptiSubscribe (no cuptiSubscribe_v2). A refusal is
/// described by describe_cupti_failure, naming the holder when CUPTI did. Never throws.
backend_status subscribe_to_cupti(const cupti_library& cupti, CUpti_CallbackFunc callback, void* userdata,
                                  cupti_subscription& out);

/// The backend that drives the process's CUPTI.
std::unique_ptr<activity_backend> make_cupti_backend(driver_probe probe);

}  // namespace regionprof::collect
