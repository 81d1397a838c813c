// End to end without a GPU: NVTX ranges (as the capture records them) plus device activity decoded from
// real CUPTI record structs by the collector, analysed. Device time must land on the region that
// launched it, through the correlation id, whenever it ran: also after the region closed, and for every
// kernel of a CUDA graph launch.
#include <memory>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "fake_backend.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/collect/collector.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

constexpr std::uint32_t pid = 100;
constexpr std::uint32_t tid = 101;

/// The region aggregate `id` of `run`, or null.
const region_aggregate* region_of(const analysis_result& result, const run_result& run, const std::string& id) {
  for (const region_aggregate& aggregate : run.regions) {
    if (result.regions.at(aggregate.region).id == id) return &aggregate;
  }
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(collect_attribution)

BOOST_AUTO_TEST_CASE(device_time_goes_to_the_region_that_launched_it) {
  // The NVTX side, as the capture records it (ns, one thread).
  trace t;
  const thread_index main = t.add_thread(pid, tid, "main");
  const auto range = [&](std::int64_t start, std::int64_t end, const char* name) {
    t.intervals.push_back({start, end, t.strings.intern(name), main, 0, 0, interval_kind::range, 0});
  };
  range(0, 10'000, "step");
  range(1'000, 3'000, "layer_0");
  range(4'000, 5'000, "layer_1");
  range(20'000, 30'000, "step");
  range(21'000, 22'000, "layer_0");
  range(23'000, 24'000, "layer_1");

  // The device side, as CUPTI delivers it: API calls on the same thread, the work they launched.
  const auto runtime = [](std::uint32_t cbid, std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
    return api_call(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, correlation, start, end, pid, tid);
  };
  record_buffer first;  // run 0
  first.add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 1'100, 1'200))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 2, 1'300, 1'400))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 3, 4'100, 4'200))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 4, 6'000, 6'100))  // outside every region
      .add(kernel(1, 1'500, 2'500, "_Z6layer0v"))
      .add(memcpy_op(2, 2'600, 2'800, 1 << 20))
      .add(kernel(3, 4'500, 4'700, "_Z4nodev", 1))
      .add(kernel(3, 4'500, 4'900, "_Z4nodev", 2))
      .add(kernel(3, 4'900, 5'600, "_Z4tailv", 1))  // the graph's last kernel ends after layer_1 closed
      .add(kernel(4, 6'200, 6'300, "_Z8residualv"));
  record_buffer second;  // run 1, delivered in a later buffer
  second.add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 5, 21'100, 21'200))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 6, 23'100, 23'200))
      .add(kernel(5, 25'000, 29'000, "_Z4latev"))  // runs long after layer_0 closed at 22000
      .add(memset_op(6, 23'300, 23'400, 4096));
  device_options options;
  options.buffer_bytes = 64 << 10;
  options.max_buffer_bytes = 256 << 10;
  auto session = collect::make_device_session(options, std::make_unique<fake_backend>(std::vector{first, second}));
  session->start();
  session->stop(t);
  BOOST_REQUIRE_EQUAL(t.threads.size(), 1u);  // the API calls joined the ranges' thread
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 8u);

  analysis_options analysis;
  analysis.run_marker = {match_kind::regex, "step", "run", ""};
  analysis.region_rules = {parse_region_arg("layer_(.*)=layer")};
  const analysis_result result = analyze(t, analysis);
  BOOST_TEST(result.has_device_data);
  BOOST_REQUIRE_EQUAL(result.runs.size(), 2u);

  const run_result& run0 = result.runs[0];
  BOOST_TEST(run0.cpu_time_ns == 10'000);
  BOOST_TEST(*run0.device_time_ns == 1'000 + 200 + 200 + 400 + 700 + 100);
  const region_aggregate* layer0 = region_of(result, run0, "layer:0");
  const region_aggregate* layer1 = region_of(result, run0, "layer:1");
  BOOST_REQUIRE(layer0 != nullptr);
  BOOST_REQUIRE(layer1 != nullptr);
  BOOST_TEST(layer0->cpu_time_ns == 2'000);
  BOOST_TEST(*layer0->device_time_ns == 1'000 + 200);        // kernel + copy
  BOOST_TEST(layer1->cpu_time_ns == 1'000);
  BOOST_TEST(*layer1->device_time_ns == 200 + 400 + 700);    // all three kernels of the graph launch
  BOOST_TEST(run0.residual_cpu_ns == 7'000);
  BOOST_TEST(*run0.residual_device_ns == 100);               // launched outside every region
  BOOST_TEST(*run0.device_busy_ns == 1'000 + 200 + (5'600 - 4'500) + 100);
  BOOST_TEST(*run0.device_span_ns == 6'300 - 1'500);

  const run_result& run1 = result.runs[1];
  const region_aggregate* late = region_of(result, run1, "layer:0");
  BOOST_REQUIRE(late != nullptr);
  BOOST_TEST(late->cpu_time_ns == 1'000);
  BOOST_TEST(*late->device_time_ns == 4'000);  // after its region closed, still its own
  BOOST_TEST(*region_of(result, run1, "layer:1")->device_time_ns == 100);
  BOOST_TEST(*run1.residual_device_ns == 0);

  for (const warning& w : result.warnings) {
    BOOST_TEST(w.code != warning_code::uncorrelated_device_ops, w.message);
    BOOST_TEST(w.code != warning_code::clock_anomaly, w.message);
  }
}

BOOST_AUTO_TEST_SUITE_END()
