#include "regionprof/collect/activity_backend.hpp"

#include <cctype>
#include <string_view>

namespace regionprof::collect {

std::size_t activity_backend::record_size(const activity_record& record) const {
  const std::uint32_t kind = enum_bits(&record.kind);
  if (kind < learned_sizes_.size() && learned_sizes_[kind] != 0) return learned_sizes_[kind];
  if (library_.major != built_cupti_major) return 0;
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(kernel_record);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(memcpy_record);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(memset_record);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(api_record);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(synchronization_record);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(overhead_record);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(memory_record);
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: return sizeof(memory_pool_record);
    default: return 0;
  }
}

walk_summary activity_backend::for_each_record(const std::uint8_t* buffer, std::size_t valid_bytes,
                                               const record_visitor& visit) const {
  walk_summary summary;
  if (buffer == nullptr || valid_bytes == 0) return summary;
  // cuptiActivityGetNextRecord takes a mutable pointer but only reads the buffer.
  auto* data = const_cast<std::uint8_t*>(buffer);
  CUpti_Activity* record = nullptr;
  const CUpti_Activity* previous = nullptr;
  for (;;) {
    const cupti_status status = REGIONPROF_CUPTI(library_, cuptiActivityGetNextRecord, data, valid_bytes, &record);
    if (!status.ok()) {
      if (status.result == CUPTI_ERROR_INVALID_KIND) {
        summary.invalid_record = true;
      } else if (status.result != CUPTI_ERROR_MAX_LIMIT_REACHED) {
        summary.error = status.message;
      }
      break;
    }
    if (previous != nullptr) {
      const auto distance = static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(record) -
                                                     reinterpret_cast<const std::uint8_t*>(previous));
      const auto kind = static_cast<std::uint32_t>(previous->kind);
      if (kind < learned_sizes_.size() && distance <= UINT32_MAX) {
        learned_sizes_[kind] = static_cast<std::uint32_t>(distance);
      }
    }
    visit(*record);
    ++summary.records;
    previous = record;
  }
  // Where the readable records end; what follows inside valid_bytes is a record cut short (or one CUPTI
  // called invalid), counted instead of read.
  std::size_t end = 0;
  if (previous != nullptr) {
    const std::size_t size = record_size(*previous);
    const auto offset = static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(previous) - buffer);
    end = size != 0 ? offset + size : valid_bytes;
  }
  summary.record_bytes = end;
  summary.unread_bytes = end < valid_bytes ? valid_bytes - end : 0;
  return summary;
}

std::string activity_backend::api_name(interval_kind kind, std::uint32_t cbid) const {
  const CUpti_CallbackDomain domain =
      kind == interval_kind::driver_api ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  const char* name = nullptr;
  const cupti_status status = REGIONPROF_CUPTI(library_, cuptiGetCallbackName, domain, cbid, &name);
  if (!status.ok() || name == nullptr || name[0] == '\0') {
    return std::string(kind == interval_kind::driver_api ? "cuda_driver_cbid_" : "cuda_runtime_cbid_") +
           std::to_string(cbid);
  }
  std::string_view text(name);
  // CUPTI tags runtime names with the API version that introduced them: "_v3020", "_v7000", "_v11000".
  const std::size_t tag = text.rfind("_v");
  if (tag != std::string_view::npos && text.size() - tag - 2 >= 4) {
    bool digits = true;
    for (char c : text.substr(tag + 2)) digits = digits && std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (digits) text = text.substr(0, tag);
  }
  return std::string(text);
}

}  // namespace regionprof::collect
