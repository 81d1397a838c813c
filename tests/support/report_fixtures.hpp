// Hand-made analysis results and traces for the report tests (no analysis engine involved), and small
// helpers to read the parsed JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/trace.hpp"

namespace report_test {

namespace json = boost::json;

/// Two runs with device data.
///
/// Run 0: wall 1 500 000 ns, CPU 1 234 567 ns, device 400 000 ns (busy 300 000, span 500 000).
///   aot_module:encoder   calls 2, CPU 600 000, device 250 000
///   untuned_module:head  calls 1, CPU  34 567, device  50 000, off-thread CPU 12 345
///   residual: CPU 1 234 567 - 634 567 = 600 000, device 400 000 - 300 000 = 100 000
/// Run 1: a zero-length run (CPU 0, device 0): fractions are absent.
///   aot_module:encoder   calls 1, CPU 0, device 0
inline regionprof::analysis_result device_result() {
  using namespace regionprof;
  analysis_result result;
  result.has_device_data = true;
  result.regions = {{"aot_module:encoder", "encoder", "aot_module", "-"},
                    {"untuned_module:head", "head", "untuned_module", "torch::nn::Linear"}};

  run_result run0;
  run0.run_index = 0;
  run0.wall_time_ns = 1500000;
  run0.cpu_time_ns = 1234567;
  run0.device_time_ns = 400000;
  run0.device_busy_ns = 300000;
  run0.device_span_ns = 500000;
  run0.regions = {{0, 2, 600000, 250000, std::nullopt}, {1, 1, 34567, 50000, 12345}};
  run0.residual_cpu_ns = 600000;
  run0.residual_device_ns = 100000;
  run0.devices = {{0, 400000, 300000, 500000}};

  run_result run1;
  run1.run_index = 1;
  run1.wall_time_ns = 1000;
  run1.cpu_time_ns = 0;
  run1.device_time_ns = 0;
  run1.device_busy_ns = 0;
  run1.device_span_ns = 0;
  run1.regions = {{0, 1, 0, 0, std::nullopt}};
  run1.residual_cpu_ns = 0;
  run1.residual_device_ns = 0;
  result.runs = {run0, run1};

  // Rows deliberately not in name order: the writer must keep the analysis's order.
  result.cpu_time_total = {"cpu_time_total", 20,
                           {{"aten::mm", device_type::cpu, 4, 100000, 300000, 0, 200000},
                            {"aot_module:encoder", device_type::cpu, 3, 50000, 600000, 0, 250000},
                            {"cudaLaunchKernel", device_type::cpu, 8, 80000, 80000, 250000, 250000}}};
  result.device_time_total = key_average_view{
      "device_time_total", 5, {{"gemm_kernel", device_type::cuda, 6, 0, 0, 200000, 200000},
                               {"Memcpy HtoD", device_type::cuda, 2, 0, 0, 50000, 50000}}};
  result.warnings = {{warning_code::uncorrelated_device_ops, warning_source::core,
                      "2 device ops have a correlation id that matches no API call"},
                     {warning_code::dropped_device_records, warning_source::cupti,
                      "17 device records were dropped; raise the buffer size to 8 MiB"}};
  return result;
}

/// One run without device data: every device field is empty.
///   region:stage  calls 3, CPU 700 ns; residual 300 ns of a 1 000 ns run.
inline regionprof::analysis_result cpu_only_result() {
  using namespace regionprof;
  analysis_result result;
  result.has_device_data = false;
  result.regions = {{"region:stage", "stage", "region", "-"}};
  run_result run;
  run.run_index = 0;
  run.wall_time_ns = 2000;
  run.cpu_time_ns = 1000;
  run.regions = {{0, 3, 700, std::nullopt, std::nullopt}};
  run.residual_cpu_ns = 300;
  result.runs = {run};
  result.cpu_time_total = {"cpu_time_total", 20, {{"stage_op", device_type::cpu, 3, 700, 700, std::nullopt, std::nullopt}}};
  return result;
}

/// device_result() with its ops per region (docs/design.md, rule 20), in the analysis's order:
///   aot_module:encoder  6 rows (the views show 5): aten::mm CPU 300 us, gemm_kernel CUDA 200 us,
///                       cudaLaunchKernel CPU 80 us, Memcpy HtoD CUDA 50 us, aten::add 3 us, aten::relu 1 us
///   untuned_module:head none
///   (residual)          cudaDeviceSynchronize CPU 0.5 us
inline regionprof::analysis_result device_result_with_ops() {
  using namespace regionprof;
  analysis_result result = device_result();
  result.has_region_ops = true;
  result.region_ops = {{0,
                        {{"aten::mm", device_type::cpu, 4, 100000, 300000, 0, 200000},
                         {"gemm_kernel", device_type::cuda, 6, 0, 0, 200000, 200000},
                         {"cudaLaunchKernel", device_type::cpu, 8, 80000, 80000, 250000, 250000},
                         {"Memcpy HtoD", device_type::cuda, 2, 0, 0, 50000, 50000},
                         {"aten::add", device_type::cpu, 2, 3000, 3000, 0, 0},
                         {"aten::relu", device_type::cpu, 1, 1000, 1000, 0, 0}}},
                       {1, {}},
                       {region_op_rows::residual, {{"cudaDeviceSynchronize", device_type::cpu, 1, 500, 500, 0, 0}}}};
  return result;
}

/// device_result() with memory figures (docs/design.md, rule 21); bytes and counts by hand, regions +
/// residual = run for each of the four sums:
/// Run 0:
///   aot_module:encoder   cpu    allocated 4 096, freed 1 024, 2 allocations, 1 free, peak 8 192
///                        cuda:0 allocated 1 048 576, freed 0, 1 allocation, 0 frees, peak 3 145 728
///   untuned_module:head  cuda:0 allocated 512, freed 512, 1 allocation, 1 free, no peak
///   residual             cpu    allocated 100, freed 0, 1 allocation, 0 frees
///   run                  cpu    allocated 4 196, freed 1 024, 3 allocations, 1 free, peak 9 000
///                        cuda:0 allocated 1 049 088, freed 512, 2 allocations, 1 free, peak 3 145 728
/// Run 1:
///   aot_module:encoder   cpu    allocated 2 048, freed 2 048, 1 allocation, 1 free, peak 6 144
///   residual             none
///   run                  cpu    allocated 2 048, freed 2 048, 1 allocation, 1 free, peak 6 144
/// The figures are stored out of owner order (the writers follow the indices).
/// Run 0 is charted (memory_timelines): cpu at 4 500 from its start and at its peak 9 000 at its end
/// (1 234 567 ns), cuda:0 at 3 145 728 throughout; spans: the encoder [0, 617 283], the head off-thread
/// [100 000, 200 000] (a second lane) and on-thread [617 283, 1 234 567]; 2 more spans left out.
inline regionprof::analysis_result memory_result() {
  using namespace regionprof;
  analysis_result result = device_result();
  constexpr memory_device cuda0 = 0;
  result.memory = {
      {{cpu_memory, 4196, 1024, 3, 1, 9000}, {cuda0, 1049088, 512, 2, 1, 3145728}},  // 0: run 0
      {{cpu_memory, 4096, 1024, 2, 1, 8192}, {cuda0, 1048576, 0, 1, 0, 3145728}},    // 1: run 0 encoder
      {{cuda0, 512, 512, 1, 1, std::nullopt}},                                       // 2: run 0 head
      {{cpu_memory, 100, 0, 1, 0, std::nullopt}},                                    // 3: run 0 residual
      {{cpu_memory, 2048, 2048, 1, 1, 6144}},                                        // 4: run 1 and its encoder
  };
  result.run_memory = {{.run = 0, .residual = 3}, {.run = 4, .residual = no_memory}};
  result.runs[0].regions[0].memory = 1;
  result.runs[0].regions[1].memory = 2;
  result.runs[1].regions[0].memory = 4;
  result.memory_timelines = {{.run = 0,
                              .series = {{cpu_memory, {{0, 4500}, {1234567, 9000}}}, {cuda0, {{0, 3145728}}}},
                              .spans = {{0, 0, 617283}, {1, 100000, 200000}, {1, 617283, 1234567}},
                              .spans_left_out = 2}};
  return result;
}

inline regionprof::report_context fixed_context() {
  regionprof::report_context context;
  context.warmup_runs = 3;
  context.measured_runs = 0;
  context.uses_inference_function = true;
  context.created_at = "2024-05-01T12:34:56Z";
  return context;
}

inline json::value parse(std::string_view text) { return json::parse(json::string_view(text.data(), text.size())); }

inline std::vector<std::string> keys(const json::object& object) {
  std::vector<std::string> names;
  for (const auto& member : object) names.emplace_back(member.key());
  return names;
}

inline std::string str(const json::value& value) { return std::string(value.as_string()); }

inline double num(const json::value& value) { return value.to_number<double>(); }

/// Counts non-overlapping occurrences of `needle` in `text`.
inline std::size_t occurrences(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

}  // namespace report_test
