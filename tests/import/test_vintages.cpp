// The Kineto importer across torch.profiler vintages: one scenario in the layouts of PyTorch 1.8, 1.9
// and 2.x (tests/data/import/torch*_layout.json) gives the same trace facts and the same attribution;
// a ROCm (HIP) trace reads as a CUDA one.
#include <algorithm>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "import_test_support.hpp"
#include "regionprof/analysis.hpp"
#include "regionprof/import.hpp"
#include "regionprof/report.hpp"
#include "regionprof/trace.hpp"

using namespace regionprof;
using import_test::data_file;
using import_test::name_of;

namespace {

constexpr std::int64_t us = 1000;  // ns per microsecond

/// ProfilerStep#N runs, `## name ##` regions of kind phase (what `regionprof analyze --run-marker
/// 'ProfilerStep#\d+' --region '## (.*) ##=phase'` sets).
analysis_options step_options() {
  analysis_options options;
  options.run_marker = {match_kind::regex, R"(ProfilerStep#\d+)", "", ""};
  options.region_rules = {{match_kind::regex, "## (.*) ##", "phase", ""}};
  return options;
}

std::vector<std::string> region_ids(const analysis_result& result) {
  std::vector<std::string> ids;
  for (const region_info& region : result.regions) ids.push_back(region.id);
  return ids;
}

struct region_expectation {
  std::int64_t cpu_ns;
  std::int64_t device_ns;
};

struct run_expectation {
  std::int64_t cpu_ns, device_ns, busy_ns, span_ns, residual_cpu_ns, residual_device_ns;
  region_expectation forward, backward;
};

// Hand-computed from the scenario (times in us; see tests/data/README.md):
// run 0 = ProfilerStep#1 [1000, 1400]: forward [1010, 1210] launches a kernel of 50 and a memset of
//   4, backward [1220, 1370] a memcpy of 30; residual CPU 400 - 200 - 150 = 50, device 84 - 84 = 0;
//   ops [1100, 1150], [1160, 1164], [1240, 1270]: busy 84, span 1270 - 1100 = 170.
// run 1 = ProfilerStep#2 [1500, 1800]: forward [1510, 1610] launches a kernel of 40, backward
//   [1620, 1680] nothing; a launch at 1700 outside both regions runs a kernel of 20 (device residual);
//   residual CPU 300 - 100 - 60 = 140; ops [1600, 1640], [1710, 1730]: busy 60, span 130.
const run_expectation expected_runs[] = {
    {400 * us, 84 * us, 84 * us, 170 * us, 50 * us, 0, {200 * us, 54 * us}, {150 * us, 30 * us}},
    {300 * us, 60 * us, 60 * us, 130 * us, 140 * us, 20 * us, {100 * us, 40 * us}, {60 * us, 0}},
};

void check_scenario_attribution(const trace& t) {
  const analysis_result result = analyze(t, step_options());
  BOOST_TEST(result.has_device_data);
  BOOST_TEST(result.warnings.empty());
  BOOST_TEST((region_ids(result) == std::vector<std::string>{"phase:forward", "phase:backward"}));
  BOOST_TEST_REQUIRE(result.runs.size() == 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const run_result& run = result.runs[i];
    const run_expectation& e = expected_runs[i];
    BOOST_TEST_CONTEXT("run " << i) {
      BOOST_TEST(run.cpu_time_ns == e.cpu_ns);
      BOOST_TEST(run.wall_time_ns == e.cpu_ns);
      BOOST_TEST((run.device_time_ns == std::optional<std::int64_t>(e.device_ns)));
      BOOST_TEST((run.device_busy_ns == std::optional<std::int64_t>(e.busy_ns)));
      BOOST_TEST((run.device_span_ns == std::optional<std::int64_t>(e.span_ns)));
      BOOST_TEST(run.residual_cpu_ns == e.residual_cpu_ns);
      BOOST_TEST((run.residual_device_ns == std::optional<std::int64_t>(e.residual_device_ns)));
      BOOST_TEST_REQUIRE(run.regions.size() == 2u);
      const region_expectation* regions[] = {&e.forward, &e.backward};
      for (std::size_t r = 0; r < 2; ++r) {
        BOOST_TEST(result.regions[run.regions[r].region].id == (r == 0 ? "phase:forward" : "phase:backward"));
        BOOST_TEST(run.regions[r].calls == 1u);
        BOOST_TEST(run.regions[r].cpu_time_ns == regions[r]->cpu_ns);
        BOOST_TEST((run.regions[r].device_time_ns == std::optional<std::int64_t>(regions[r]->device_ns)));
      }
    }
  }
}

/// The trace facts every layout of the scenario shares.
void check_scenario_trace(const trace& t) {
  BOOST_TEST(t.warnings.empty());  // Trace spans, User/gpu_user_annotation, flows, instants: skipped silently
  BOOST_TEST(t.device_tracing);
  BOOST_TEST_REQUIRE(t.threads.size() == 1u);
  BOOST_TEST(t.threads[0].pid == 4242);
  BOOST_TEST(t.threads[0].tid == 4242);  // 1.8's quoted "4242" is the number
  BOOST_TEST(name_of(t, t.threads[0].name) == "thread 4242 (python)");
  BOOST_TEST_REQUIRE(t.intervals.size() == 12u);
  std::size_t api_calls = 0;
  for (const cpu_interval& interval : t.intervals) {
    if (interval.kind == interval_kind::runtime_api) {
      ++api_calls;
      BOOST_TEST(interval.correlation_id >= 101u);
      BOOST_TEST(interval.correlation_id <= 105u);
    } else {
      BOOST_TEST(interval.correlation_id == 0u);
    }
  }
  BOOST_TEST(api_calls == 5u);
  BOOST_TEST_REQUIRE(t.device_ops.size() == 5u);
  const device_op& memcpy = t.device_ops[2];
  BOOST_TEST((memcpy.kind == device_op_kind::memcpy));
  BOOST_TEST(memcpy.bytes == 4096u);
  BOOST_TEST(memcpy.correlation_id == 103u);
  BOOST_TEST(memcpy.start_ns == 1240 * us);
  BOOST_TEST(memcpy.end_ns == 1270 * us);
  BOOST_TEST((t.device_ops[1].kind == device_op_kind::memset));
  BOOST_TEST(t.device_ops[1].bytes == 256u);
  for (const device_op& op : t.device_ops) {
    BOOST_TEST(op.device == 0u);
    BOOST_TEST(op.stream == 7u);
  }
}

/// Intervals by (start, end, name, correlation), whatever the layout's file order.
std::vector<std::tuple<std::int64_t, std::int64_t, std::string, std::uint32_t>> interval_keys(const trace& t) {
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string, std::uint32_t>> keys;
  for (const cpu_interval& i : t.intervals) keys.emplace_back(i.start_ns, i.end_ns, name_of(t, i.name), i.correlation_id);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(vintages)

BOOST_AUTO_TEST_CASE(torch_2_layout_gives_the_hand_computed_attribution) {
  const trace t = import_kineto_trace(data_file("torch2_layout.json"));
  check_scenario_trace(t);
  check_scenario_attribution(t);
}

// PyTorch 1.8: every CPU event is an Operator (record_function ranges and ProfilerStep#N too, so they
// are cpu_op intervals, which run-marker and region rules match like ranges), CUPTI's are Runtime,
// Kernel, Memcpy, Memset, CPU tids are quoted decimals, device tids "stream 7", flows cat async.
BOOST_AUTO_TEST_CASE(torch_1_8_layout_reads_as_the_torch_2_layout) {
  const trace old = import_kineto_trace(data_file("torch1_8_layout.json"));
  const trace now = import_kineto_trace(data_file("torch2_layout.json"));
  check_scenario_trace(old);
  BOOST_TEST((interval_keys(old) == interval_keys(now)));
  import_test::expect_same_device_ops(old, now);
  for (const cpu_interval& interval : old.intervals) {
    BOOST_TEST((interval.kind == interval_kind::cpu_op || interval.kind == interval_kind::runtime_api));
  }
  check_scenario_attribution(old);
}

// PyTorch 1.9: CPU events as cpu_op / user_annotation, CUPTI's still Runtime, Kernel, Memcpy, Memset,
// integer tids, flows cat async_gpu.
BOOST_AUTO_TEST_CASE(torch_1_9_layout_reads_as_the_torch_2_layout) {
  const trace old = import_kineto_trace(data_file("torch1_9_layout.json"));
  const trace now = import_kineto_trace(data_file("torch2_layout.json"));
  check_scenario_trace(old);
  BOOST_TEST((interval_keys(old) == interval_keys(now)));
  import_test::expect_same_device_ops(old, now);
  std::size_t ranges = 0;
  for (const cpu_interval& interval : old.intervals) ranges += interval.kind == interval_kind::range ? 1 : 0;
  BOOST_TEST(ranges == 6u);  // 2 ProfilerStep#N, 4 regions
  check_scenario_attribution(old);
}

// Kineto on ROCm writes the CUDA names: HIP API calls as cuda_runtime, kernels and copies as kernel
// and gpu_memcpy.
BOOST_AUTO_TEST_CASE(rocm_hip_trace_reads_as_a_cuda_one) {
  const trace t = import_kineto_trace_text(R"({"deviceProperties": [{"id": 0, "name": "AMD Instinct MI250X"}],
    "traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 7, "tid": 7, "ts": 0, "dur": 100},
      {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 7, "tid": 7, "ts": 10, "dur": 5,
       "args": {"External id": 3, "correlation": 9}},
      {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 7, "tid": 7, "ts": 20, "dur": 30,
       "args": {"External id": 4, "correlation": 10}},
      {"ph": "X", "cat": "kernel", "name": "Cijk_Ailk_Bljk_SB_MT64x64x16", "pid": 2, "tid": 1, "ts": 16, "dur": 12,
       "args": {"External id": 3, "device": 2, "stream": 1, "correlation": 9}},
      {"ph": "X", "cat": "gpu_memcpy", "name": "CopyDeviceToHost", "pid": 2, "tid": 1, "ts": 30, "dur": 8,
       "args": {"External id": 4, "device": 2, "stream": 1, "correlation": 10, "bytes": 64}},
      {"ph": "s", "id": 9, "pid": 7, "tid": 7, "ts": 10, "cat": "ac2g", "name": "ac2g"}]})");
  BOOST_TEST(t.warnings.empty());
  BOOST_TEST(t.device_tracing);
  BOOST_TEST_REQUIRE(t.intervals.size() == 3u);
  BOOST_TEST((t.intervals[1].kind == interval_kind::runtime_api));
  BOOST_TEST(t.intervals[1].correlation_id == 9u);
  BOOST_TEST_REQUIRE(t.device_ops.size() == 2u);
  BOOST_TEST(t.device_ops[0].device == 2u);
  BOOST_TEST((t.device_ops[1].kind == device_op_kind::memcpy));
  BOOST_TEST(t.device_ops[1].bytes == 64u);
  analysis_options options = step_options();
  const analysis_result result = analyze(t, options);
  BOOST_TEST_REQUIRE(result.runs.size() == 1u);
  BOOST_TEST((result.runs[0].device_time_ns == std::optional<std::int64_t>(20 * us)));  // 12 + 8
  BOOST_TEST((result.runs[0].residual_device_ns == std::optional<std::int64_t>(20 * us)));
}

BOOST_AUTO_TEST_SUITE_END()
