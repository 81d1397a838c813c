// libFuzzer target: bytes as one completed CUPTI activity buffer, walked by CUPTI's own walker
// (cuptiActivityGetNextRecord from the toolkit's libcupti, which loads without a driver) and decoded by
// the production activity_decoder, then appended to a trace and turned into warnings. The analysis of
// traces is fuzz_kineto_import's (any trace the decoder makes, the importer can read).
//
// CUPTI records carry pointers that CUPTI owns (a kernel's `name`, an overhead's `overheadData`, which
// the decoder frees). Bytes cannot hold valid pointers, so before decoding, one walk over the buffer
// replaces each kernel name pointer with one of a few strings owned here (chosen by the pointer's low
// bits; 0 stays null) and clears each overheadData. Every other byte reaches the decoder as given.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "regionprof/collect/activity_backend.hpp"
#include "regionprof/collect/activity_decoder.hpp"
#include "regionprof/collect/clock_fit.hpp"
#include "regionprof/collect/cupti_library.hpp"
#include "regionprof/collect/cupti_records.hpp"
#include "regionprof/trace/trace.hpp"

namespace {

using namespace regionprof;

/// Walking and naming need only the non-virtual part of the backend; the session calls are never made.
class walk_only_backend final : public collect::activity_backend {
 public:
  explicit walk_only_backend(const collect::cupti_library& library) : activity_backend(library) {}
  collect::backend_status probe() override { return {}; }
  collect::backend_status enable(bool) override { return {}; }
  void disable() override {}
  collect::backend_status flush() override { return {}; }
  void release() override {}
  void detach() noexcept override {}
  std::uint64_t take_dropped_records() override { return 0; }
  bool timestamps_are_monotonic() const override { return true; }
  std::optional<std::uint64_t> timestamp() override { return std::nullopt; }
  void synchronize_device() noexcept override {}
};

const collect::cupti_library& cupti() {
  const collect::cupti_library& library = collect::process_cupti();
  if (!library.loaded()) {
    std::fprintf(stderr, "fuzz_cupti_decoder: needs the toolkit's libcupti: %s\n", library.error.c_str());
    std::abort();
  }
  return library;
}

// Mangled, plain, empty and not-quite-mangled names: the decoder demangles what it can.
constexpr std::array<const char*, 5> kernel_names = {"_Z5scalePfi", "plain_c_kernel", "", "_Z", "_ZN3foo3barIiEEvT_"};

/// Replaces the CUPTI-owned pointers of the records in `buffer` (see the file comment).
void replace_pointers(const collect::activity_backend& backend, std::uint8_t* buffer, std::size_t size) {
  const unsigned major = backend.library().major;
  backend.for_each_record(buffer, size, [&](const collect::activity_record& record) {
    auto* at = reinterpret_cast<std::uint8_t*>(const_cast<collect::activity_record*>(&record));
    const auto offset = static_cast<std::size_t>(at - buffer);
    const auto patch = [&](std::size_t field_offset, const void* pointer) {
      if (offset + field_offset + sizeof(void*) > size) return;  // the decoder reads past the buffer here
      std::memcpy(at + field_offset, &pointer, sizeof(void*));
    };
    switch (record.kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        std::uintptr_t given = 0;
        if (offset + offsetof(collect::kernel_record, name) + sizeof(void*) <= size) {
          std::memcpy(&given, at + offsetof(collect::kernel_record, name), sizeof given);
        }
        patch(offsetof(collect::kernel_record, name), given == 0 ? nullptr : kernel_names[given % kernel_names.size()]);
        break;
      }
      case CUPTI_ACTIVITY_KIND_OVERHEAD:
        if (major >= 13) patch(offsetof(collect::overhead_record, overheadData), nullptr);
        break;
      default:
        break;
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One backend per input: the record sizes it learns while walking must not carry over between inputs.
  static const collect::cupti_library& library = cupti();
  const walk_only_backend backend(library);
  // CUPTI buffers are 8-byte aligned; a heap copy of exactly `size` bytes (operator new[] aligns to 16),
  // so a read past the valid bytes is an ASan report.
  const std::unique_ptr<std::uint8_t[]> buffer(new std::uint8_t[size == 0 ? 1 : size]);
  if (size != 0) std::memcpy(buffer.get(), data, size);
  replace_pointers(backend, buffer.get(), size);

  collect::activity_decoder decoder(backend);
  decoder.decode_buffer(buffer.get(), size);
  trace out;
  out.device_tracing = true;
  decoder.append_to(out, collect::clock_map{});
  collect::collection_stats stats;
  stats.buffer_bytes = size;
  stats.buffer_count = 1;
  for (warning& item : collect::collection_warnings(decoder.counts(), decoder.overheads(), stats)) {
    out.warnings.push_back(std::move(item));
  }
  return 0;
}
