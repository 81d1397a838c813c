// device_l2_flusher: the device's L2 written over before a cold run (docs/design.md, rule 16's cold runs).
#include "regionprof/collect/device_l2_flush.hpp"

namespace regionprof::collect {

bool device_l2_flusher::flush() noexcept {
  const driver_library& driver = process_driver();
  const driver_functions& fn = driver.fn;
  if (!driver.loaded() || fn.ctx_get_device == nullptr || fn.device_get_attribute == nullptr ||
      fn.mem_alloc == nullptr || fn.mem_free == nullptr || fn.memset_d8_async == nullptr) {
    return false;
  }
  CUcontext current = nullptr;
  if (fn.ctx_get_current(&current) != CUDA_SUCCESS || current == nullptr) return false;
  if (current != context_) {
    release();
    CUdevice device = 0;
    int l2_bytes = 0;
    if (fn.ctx_get_device(&device) != CUDA_SUCCESS ||
        fn.device_get_attribute(&l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device) != CUDA_SUCCESS ||
        l2_bytes <= 0) {
      return false;
    }
    CUdeviceptr buffer = 0;
    if (fn.mem_alloc(&buffer, static_cast<std::size_t>(l2_bytes)) != CUDA_SUCCESS) return false;
    context_ = current;
    buffer_ = buffer;
    bytes_ = static_cast<std::uint64_t>(l2_bytes);
  }
  return fn.memset_d8_async(buffer_, 0, static_cast<std::size_t>(bytes_), nullptr) == CUDA_SUCCESS;
}

void device_l2_flusher::release() noexcept {
  if (buffer_ == 0) return;
  const driver_functions& fn = process_driver().fn;
  CUcontext popped = nullptr;
  if (fn.ctx_push_current != nullptr && fn.ctx_pop_current != nullptr && fn.ctx_push_current(context_) == CUDA_SUCCESS) {
    (void)fn.mem_free(buffer_);
    (void)fn.ctx_pop_current(&popped);
  }
  buffer_ = 0;
  context_ = nullptr;
  bytes_ = 0;
}

}  // namespace regionprof::collect
