// Cold runs, device side: a cuMemsetD8Async over a buffer of the current device's L2 size, as nvbench
// flushes the L2 between samples. Through the driver loaded at run time (process_driver()); never throws.
#pragma once

#include <cstdint>

#include "regionprof/collect/cupti_library.hpp"

namespace regionprof::collect {

class device_l2_flusher {
 public:
  device_l2_flusher() = default;
  device_l2_flusher(const device_l2_flusher&) = delete;
  device_l2_flusher& operator=(const device_l2_flusher&) = delete;
  ~device_l2_flusher() { release(); }

  /// Writes an L2-sized buffer on the calling thread's current context's device (allocated on first use,
  /// in that context) on the default stream; the caller synchronises before timing. Nothing happens
  /// without a driver, a current context or the entry points. Returns whether a memset was issued.
  bool flush() noexcept;
  /// Frees the buffer (in the context it was made in).
  void release() noexcept;
  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  CUcontext context_ = nullptr;
  CUdeviceptr buffer_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace regionprof::collect
