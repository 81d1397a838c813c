// End to end without a GPU: NVTX ranges (as the capture records them) plus device activity decoded from
// real CUPTI record structs by the collector, analysed. Device time must land on the region that
// launched it, through the correlation id, whenever it ran: also after the region closed, and for every
// kernel of a CUDA graph launch; and so must each kernel, copy and memset row of the region's ops.
#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
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

/// A trace of the capture's side (ns, one thread `main`): one range per (start, end, name).
trace ranges_as_captured(const std::vector<std::tuple<std::int64_t, std::int64_t, const char*>>& ranges) {
  trace t;
  const thread_index main = t.add_thread(pid, tid, "main");
  for (const auto& [start, end, name] : ranges) {
    t.intervals.push_back({start, end, t.strings.intern(name), main, 0, 0, interval_kind::range, 0});
  }
  return t;
}

/// A CUDA runtime call record on that thread, as CUPTI delivers it.
collect::api_record runtime(std::uint32_t cbid, std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
  return api_call(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, correlation, start, end, pid, tid);
}

/// Two steps, as the capture and CUPTI record them (ns, one thread): run 0's layer_0 launches a kernel
/// and a copy, its layer_1 a CUDA graph of three kernels (the last ends after layer_1 closed), and a
/// kernel is launched outside every region; run 1's layer_0 launches a kernel that runs after it closed,
/// its layer_1 a memset. The device records come in two buffers, through the collector's decoder.
trace decoded_steps() {
  // The NVTX side, as the capture records it (ns, one thread).
  trace t = ranges_as_captured({{0, 10'000, "step"},
                                {1'000, 3'000, "layer_0"},
                                {4'000, 5'000, "layer_1"},
                                {20'000, 30'000, "step"},
                                {21'000, 22'000, "layer_0"},
                                {23'000, 24'000, "layer_1"}});

  // The device side, as CUPTI delivers it: API calls on the same thread, the work they launched.
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
  return t;
}

/// Runs are `step` ranges, regions `layer_N` (kind layer).
analysis_options step_layers() {
  analysis_options analysis;
  analysis.run_marker = {match_kind::regex, "step", "run", ""};
  analysis.region_rules = {parse_region_arg("layer_(.*)=layer")};
  return analysis;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(collect_attribution)

BOOST_AUTO_TEST_CASE(device_time_goes_to_the_region_that_launched_it) {
  const trace t = decoded_steps();
  BOOST_REQUIRE_EQUAL(t.threads.size(), 1u);  // the API calls joined the ranges' thread
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 8u);
  const analysis_options analysis = step_layers();
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

// docs/design.md, rule 20: each region's ops are its API calls and the kernels, copies and memsets they
// launched (by correlation, whenever they ran), over both runs; a launch outside every region is the
// residual's. By total in the row's own domain, ties by key (ns):
//   layer:0     late() 4000, layer0() 1000, Memcpy HtoD 200, cudaLaunchKernel 2 x 100 (launched 5000),
//               cudaMemcpyAsync 100 (launched 200)
//   layer:1     tail() 700, node() 2 x (200, 400), Memset 100, cudaGraphLaunch 100 (launched 1300),
//               cudaMemsetAsync 100 (launched 100)
//   (residual)  cudaLaunchKernel 100 (launched 100), residual() 100
BOOST_AUTO_TEST_CASE(each_region_owns_the_ops_its_launches_ran) {
  const analysis_result result = analyze(decoded_steps(), step_layers());
  struct row {
    std::string key;
    device_type type;
    std::uint64_t count;
    std::int64_t cpu;     ///< total and self (no API call has children)
    std::int64_t device;  ///< total and self
  };
  const std::vector<std::vector<row>> expected{
      {{"late()", device_type::cuda, 1, 0, 4'000},
       {"layer0()", device_type::cuda, 1, 0, 1'000},
       {"Memcpy HtoD (Pageable -> Device)", device_type::cuda, 1, 0, 200},
       {"cudaLaunchKernel", device_type::cpu, 2, 200, 5'000},
       {"cudaMemcpyAsync", device_type::cpu, 1, 100, 200}},
      {{"tail()", device_type::cuda, 1, 0, 700},
       {"node()", device_type::cuda, 2, 0, 600},
       {"Memset (Device)", device_type::cuda, 1, 0, 100},
       {"cudaGraphLaunch", device_type::cpu, 1, 100, 1'300},
       {"cudaMemsetAsync", device_type::cpu, 1, 100, 100}},
      {{"cudaLaunchKernel", device_type::cpu, 1, 100, 100}, {"residual()", device_type::cuda, 1, 0, 100}},
  };
  BOOST_TEST_REQUIRE(result.region_ops.size() == expected.size());
  const std::vector<std::string> owners{"layer:0", "layer:1"};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    const region_op_rows& entry = result.region_ops[k];
    if (k < owners.size()) {
      BOOST_TEST(result.regions.at(entry.region).id == owners[k]);
    } else {
      BOOST_TEST(entry.region == region_op_rows::residual);
    }
    BOOST_TEST_REQUIRE(entry.rows.size() == expected[k].size());
    for (std::size_t i = 0; i < expected[k].size(); ++i) {
      const key_average_row& got = entry.rows[i];
      const row& want = expected[k][i];
      BOOST_TEST_CONTEXT("entry " << k << ", row " << i << " " << want.key) {
        BOOST_TEST(got.key == want.key);
        BOOST_TEST((got.type == want.type));
        BOOST_TEST(got.count == want.count);
        BOOST_TEST(got.cpu_time_total_ns == want.cpu);
        BOOST_TEST(got.self_cpu_time_ns == want.cpu);
        BOOST_TEST(got.device_time_total_ns.value_or(-1) == want.device);
        BOOST_TEST(got.self_device_time_ns.value_or(-1) == want.device);
      }
    }
  }
}

// Rule 21: MEMORY2 records through the collector's decoder. Each allocation and free is on its API
// call's thread at its own time held within that call, so the region around the call owns it: a free
// stamped after its cudaFree returned (5,100, after layer_1 closed at 5,000) is still layer_1's.
BOOST_AUTO_TEST_CASE(each_region_owns_the_allocations_and_frees_its_calls_made) {
  trace t = ranges_as_captured({{0, 10'000, "step"}, {1'000, 3'000, "layer_0"}, {4'000, 5'000, "layer_1"}});
  record_buffer buffer;
  buffer.add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 1, 1'100, 1'200))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, 2, 1'300, 1'400))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, 3, 4'100, 4'200))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 4, 6'000, 6'100))  // outside every region
      .add(memory_op(1, 1'150, 1 << 20))
      .add(memory_op(2, 1'350, 4096, false, 0, CUPTI_ACTIVITY_MEMORY_KIND_PINNED))
      .add(memory_op(3, 5'100, 1 << 20, true))
      .add(memory_op(4, 6'050, 256, false, 1))
      .add(memory_op(9, 7'000, 8));  // no API call carries id 9: skipped and counted
  auto session = collect::make_device_session(small_pool(), std::make_unique<fake_backend>(std::vector{buffer}));
  session->start();
  session->stop(t);
  BOOST_TEST_REQUIRE(t.memory_events.size() == 4u);
  BOOST_TEST(t.memory_events[2].time_ns == 4'200);  // held at its call's end
  BOOST_TEST(t.memory_events[2].bytes == -(1 << 20));
  BOOST_TEST((t.memory_events[2].kind == memory_event_kind::free));

  const analysis_result result = analyze(t, step_layers());
  BOOST_TEST_REQUIRE(result.runs.size() == 1u);
  const run_result& run = result.runs[0];
  const auto figures = [&](std::uint32_t index) {
    BOOST_TEST_REQUIRE(memory_of(result, index) != nullptr);
    return *memory_of(result, index);
  };
  const memory_figures layer_0 = figures(region_of(result, run, "layer:0")->memory);
  BOOST_TEST_REQUIRE(layer_0.size() == 2u);
  BOOST_TEST((layer_0[0] == device_memory{cpu_memory, 4096, 0, 1, 0, std::nullopt}));
  BOOST_TEST((layer_0[1] == device_memory{0, 1 << 20, 0, 1, 0, std::nullopt}));
  const memory_figures layer_1 = figures(region_of(result, run, "layer:1")->memory);
  BOOST_TEST_REQUIRE(layer_1.size() == 1u);
  BOOST_TEST((layer_1[0] == device_memory{0, 0, 1 << 20, 0, 1, std::nullopt}));
  const memory_figures residual = figures(result.run_memory.at(0).residual);
  BOOST_TEST_REQUIRE(residual.size() == 1u);
  BOOST_TEST((residual[0] == device_memory{1, 256, 0, 1, 0, std::nullopt}));
  bool orphan_reported = false;
  for (const warning& w : result.warnings) {
    orphan_reported = orphan_reported ||
                      (w.code == warning_code::dropped_device_records &&
                       w.message.find("1 memory allocation and free records whose API call was not recorded") !=
                           std::string::npos);
  }
  BOOST_TEST(orphan_reported);
}

// Rule 21: MEMORY_POOL records through the collector's decoder. Each pool created, trimmed or destroyed
// is a zero-length range named by its operation (domain cuda_memory_pool) under its API call, at its own
// time held within that call, so the region around the call owns it as one of its ops; a record whose
// call was not recorded is skipped and counted.
BOOST_AUTO_TEST_CASE(memory_pool_operations_are_ranges_under_their_calls) {
  trace t = ranges_as_captured({{0, 10'000, "step"}, {1'000, 3'000, "layer_0"}, {4'000, 5'000, "layer_1"}});
  record_buffer buffer;
  buffer.add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolCreate_v11020, 1, 1'100, 1'200))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolTrimTo_v11020, 2, 4'100, 4'200))
      .add(runtime(CUPTI_RUNTIME_TRACE_CBID_cudaMemPoolDestroy_v11020, 3, 6'000, 6'100))  // outside every region
      .add(memory_pool_op(1, 1'150, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED))
      .add(memory_pool_op(2, 4'900, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED))  // after its call
      .add(memory_pool_op(3, 6'050, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED))
      .add(memory_pool_op(9, 7'000, CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED));  // no call has id 9
  auto session = collect::make_device_session(small_pool(), std::make_unique<fake_backend>(std::vector{buffer}));
  session->start();
  session->stop(t);
  std::vector<std::tuple<std::int64_t, std::string, thread_index>> pools;
  for (const cpu_interval& interval : t.intervals) {
    if (t.strings.view(t.domains.at(interval.domain)) != "cuda_memory_pool") continue;
    BOOST_TEST(interval.start_ns == interval.end_ns);
    pools.emplace_back(interval.start_ns, std::string(t.strings.view(interval.name)), interval.thread);
  }
  std::sort(pools.begin(), pools.end());
  using pool = std::tuple<std::int64_t, std::string, thread_index>;
  BOOST_TEST((pools == std::vector<pool>{{1'150, "Memory Pool Created", 0},
                                          {4'200, "Memory Pool Trimmed", 0},  // held at its call's end
                                          {6'050, "Memory Pool Destroyed", 0}}));
  BOOST_TEST(t.memory_events.empty());  // a pool's operations allocate and free nothing

  const analysis_result result = analyze(t, step_layers());
  BOOST_TEST_REQUIRE(result.has_region_ops);
  const auto rows_of = [&](std::string_view owner) {
    std::vector<std::string> keys;
    for (const region_op_rows& entry : result.region_ops) {
      const bool residual = entry.region == region_op_rows::residual;
      if ((residual ? std::string(region_op_rows::residual_id) : result.regions.at(entry.region).id) != owner) {
        continue;
      }
      for (const key_average_row& row : entry.rows) {
        if (row.key.rfind("Memory Pool", 0) == 0) keys.push_back(row.key + " x" + std::to_string(row.count));
      }
    }
    return keys;
  };
  using rows = std::vector<std::string>;
  BOOST_TEST(rows_of("layer:0") == rows{"Memory Pool Created x1"}, boost::test_tools::per_element());
  BOOST_TEST(rows_of("layer:1") == rows{"Memory Pool Trimmed x1"}, boost::test_tools::per_element());
  BOOST_TEST(rows_of("(residual)") == rows{"Memory Pool Destroyed x1"}, boost::test_tools::per_element());
  bool orphan_reported = false;
  for (const warning& w : result.warnings) {
    orphan_reported = orphan_reported ||
                      (w.code == warning_code::dropped_device_records &&
                       w.message.find("1 memory pool records whose API call was not recorded") != std::string::npos);
  }
  BOOST_TEST(orphan_reported);
}

BOOST_AUTO_TEST_SUITE_END()
