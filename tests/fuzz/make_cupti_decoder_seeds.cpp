// Writes the seed buffers of fuzz_cupti_decoder: real CUPTI record structs (cupti_records.hpp) laid end
// to end as CUPTI lays them. Kernel `name` fields hold small tags (1, 2, ...) that the fuzz target maps
// to its own strings. Usage: fuzz_cupti_decoder_seeds <folder>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "collect/cupti_records.hpp"

namespace {

using namespace regionprof::collect;

class buffer {
 public:
  template <class Record>
  buffer& add(const Record& record) {
    const std::size_t offset = bytes_.size();
    bytes_.resize(offset + sizeof(Record));
    std::memcpy(bytes_.data() + offset, &record, sizeof(Record));
    return *this;
  }
  bool write(const std::string& path) const {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(bytes_.size()));
    std::printf("%s: %zu bytes\n", path.c_str(), bytes_.size());
    return static_cast<bool>(out);
  }

 private:
  std::vector<std::uint8_t> bytes_;
};

template <class Record>
Record timed(CUpti_ActivityKind kind, std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
  Record record{};
  record.kind = kind;
  record.correlationId = correlation;
  record.start = start;
  record.end = end;
  return record;
}

api_record api(CUpti_ActivityKind kind, std::uint32_t cbid, std::uint32_t correlation, std::uint64_t start,
               std::uint64_t end) {
  auto record = timed<api_record>(kind, correlation, start, end);
  record.cbid = cbid;
  record.processId = 4242;
  record.threadId = 4243;
  return record;
}

kernel_record kernel(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, std::uintptr_t name_tag) {
  auto record = timed<kernel_record>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, correlation, start, end);
  record.name = reinterpret_cast<const char*>(name_tag);
  record.streamId = 7;
  return record;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_cupti_decoder_seeds <folder>\n");
    return 2;
  }
  const std::string folder = argv[1];
  bool ok = true;

  // A launch, a copy, a set and a synchronize, as one step of a program makes them.
  memcpy_record copy = timed<memcpy_record>(CUPTI_ACTIVITY_KIND_MEMCPY, 2, 2700, 2900);
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 4096;
  copy.streamId = 7;
  memset_record set = timed<memset_record>(CUPTI_ACTIVITY_KIND_MEMSET, 3, 3000, 3100);
  set.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  set.bytes = 1024;
  set.streamId = 9;
  synchronization_record sync = timed<synchronization_record>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, 5, 1970, 3390);
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  ok = buffer()
           .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 1000, 1500))
           .add(kernel(1, 2000, 2600, 1))
           .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 2, 1600, 1700))
           .add(copy)
           .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 3, 1800, 1850))
           .add(set)
           .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 5, 1960, 3400))
           .add(sync)
           .write(folder + "/step.bin") && ok;

  // A driver launch whose correlation id a runtime call also carries, and a kernel with no name.
  ok = buffer()
           .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 8, 100, 900))
           .add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 8, 200, 800))
           .add(kernel(8, 1000, 2000, 2))
           .add(kernel(9, 1500, 2500, 0))
           .write(folder + "/driver_under_runtime.bin") && ok;

  // Overhead, an untimed kernel and a kind the decoder skips (a bare CUpti_Activity head of NAME).
  overhead_record overhead = timed<overhead_record>(CUPTI_ACTIVITY_KIND_OVERHEAD, 0, 5000, 6000);
  overhead.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  overhead.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  CUpti_ActivityName name{};
  name.kind = CUPTI_ACTIVITY_KIND_NAME;
  ok = buffer()
           .add(overhead)
           .add(kernel(4, 0, 0, 3))
           .add(name)
           .write(folder + "/overhead_untimed_skipped.bin") && ok;
  return ok ? 0 : 1;
}
