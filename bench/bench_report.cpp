// Chrome trace export throughput: events/s and bytes/s written to a stream that discards them.
#include <cstdint>
#include <ostream>
#include <streambuf>
#include <string>

#include <benchmark/benchmark.h>

#include "regionprof/report/report.hpp"
#include "regionprof/trace/trace.hpp"

namespace {

/// Counts what it is given and keeps nothing.
class counting_buffer : public std::streambuf {
 public:
  std::uint64_t bytes = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize count) override {
    bytes += static_cast<std::uint64_t>(count);
    return count;
  }
  int_type overflow(int_type c) override {
    ++bytes;
    return traits_type::not_eof(c);
  }
};

/// A trace shaped like a real one: per launch a range, an operator, a runtime call and 2 kernels
/// (5 events), over 8 threads and 4 streams, with Kineto-length kernel names.
regionprof::trace generated_trace(std::int64_t events) {
  using namespace regionprof;
  trace t;
  const domain_index rp = t.domain("regionprof");
  std::vector<thread_index> threads;
  for (int i = 0; i < 8; ++i) threads.push_back(t.add_thread(4000, 4000 + i, "thread " + std::to_string(i)));
  const name_id region = t.strings.intern("aot_module:encoder.layers.3");
  const name_id op = t.strings.intern("aten::addmm");
  const name_id launch = t.strings.intern("cudaLaunchKernel");
  const name_id kernels[2] = {
      t.strings.intern("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, "
                       "at::detail::Array<char*, 2> >(int, at::native::CUDAFunctorOnSelf_add<float>, "
                       "at::detail::Array<char*, 2>)"),
      t.strings.intern("ampere_sgemm_128x64_tn")};
  std::int64_t clock = 1695835542514261123;
  for (std::uint32_t i = 1; static_cast<std::int64_t>(t.event_count()) + 5 <= events; ++i) {
    const thread_index thread = threads[i % threads.size()];
    t.intervals.push_back({clock, clock + 9000, region, thread, 0, rp, interval_kind::range});
    t.intervals.push_back({clock + 100, clock + 8000, op, thread, 0, 0, interval_kind::cpu_op});
    t.intervals.push_back({clock + 200, clock + 4200, launch, thread, i, 0, interval_kind::runtime_api});
    for (int k = 0; k < 2; ++k) {
      const std::int64_t start = clock + 5000 + k * 3000;
      t.device_ops.push_back({start, start + 2500, 0, kernels[k], i, 7 + i % 4, 0, device_op_kind::kernel});
    }
    clock += 10007;
  }
  return t;
}

void BM_WriteChromeTrace(benchmark::State& state) {
  const regionprof::trace t = generated_trace(state.range(0));
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    counting_buffer sink;
    std::ostream out(&sink);
    regionprof::write_chrome_trace(t, out);
    bytes += sink.bytes;
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(t.event_count()));
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_WriteChromeTrace)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
