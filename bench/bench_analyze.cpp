// Analysis throughput on a generated trace shaped like a real profile (bench/support/workload.hpp).
//
// BM_Analyze/N: N events (CPU intervals + device ops) in Kineto order (each thread's intervals by start,
// device ops by start). BM_AnalyzeCaptureOrder/N: intervals in end order and device ops in launch
// order, so the analysis sorts. items_per_second = events per second; generation is outside the timing.
// Budget (docs/design.md, Budgets): >= 10 million events/s on one core, and 10 M events in <= 64 bytes/event peak RSS:
//   /usr/bin/time -v build/bin/regionprof_bench --benchmark_filter='BM_Analyze/10000000'
#include <benchmark/benchmark.h>

#include "regionprof/analysis.hpp"
#include "support/workload.hpp"

namespace {

void run_analysis(benchmark::State& state, bool capture_order) {
  regionprof::bench::workload_options options;
  options.events = static_cast<std::size_t>(state.range(0));
  options.capture_order = capture_order;
  const regionprof::trace trace = regionprof::bench::generate_workload(options);
  const regionprof::analysis_options analysis = regionprof::bench::workload_analysis_options();
  std::size_t runs = 0;
  for (auto _ : state) {
    regionprof::analysis_result result = regionprof::analyze(trace, analysis);
    runs = result.runs.size();
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(trace.event_count()));
  state.counters["events"] = static_cast<double>(trace.event_count());
  state.counters["runs"] = static_cast<double>(runs);
}

void BM_Analyze(benchmark::State& state) { run_analysis(state, false); }
void BM_AnalyzeCaptureOrder(benchmark::State& state) { run_analysis(state, true); }

BENCHMARK(BM_Analyze)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeCaptureOrder)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
