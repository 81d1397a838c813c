// Test doubles for the CUPTI boundary: buffers of real CUPTI record structs, and a backend that serves
// them through the pool's CUPTI callbacks exactly as CUPTI does. Walking and API names stay CUPTI's own
// (activity_backend's non-virtual members over the real libcupti, which loads without a driver).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/collect/activity_backend.hpp"
#include "regionprof/collect/buffer_pool.hpp"
#include "regionprof/collect/cupti_records.hpp"
#include "regionprof/collect/device_session.hpp"
#include "regionprof/trace/clock.hpp"

namespace regionprof {
// Boost.Test prints these when an assertion on them fails.
inline std::ostream& boost_test_print_type(std::ostream& out, warning_code code) { return out << to_string(code); }
inline std::ostream& boost_test_print_type(std::ostream& out, interval_kind kind) {
  return out << "interval_kind(" << static_cast<int>(kind) << ")";
}
inline std::ostream& boost_test_print_type(std::ostream& out, device_op_kind kind) {
  return out << "device_op_kind(" << static_cast<int>(kind) << ")";
}
inline std::ostream& boost_test_print_type(std::ostream& out, warning_source source) { return out << to_string(source); }
namespace collect {
inline std::ostream& boost_test_print_type(std::ostream& out, backend_failure failure) {
  return out << "backend_failure(" << static_cast<int>(failure) << ")";
}
}  // namespace collect
}  // namespace regionprof

namespace regionprof::test {

/// A pool of 64 KiB buffers capped at 256 KiB (4 buffers): small enough for tests to exhaust.
inline device_options small_pool() {
  device_options options;
  options.buffer_bytes = 64 << 10;
  options.max_buffer_bytes = 256 << 10;
  return options;
}

/// Records laid end to end as CUPTI lays them (each struct is 8-byte aligned and a multiple of 8 long).
class record_buffer {
 public:
  template <class Record>
  record_buffer& add(const Record& record) {
    const std::size_t offset = bytes_.size();
    bytes_.resize(offset + sizeof(Record));
    std::memcpy(bytes_.data() + offset, &record, sizeof(Record));
    ++records_;
    return *this;
  }
  /// Only the first `valid` bytes count (a buffer ending mid-record).
  record_buffer& valid_bytes(std::size_t valid) {
    valid_ = valid;
    return *this;
  }
  const std::vector<std::uint8_t>& bytes() const noexcept { return bytes_; }
  std::size_t valid() const noexcept { return valid_ ? *valid_ : bytes_.size(); }
  std::size_t records() const noexcept { return records_; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::optional<std::size_t> valid_;
  std::size_t records_ = 0;
};

/// A zero-initialised record of `kind` with the fields every timed record has.
template <class Record>
Record timed_record(CUpti_ActivityKind kind, std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
  Record record{};
  record.kind = kind;
  record.correlationId = correlation;
  record.start = start;
  record.end = end;
  return record;
}

/// Records of each kind, filled with what the tests use.
inline collect::kernel_record kernel(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                     const char* name, std::uint32_t stream = 7, std::uint32_t device = 0) {
  auto record = timed_record<collect::kernel_record>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, correlation, start, end);
  record.name = name;
  record.streamId = stream;
  record.deviceId = device;
  return record;
}

inline collect::memcpy_record memcpy_op(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                        std::uint64_t bytes, std::uint32_t stream = 7) {
  auto record = timed_record<collect::memcpy_record>(CUPTI_ACTIVITY_KIND_MEMCPY, correlation, start, end);
  record.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  record.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  record.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  record.bytes = bytes;
  record.streamId = stream;
  return record;
}

inline collect::memset_record memset_op(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                        std::uint64_t bytes, std::uint32_t stream = 7) {
  auto record = timed_record<collect::memset_record>(CUPTI_ACTIVITY_KIND_MEMSET, correlation, start, end);
  record.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  record.bytes = bytes;
  record.streamId = stream;
  return record;
}

/// A MEMORY2 record: an allocation (or with `release` a free) of `bytes` of `memory_kind` on `device`.
inline collect::memory_record memory_op(std::uint32_t correlation, std::uint64_t timestamp, std::uint64_t bytes,
                                        bool release = false, std::uint32_t device = 0,
                                        CUpti_ActivityMemoryKind memory_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) {
  collect::memory_record record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  record.memoryOperationType =
      release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  record.memoryKind = memory_kind;
  record.correlationId = correlation;
  record.bytes = bytes;
  record.timestamp = timestamp;
  record.deviceId = device;
  return record;
}

/// A MEMORY_POOL record: a pool created, trimmed or destroyed at `timestamp` by the call `correlation`.
inline collect::memory_pool_record memory_pool_op(std::uint32_t correlation, std::uint64_t timestamp,
                                                  CUpti_ActivityMemoryPoolOperationType operation) {
  collect::memory_pool_record record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
  record.memoryPoolOperationType = operation;
  record.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
  record.correlationId = correlation;
  record.size = 1 << 20;
  record.timestamp = timestamp;
  return record;
}

inline collect::api_record api_call(CUpti_ActivityKind kind, std::uint32_t cbid, std::uint32_t correlation,
                                    std::uint64_t start, std::uint64_t end, std::uint32_t pid, std::uint32_t tid) {
  auto record = timed_record<collect::api_record>(kind, correlation, start, end);
  record.cbid = cbid;
  record.processId = pid;
  record.threadId = tid;
  return record;
}

inline collect::synchronization_record sync_op(std::uint32_t correlation, std::uint64_t start, std::uint64_t end,
                                               CUpti_ActivitySynchronizationType type) {
  auto record = timed_record<collect::synchronization_record>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, correlation, start, end);
  record.type = type;
  return record;
}

