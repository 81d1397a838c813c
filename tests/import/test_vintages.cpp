// The Kineto importer across torch.profiler vintages: one scenario in the layouts of PyTorch 1.8, 1.9
// and 2.x (tests/data/import/torch*_layout.json) gives the same trace facts, the same attribution and
// the same ops per region (rule 20); a ROCm (HIP) trace reads as a CUDA one; what makes a trace
// CPU-only; a real CPU-only trace of torch 2.15 (tests/data/torch2_cpu_only.json, from
// tests/data/make_torch2_cpu_only.py).
#include <algorithm>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "import_test_support.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/trace.hpp"

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

boost::json::object json_report(const trace& t, const analysis_options& options) {
  const analysis_result result = analyze(t, options);
  return boost::json::parse(to_json(Profile(t, options, report_context{}, result))).as_object();
}

std::vector<std::string> activities_of(const boost::json::object& report) {
  std::vector<std::string> out;
  for (const auto& a : report.at("profiler").at("activities").as_array()) out.emplace_back(a.as_string());
  return out;
}

/// Every key of `value`, at any depth, that names a device field (`device_...` other than a
/// key-average row's `device_type`, which says CPU or CUDA).
std::vector<std::string> device_keys(const boost::json::value& value) {
  std::vector<std::string> found;
  if (const auto* object = value.if_object()) {
    for (const auto& [key, member] : *object) {
      if (key.starts_with("device_") && key != "device_type") found.emplace_back(key);
      for (auto& k : device_keys(member)) found.push_back(std::move(k));
    }
  } else if (const auto* array = value.if_array()) {
    for (const auto& element : *array) {
      for (auto& k : device_keys(element)) found.push_back(std::move(k));
    }
  }
  return found;
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

struct op_expectation {
  const char* key;
  device_type type;
  std::uint64_t count;
  std::int64_t self_cpu_ns, total_cpu_ns, self_device_ns, total_device_ns;
};

// docs/design.md, rule 20, hand-computed from the same scenario, both runs together (us):
// forward: aten::linear [1020, 1170] holds launch 101 [1030, 1040] (gemm 50) and memset call 102
//   [1050, 1055] (memset 4): self 150 - 10 - 5 = 135, device 54; run 1's launch 104 [1520, 1528] (gemm 40).
// backward: memcpy call 103 [1230, 1250] (memcpy 30). Residual: launch 105 [1700, 1706] (relu 20).
// Each by total in its own domain (CPU rows CPU, CUDA rows device).
const op_expectation forward_ops[] = {
    {"aten::linear", device_type::cpu, 1, 135 * us, 150 * us, 0, 54 * us},
    {"void gemm_kernel<float>(float const*, float*, int)", device_type::cuda, 2, 0, 0, 90 * us, 90 * us},
    {"cudaLaunchKernel", device_type::cpu, 2, 18 * us, 18 * us, 90 * us, 90 * us},
    {"cudaMemsetAsync", device_type::cpu, 1, 5 * us, 5 * us, 4 * us, 4 * us},
    {"Memset (Device)", device_type::cuda, 1, 0, 0, 4 * us, 4 * us},
};
const op_expectation backward_ops[] = {
    {"Memcpy DtoH (Device -> Pageable)", device_type::cuda, 1, 0, 0, 30 * us, 30 * us},
    {"cudaMemcpyAsync", device_type::cpu, 1, 20 * us, 20 * us, 30 * us, 30 * us},
};
const op_expectation residual_ops[] = {
    {"void relu_kernel<float>(float*, int)", device_type::cuda, 1, 0, 0, 20 * us, 20 * us},
    {"cudaLaunchKernel", device_type::cpu, 1, 6 * us, 6 * us, 20 * us, 20 * us},
};

void check_scenario_ops(const trace& t) {
  const analysis_result result = analyze(t, step_options());
  BOOST_TEST_REQUIRE(result.region_ops.size() == 3u);
  const std::span<const op_expectation> expected[] = {forward_ops, backward_ops, residual_ops};
  for (std::size_t k = 0; k < 3; ++k) {
    const region_op_rows& entry = result.region_ops[k];
    BOOST_TEST(entry.region == (k < 2 ? std::uint32_t(k) : region_op_rows::residual));
    BOOST_TEST_CONTEXT("entry " << k) {
      BOOST_TEST_REQUIRE(entry.rows.size() == expected[k].size());
      for (std::size_t i = 0; i < entry.rows.size(); ++i) {
        const key_average_row& row = entry.rows[i];
        const op_expectation& e = expected[k][i];
        BOOST_TEST_CONTEXT("row " << i << " " << e.key) {
          BOOST_TEST(row.key == e.key);
          BOOST_TEST((row.type == e.type));
          BOOST_TEST(row.count == e.count);
          BOOST_TEST(row.self_cpu_time_ns == e.self_cpu_ns);
          BOOST_TEST(row.cpu_time_total_ns == e.total_cpu_ns);
          BOOST_TEST((row.self_device_time_ns == std::optional<std::int64_t>(e.self_device_ns)));
          BOOST_TEST((row.device_time_total_ns == std::optional<std::int64_t>(e.total_device_ns)));
        }
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
  check_scenario_ops(t);
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
  check_scenario_ops(old);
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
  check_scenario_ops(old);
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

// The 1.x names that are not read (PyTorch 1.9's Python, say) are counted by category, names in byte
// order, bare when plain, quoted otherwise; singular for one.
BOOST_AUTO_TEST_CASE(ignored_events_name_each_category_and_its_count) {
  std::string events;
  for (int i = 0; i < 10; ++i) {
    events += R"({"ph": "X", "cat": "gpu_user_annotation_x", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},)";
  }
  events += R"({"ph": "X", "cat": "foo", "name": "b", "pid": 1, "tid": 1, "ts": 1, "dur": 1},)";
  events += R"({"ph": "X", "cat": "foo", "name": "c", "pid": 1, "tid": 1, "ts": 1, "dur": 1})";
  const trace many = import_kineto_trace_text("[" + events + "]");
  BOOST_TEST_REQUIRE(many.warnings.size() == 1u);
  BOOST_TEST(static_cast<int>(many.warnings[0].code) == static_cast<int>(warning_code::ignored_events));
  BOOST_TEST(static_cast<int>(many.warnings[0].source) == static_cast<int>(warning_source::import));
  BOOST_TEST(many.warnings[0].message.starts_with("12 events of 2 categories were not read: foo 2, gpu_user_annotation_x 10 ("));

  const trace one = import_kineto_trace_text(
      R"([{"ph": "X", "cat": "odd, cat", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}])");
  BOOST_TEST_REQUIRE(one.warnings.size() == 1u);
  BOOST_TEST(one.warnings[0].message.starts_with("1 event of 1 category was not read: 'odd, cat' 1 ("));
}

// PyTorch 1.8 quoted its tids ("tid": "4242"): the canonical decimal is the number; any other
// string keeps its synthetic id and names the thread.
BOOST_AUTO_TEST_CASE(quoted_decimal_ids_are_numbers) {
  const trace t = import_kineto_trace_text(R"([
      {"ph": "X", "cat": "Operator", "name": "a", "pid": 5, "tid": "4242", "ts": 1, "dur": 1},
      {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 5, "tid": 4242, "ts": 2, "dur": 1},
      {"ph": "X", "cat": "cpu_op", "name": "c", "pid": "-3", "tid": "007", "ts": 3, "dur": 1}])");
  BOOST_TEST_REQUIRE(t.threads.size() == 2u);
  BOOST_TEST(t.threads[0].tid == 4242);
  BOOST_TEST(t.threads[0].name == 0u);  // a number names nothing
  BOOST_TEST(t.intervals[1].thread == t.intervals[0].thread);
  BOOST_TEST(t.threads[1].pid == -3);
  BOOST_TEST(t.threads[1].tid <= -(std::int64_t{1} << 46));  // "007" is not canonical: a string
  BOOST_TEST(name_of(t, t.threads[1].name) == "007");
}

// docs/design.md, rule 7 and "Kineto import": without device ops, only a non-empty deviceProperties
// says a device was traced; regionprof's own 'regionprof' object says it for its traces.
BOOST_AUTO_TEST_CASE(device_tracing_needs_device_ops_or_device_properties) {
  const std::string step = R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 10})";
  struct row {
    std::string top;
    bool device_tracing;
  };
  const row rows[] = {
      {R"("deviceProperties": [], )", false},
      {"", false},
      {R"("deviceProperties": [{"id": 0}], )", true},
      {R"("deviceProperties": [], "regionprof": {"schema_version": 1, "device_tracing": true}, )", true},
      {R"("deviceProperties": [{"id": 0}], "regionprof": {"schema_version": 1, "device_tracing": false}, )", false},
  };
  for (const row& r : rows) {
    BOOST_TEST_CONTEXT(r.top) {
      const trace t = import_kineto_trace_text("{" + r.top + R"("traceEvents": [)" + step + "]}");
      BOOST_TEST(t.device_tracing == r.device_tracing);
      const auto report = json_report(t, step_options());
      const std::vector<std::string> cpu_only{"CPU"};
      const std::vector<std::string> with_cuda{"CPU", "CUDA"};
      BOOST_TEST((activities_of(report) == (r.device_tracing ? with_cuda : cpu_only)));
      BOOST_TEST(report.at("runs").at(0).at("timing").as_object().contains("device_time_us") == r.device_tracing);
    }
  }
}

// A real CPU-only trace of torch.profiler 2.15 (deviceProperties: [], no device event): activities
// CPU, no device key anywhere in the report, a run per ProfilerStep#N, the record_function regions,
// and nothing reported for what torch 2.x writes and regionprof skips on purpose (the Trace span,
// fwdbwd flows, instants, process metadata). Expectations are the file's own ts/dur.
BOOST_AUTO_TEST_CASE(real_torch2_cpu_only_trace_is_cpu_only) {
  const char* root = std::getenv("REGIONPROF_TEST_DATA");
  BOOST_TEST_REQUIRE(root != nullptr);
  const trace t = import_kineto_trace(std::string(root) + "/torch2_cpu_only.json");
  BOOST_TEST(t.warnings.empty());
  BOOST_TEST(!t.device_tracing);
  BOOST_TEST(t.device_ops.empty());
  BOOST_TEST_REQUIRE(t.threads.size() == 1u);  // the Trace span on ("Spans", "PyTorch Profiler") is skipped
  BOOST_TEST(name_of(t, t.threads[0].name) == "thread 21495 (python)");

  const analysis_options options = step_options();
  const analysis_result result = analyze(t, options);
  BOOST_TEST(!result.has_device_data);
  BOOST_TEST(result.warnings.empty());
  BOOST_TEST((region_ids(result) == std::vector<std::string>{"phase:forward", "phase:backward"}));
  BOOST_TEST_REQUIRE(result.runs.size() == 2u);  // ProfilerStep#2 and #3 (schedule: wait 1, warmup 1, active 2)
  const std::int64_t step_ns[] = {585724, 183394};
  const std::int64_t forward_ns[] = {200529, 51016};
  const std::int64_t backward_ns[] = {293397, 111676};
  for (std::size_t i = 0; i < 2; ++i) {
    BOOST_TEST_CONTEXT("run " << i) {
      const run_result& run = result.runs[i];
      BOOST_TEST(run.cpu_time_ns == step_ns[i]);
      BOOST_TEST(!run.device_time_ns.has_value());
      BOOST_TEST_REQUIRE(run.regions.size() == 2u);
      BOOST_TEST(run.regions[0].cpu_time_ns == forward_ns[i]);
      BOOST_TEST(run.regions[1].cpu_time_ns == backward_ns[i]);
      BOOST_TEST(!run.regions[0].device_time_ns.has_value());
      BOOST_TEST(run.residual_cpu_ns == step_ns[i] - forward_ns[i] - backward_ns[i]);
      BOOST_TEST(!run.residual_device_ns.has_value());
    }
  }

  const std::string text = to_json(Profile(t, options, report_context{}, result));
  const auto report = boost::json::parse(text).as_object();
  BOOST_TEST((activities_of(report) == std::vector<std::string>{"CPU"}));
  BOOST_TEST(device_keys(report).empty());  // no device_time_us, device_busy_us, ... anywhere
  BOOST_TEST(!report.at("profiler").at("key_averages").as_object().contains("device_time_total"));
  BOOST_TEST(report.at("warnings").as_array().empty());
}

BOOST_AUTO_TEST_SUITE_END()
