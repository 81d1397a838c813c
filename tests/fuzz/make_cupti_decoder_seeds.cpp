// Writes the seed buffers of fuzz_cupti_decoder: real CUPTI record structs (cupti_records.hpp) laid end
// to end as CUPTI lays them, made with the collector tests' record builders (tests/collect/fake_backend.hpp).
// Kernel `name` fields hold small tags (1, 2, ...) that the fuzz target maps to its own strings.
// Usage: fuzz_cupti_decoder_seeds <folder>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "fake_backend.hpp"
#include "regionprof/collect/cupti_records.hpp"

namespace {

using namespace regionprof::collect;
using regionprof::test::api_call;
using regionprof::test::kernel;
using regionprof::test::memcpy_op;
using regionprof::test::memory_op;
using regionprof::test::memory_pool_op;
using regionprof::test::memset_op;
using regionprof::test::overhead;
using regionprof::test::record_buffer;
using regionprof::test::sync_op;

bool write(const record_buffer& buffer, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(buffer.bytes().data()), static_cast<std::streamsize>(buffer.bytes().size()));
  std::printf("%s: %zu bytes\n", path.c_str(), buffer.bytes().size());
  return static_cast<bool>(out);
}

/// A runtime or driver API record of the seeds' one process and thread.
api_record api(CUpti_ActivityKind kind, std::uint32_t cbid, std::uint32_t correlation, std::uint64_t start,
               std::uint64_t end) {
  return api_call(kind, cbid, correlation, start, end, 4242, 4243);
}

/// A kernel whose `name` field holds the tag the fuzz target maps to its own string.
kernel_record tagged_kernel(std::uint32_t correlation, std::uint64_t start, std::uint64_t end, std::uintptr_t name_tag) {
  return kernel(correlation, start, end, reinterpret_cast<const char*>(name_tag));
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
  ok = write(record_buffer()
                 .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 1000, 1500))
                 .add(tagged_kernel(1, 2000, 2600, 1))
                 .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 2, 1600, 1700))
                 .add(memcpy_op(2, 2700, 2900, 4096))
                 .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 3, 1800, 1850))
                 .add(memset_op(3, 3000, 3100, 1024, 9))
                 .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 5, 1960, 3400))
                 .add(sync_op(5, 1970, 3390, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE)),
             folder + "/step.bin") &&
       ok;

  // A driver launch whose correlation id a runtime call also carries, and a kernel with no name.
  ok = write(record_buffer()
                 .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 8, 100, 900))
                 .add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 8, 200, 800))
                 .add(tagged_kernel(8, 1000, 2000, 2))
                 .add(tagged_kernel(9, 1500, 2500, 0)),
             folder + "/driver_under_runtime.bin") &&
       ok;

  // Overhead, an untimed kernel and a kind the decoder skips (a bare CUpti_Activity head of NAME).
  CUpti_ActivityName name{};
  name.kind = CUPTI_ACTIVITY_KIND_NAME;
  ok = write(record_buffer()
                 .add(overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 5000, 6000))
                 .add(tagged_kernel(4, 0, 0, 3))
                 .add(name),
             folder + "/overhead_untimed_skipped.bin") &&
       ok;
  // Allocations, frees and memory pools (docs/design.md, rule 21): a cudaMalloc with its MEMORY2 record,
  // a pool created by cudaMemPoolCreate and trimmed by cudaMemPoolTrimTo, and a free whose call is missing.
  ok = write(record_buffer()
                 .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 11, 100, 200))
                 .add(memory_op(11, 150, 1 << 20))
                 .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolCreate_v11020, 12, 300, 400))
                 .add(memory_pool_op(12, 350, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED))
                 .add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020, 13, 500, 600))
                 .add(memory_pool_op(13, 700, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED))
                 .add(memory_op(14, 800, 1 << 20, true)),
             folder + "/memory.bin") &&
       ok;
  return ok ? 0 : 1;
}