inline collect::overhead_record overhead(CUpti_ActivityOverheadKind kind, std::uint64_t start, std::uint64_t end,
                                         void* data = nullptr) {
  auto record = timed_record<collect::overhead_record>(CUPTI_ACTIVITY_KIND_OVERHEAD, 0, start, end);
  record.overheadKind = kind;
  record.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  record.overheadData = data;
  return record;
}

/// The process's real CUPTI; the tests need its walker and name lookup (no driver needed).
inline const collect::cupti_library& loaded_cupti() {
  const collect::cupti_library& library = collect::process_cupti();
  if (!library.loaded()) throw std::runtime_error("these tests need the toolkit's libcupti: " + library.error);
  return library;
}

/// Serves prepared buffers through cupti_buffer_requested/cupti_buffer_completed at flush(), counting the
/// records of a buffer the pool refuses as dropped (as CUPTI does).
class fake_backend final : public collect::activity_backend {
 public:
  explicit fake_backend(std::vector<record_buffer> buffers = {}, const collect::cupti_library& library = loaded_cupti())
      : activity_backend(library), pending_(std::move(buffers)) {}

  collect::backend_status probe_result;   ///< what probe() answers
  collect::backend_status enable_result;  ///< what enable() answers
  bool monotonic = true;                  ///< what timestamps_are_monotonic() answers
  /// CUPTI's clock. Default: unreadable, so records are taken as stamped on ours (the timestamp callback
  /// "took") and the session's window does not apply: tests lay records at small times. A test of the
  /// window sets it to monotonic_now_ns() and stamps records at real times.
  std::function<std::optional<std::uint64_t>()> clock = [] { return std::optional<std::uint64_t>(); };

  // What the session did to the backend.
  int enables = 0, disables = 0, flushes = 0, releases = 0, detaches = 0, synchronizations = 0;
  int unforced_flushes = 0;  ///< flush_completed() calls (each also counts in `flushes`)
  bool synchronization_records = false;

  /// More buffers for the next flush.
  void add(record_buffer buffer) { pending_.push_back(std::move(buffer)); }

  collect::backend_status probe() override { return probe_result; }
  collect::backend_status enable(bool synchronization) override {
    ++enables;
    synchronization_records = synchronization;
    return enable_result;
  }
  void disable() override { ++disables; }
  collect::backend_status flush() override {
    ++flushes;
    for (const record_buffer& buffer : pending_) {
      std::uint8_t* data = nullptr;
      std::size_t size = 0;
      std::size_t max_records = 0;
      collect::cupti_buffer_requested(&data, &size, &max_records);
      if (data == nullptr) {
        dropped_ += buffer.records();
        continue;
      }
      if (buffer.bytes().size() > size) throw std::logic_error("test buffer larger than a pool buffer");
      std::memcpy(data, buffer.bytes().data(), buffer.bytes().size());
      collect::cupti_buffer_completed(nullptr, 0, data, size, buffer.valid());
    }
    pending_.clear();
    return {};
  }
  collect::backend_status flush_completed() override {
    ++unforced_flushes;
    return flush();
  }
  void release() override { ++releases; }
  void detach() noexcept override { ++detaches; }
  std::uint64_t take_dropped_records() override { return std::exchange(dropped_, 0); }
  bool timestamps_are_monotonic() const override { return monotonic; }
  std::optional<std::uint64_t> timestamp() override { return clock(); }
  void synchronize_device() noexcept override { ++synchronizations; }

 private:
  std::vector<record_buffer> pending_;
  std::uint64_t dropped_ = 0;
};

}  // namespace regionprof::test
