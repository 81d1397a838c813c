// Emit side of regions and run markers: the regionprof domain, registered names, the C API.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "regionprof/capture/capture.hpp"
#include "regionprof/regions/regions.h"
#include "regionprof/regions/regions.hpp"

namespace regionprof {

registered_region::registered_region(std::string_view kind, std::string_view name) : range_name_(kind) {
  range_name_.append(":").append(name);
  handle_ = nvtxDomainRegisterStringA(detail::domain(), range_name_.c_str());
}

namespace detail {
const work_mark_handles& work_marks() noexcept {
  static const work_mark_handles handles{nvtxDomainRegisterStringA(domain(), work_mark_names[0]),
                                         nvtxDomainRegisterStringA(domain(), work_mark_names[1]),
                                         nvtxDomainRegisterStringA(domain(), work_mark_names[2])};
  return handles;
}
}  // namespace detail

void push_run() noexcept {
  static const nvtxStringHandle_t handle = nvtxDomainRegisterStringA(detail::domain(), run_marker_name);
  const nvtxEventAttributes_t attributes = detail::registered_attributes(handle);
  nvtxDomainRangePushEx(detail::domain(), &attributes);
}

}  // namespace regionprof

// ---- C API ---------------------------------------------------------------------------------------

struct regionprof_region_opaque {
  regionprof::registered_region region;
};

extern "C" {

regionprof_region_handle regionprof_region_register(const char* kind, const char* name) {
  // Registration is rare (once per name); the hot path (push/pop) takes no lock.
  static std::mutex mutex;
  // Never destroyed: handles stay valid until the process exits.
  static auto* regions = new std::map<std::string, std::unique_ptr<regionprof_region_opaque>, std::less<>>;
  const std::string_view kind_text = kind != nullptr ? kind : "region";
  const std::string_view name_text = name != nullptr ? name : "";
  std::string key = std::string(kind_text) + ":" + std::string(name_text);
  std::lock_guard lock(mutex);
  auto found = regions->find(key);
  if (found == regions->end()) {
    auto entry = std::make_unique<regionprof_region_opaque>(
        regionprof_region_opaque{regionprof::registered_region(kind_text, name_text)});
    found = regions->emplace(std::move(key), std::move(entry)).first;
  }
  return found->second.get();
}

void regionprof_region_push(regionprof_region_handle region) {
  if (region != nullptr) regionprof::push_region(region->region);
}

void regionprof_region_push_name(const char* kind, const char* name) {
  char buffer[256];
  const std::string_view kind_text = kind != nullptr ? kind : "region";
  const std::string_view name_text = name != nullptr ? name : "";
  std::string heap;
  const char* message = buffer;
  if (kind_text.size() + name_text.size() + 2 <= sizeof(buffer)) {
    char* out = kind_text.copy(buffer, kind_text.size()) + buffer;
    *out++ = ':';
    out += name_text.copy(out, name_text.size());
    *out = '\0';
  } else {
    heap = std::string(kind_text) + ":" + std::string(name_text);
    message = heap.c_str();
  }
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = message;
  nvtxDomainRangePushEx(regionprof::detail::domain(), &attributes);
}

void regionprof_region_pop(void) { regionprof::pop_region(); }

void regionprof_run_push(void) { regionprof::push_run(); }

unsigned long long regionprof_region_start(regionprof_region_handle region) {
  if (region == nullptr) return 0;
  const nvtxEventAttributes_t attributes = regionprof::detail::registered_attributes(region->region.nvtx_handle());
  return nvtxDomainRangeStartEx(regionprof::detail::domain(), &attributes);
}

void regionprof_region_end(unsigned long long id) {
  if (id != 0) nvtxDomainRangeEnd(regionprof::detail::domain(), id);
}

}  // extern "C"
