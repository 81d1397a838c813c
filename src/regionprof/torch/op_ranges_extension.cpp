// The Python package's op ranges (regionprof.torch's ops=True) and memory events (memory=True):
// compiled at first use against the user's own torch (python/regionprof/_torch_ops.py, _load) and
// loaded with ctypes, so the package itself links no torch. It records through the capture's entry
// points, which Python hands it as addresses (regionprof._native.op_range_functions(),
// memory_event_function()). C entry points only; nothing throws out.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>

#include "memory_reporting.hpp"
#include "op_ranges.hpp"

namespace {

int (*capture_push)(const char*) = nullptr;  // set before the callback is added, never changed after
int (*capture_pop)() = nullptr;

int push(const char* name) { return capture_push(name); }
int pop() { return capture_pop(); }

}  // namespace

/// Adds the op-range callback; returns its handle, or 0 when torch refused it (or was handed nulls).
extern "C" __attribute__((visibility("default"))) std::uint64_t regionprof_op_ranges_add(
    int (*push_range)(const char*), int (*pop_range)()) noexcept {
  if (push_range == nullptr || pop_range == nullptr) return 0;
  if (capture_push != nullptr && (capture_push != push_range || capture_pop != pop_range)) return 0;
  capture_push = push_range;
  capture_pop = pop_range;
  try {
    return at::addGlobalCallback(regionprof::torch::op_ranges::callback<&push, &pop>());
  } catch (const std::exception&) {
    return 0;
  }
}

/// Removes a callback regionprof_op_ranges_add returned.
extern "C" __attribute__((visibility("default"))) void regionprof_op_ranges_remove(std::uint64_t handle) noexcept {
  try {
    at::removeCallback(handle);
  } catch (const std::exception&) {
    // Nothing to undo: torch removes unknown handles silently.
  }
}

namespace memory = regionprof::torch::memory_reporting;

/// Installs a memory reporter recording through `record` (record_memory_event's shape) as the calling
/// thread's torch profiler state; returns its handle, or 0 with the reason in `error` (NUL-terminated,
/// at most `capacity` bytes) when the thread already has one or torch refused.
extern "C" __attribute__((visibility("default"))) void* regionprof_memory_install(
    memory::record_function record, char* error, std::size_t capacity) noexcept {
  const auto fail = [&](const char* why) -> void* {
    if (error != nullptr && capacity > 0) {
      std::strncpy(error, why, capacity - 1);
      error[capacity - 1] = '\0';
    }
    return nullptr;
  };
  if (record == nullptr) return fail("no record function");
  try {
    return new memory::installation(record);
  } catch (const std::exception& refused) {
    return fail(refused.what());
  } catch (...) {
    return fail("unknown error");
  }
}

/// Removes and frees an installation regionprof_memory_install returned (on the thread that installed
/// it, the thread's profiler state is as before; see memory_reporting::installation::remove).
extern "C" __attribute__((visibility("default"))) void regionprof_memory_remove(void* handle) noexcept {
  delete static_cast<memory::installation*>(handle);
}
