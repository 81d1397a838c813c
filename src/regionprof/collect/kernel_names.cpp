#include "regionprof/collect/kernel_names.hpp"

#include <cstring>
#include <vector>

#include "regionprof/collect/cupti_library.hpp"

namespace regionprof::collect {

kernel_names& kernel_names::instance() {
  static kernel_names* const names = new kernel_names();
  return *names;
}

void kernel_names::capture(const std::uint8_t* buffer, std::size_t valid_bytes) noexcept {
  try {
    const cupti_library& cupti = process_cupti();
    if (!cupti.loaded() || buffer == nullptr || valid_bytes == 0) return;
    std::vector<const char*> seen;
    auto* data = const_cast<std::uint8_t*>(buffer);
    CUpti_Activity* record = nullptr;
    while (REGIONPROF_CUPTI(cupti, cuptiActivityGetNextRecord, data, valid_bytes, &record).ok()) {
      if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
      const char* name = reinterpret_cast<const kernel_record*>(record)->name;
      if (name != nullptr && (seen.empty() || seen.back() != name)) seen.push_back(name);
    }
    std::lock_guard lock(mutex_);
    for (const char* name : seen) {
      auto found = names_.find(name);
      if (found == names_.end()) {
        names_.emplace(name, name);
      } else if (std::strcmp(found->second.c_str(), name) != 0) {
        found->second = name;  // the pointer now names another kernel (see the header)
      }
    }
  } catch (...) {
    // Out of memory in a CUPTI callback: the decoder falls back to the record's own pointer.
  }
}

const std::string* kernel_names::find(const char* name) const {
  std::lock_guard lock(mutex_);
  const auto found = names_.find(name);
  return found != names_.end() ? &found->second : nullptr;
}

void kernel_names::clear() {
  std::lock_guard lock(mutex_);
  names_.clear();
}

}  // namespace regionprof::collect
