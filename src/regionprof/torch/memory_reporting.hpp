// Memory events from c10's memory reporting (docs/design.md, rule 21): torch's allocators (the CPU
// allocator, CUDA's caching allocator) report each allocation, free and failed allocation to the
// c10::MemoryReportingInfoBase that is the calling thread's PROFILER_STATE (c10::ThreadLocalDebugInfo,
// which torch carries to the threads that run a thread's work: autograd's device threads, at::launch).
// One definition for both users: the LibTorch adapter (instrument_options::memory, recording through
// regionprof::record_memory_event) and the Python package's memory=True, whose extension
// (op_ranges_extension.cpp, beside this file in the wheel) is compiled against the user's torch and is
// handed record_memory_event's address. Includes no regionprof header: that extension compiles it alone.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <thread>

namespace regionprof::torch::memory_reporting {

/// regionprof::record_memory_event with plain types: bytes (+ allocated, - freed, or asked for), the
/// device's total allocated after the event, the device (`cpu`, or a CUDA ordinal) and the kind
/// (allocation, freed, out_of_memory: trace.hpp's memory_event_kind, in its order). Must not throw.
using record_function = int (*)(std::int64_t bytes, std::int64_t total_allocated, std::int16_t device,
                                std::uint8_t kind);
inline constexpr std::int16_t cpu = -1;  ///< regionprof::cpu_memory
inline constexpr std::uint8_t allocation = 0;
inline constexpr std::uint8_t freed = 1;
inline constexpr std::uint8_t out_of_memory = 2;

/// The reporter: every report of the allocators becomes one record call on the reporting thread. A
/// torch profiler state, not a bare MemoryReportingInfoBase, because torch takes whatever PROFILER_STATE
/// holds for its profiler's state (ProfilerStateBase::get casts it; profilerEnabled() reads its config):
/// this one is a state that says its profiler is disabled (ProfilerState::Disabled, type NONE), so
/// torch.profiler's checks read it as no profiler, and profiles memory until disable().
class reporter final : public ::torch::profiler::impl::ProfilerStateBase {
 public:
  explicit reporter(record_function record)
      : ProfilerStateBase(::torch::profiler::impl::ProfilerConfig(::torch::profiler::impl::ProfilerState::Disabled)),
        record_(record) {}

  /// `alloc_size` > 0 an allocation, < 0 a free; `total_allocated` is the allocator's own running total
  /// (the CPU allocator's counts the blocks it saw allocated while memory was profiled).
  void reportMemoryUsage(void*, std::int64_t alloc_size, std::size_t total_allocated, std::size_t,
                         c10::Device device) override {
    const std::int16_t ordinal = device_of(device);
    if (alloc_size == 0 || ordinal < cpu) return;
    record_(alloc_size, static_cast<std::int64_t>(total_allocated), ordinal, alloc_size > 0 ? allocation : freed);
  }

  void reportOutOfMemory(std::int64_t alloc_size, std::size_t total_allocated, std::size_t,
                         c10::Device device) override {
    const std::int16_t ordinal = device_of(device);
    if (ordinal < cpu) return;
    record_(alloc_size, static_cast<std::int64_t>(total_allocated), ordinal, out_of_memory);
  }

  bool memoryProfilingEnabled() const override { return enabled_.load(std::memory_order_relaxed); }

  ::torch::profiler::impl::ActiveProfilerType profilerType() override {
    return ::torch::profiler::impl::ActiveProfilerType::NONE;
  }

  /// From now on the allocators report nothing here (they ask memoryProfilingEnabled() first).
  void disable() noexcept { enabled_.store(false, std::memory_order_relaxed); }

 private:
  /// cpu, a CUDA ordinal, or -2 for what is not recorded: other device types, a CUDA device without
  /// an index (torch's allocators always give one).
  static std::int16_t device_of(c10::Device device) noexcept {
    if (device.is_cpu()) return cpu;
    if (device.is_cuda() && device.index() >= 0) return static_cast<std::int16_t>(device.index());
    return -2;
  }

  record_function record_;
  std::atomic<bool> enabled_{true};
};

/// A reporter installed as the calling thread's PROFILER_STATE from construction until remove() (or
/// destruction). Pushed and popped as torch's own profiler pushes its state (ThreadLocalDebugInfo's
/// _push/_pop), so it can be removed in a later call than the one that installed it.
class installation {
 public:
  /// Installs a reporter recording through `record` on the calling thread. Throws std::logic_error
  /// when the thread already has a profiler state (torch.profiler or its NVTX mode is running, or
  /// another installation is alive): torch keeps one per thread.
  explicit installation(record_function record) : owner_(std::this_thread::get_id()) {
    if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != nullptr) {
      throw std::logic_error(
          "this thread already has a torch profiler state (torch.profiler or its NVTX mode is running, or "
          "memory is already being recorded here): torch reports memory to one profiler state per thread");
    }
    reporter_ = std::make_shared<reporter>(record);
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, reporter_);
  }
  installation(const installation&) = delete;
  installation& operator=(const installation&) = delete;
  ~installation() { remove(); }

  /// Stops the reports. On the installing thread, with the reporter still its nearest PROFILER_STATE on
  /// top of its debug info, pops it (the thread's state is as before); otherwise (another thread, or
  /// something pushed since and still there) the disabled reporter stays where it is, reporting
  /// nothing, until that thread's debug info moves past it. Idempotent; never throws.
  void remove() noexcept {
    if (!reporter_) return;
    reporter_->disable();
    if (std::this_thread::get_id() == owner_) {
      try {
        if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) == reporter_.get()) {
          c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
        }
      } catch (...) {
        // Another kind of debug info was pushed above it: it stays, disabled.
      }
    }
    reporter_.reset();
  }

 private:
  std::thread::id owner_;
  std::shared_ptr<reporter> reporter_;
};

}  // namespace regionprof::torch::memory_reporting
