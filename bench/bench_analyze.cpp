// Analysis throughput on a generated trace shaped like a real profile (bench/support/workload.hpp).
//
// BM_Analyze/N: N events (CPU intervals + device ops) in Kineto order (each thread's intervals by start,
// device ops by start). BM_AnalyzeCaptureOrder/N: intervals in end order and device ops in launch
// order, so the analysis sorts. BM_AnalyzeNoTree/N: BM_Analyze with analysis_options::region_tree off
// (docs/design.md, rule 14: the tree costs at most 15 % of BM_Analyze). items_per_second = events per
// second; generation is outside the timing.
// Budget (docs/design.md, Budgets): >= 10 million events/s on one core, and 10 M events in <= 64 bytes/event peak RSS:
//   /usr/bin/time -v build/bin/regionprof_bench --benchmark_filter='BM_Analyze/10000000'
//
// BM_AnalyzeRunsOnOwnThreads/N: N run markers, each on a thread of its own, nothing in them (the shape
// that once made the analysis quadratic: a million took 176 s). Budget: linear, items_per_second at
// 1,000,000 at least a third of that at 100,000 (quadratic gives a tenth; 2026-12-05: 1.36 M/s against
// 2.40 M/s, 0.57, the rest is cache misses over a million threads' state):
//   build/bin/regionprof_bench --benchmark_filter='BM_AnalyzeRunsOnOwnThreads'
#include <benchmark/benchmark.h>

#include "regionprof/analysis/analysis.hpp"
#include "support/workload.hpp"

namespace {

void run_analysis(benchmark::State& state, bool capture_order, bool region_tree = true) {
  regionprof::bench::workload_options options;
  options.events = static_cast<std::size_t>(state.range(0));
  options.capture_order = capture_order;
  const regionprof::trace trace = regionprof::bench::generate_workload(options);
  regionprof::analysis_options analysis = regionprof::bench::workload_analysis_options();
  analysis.region_tree = region_tree;
  std::size_t runs = 0;
  std::size_t tree_nodes = 0;
  for (auto _ : state) {
    regionprof::analysis_result result = regionprof::analyze(trace, analysis);
    runs = result.runs.size();
    tree_nodes = 0;
    for (const regionprof::run_result& run : result.runs) tree_nodes += run.tree.size();
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(trace.event_count()));
  state.counters["events"] = static_cast<double>(trace.event_count());
  state.counters["runs"] = static_cast<double>(runs);
  state.counters["tree_nodes"] = static_cast<double>(tree_nodes);
}

void BM_Analyze(benchmark::State& state) { run_analysis(state, false); }
void BM_AnalyzeCaptureOrder(benchmark::State& state) { run_analysis(state, true); }
void BM_AnalyzeNoTree(benchmark::State& state) { run_analysis(state, false, false); }

void BM_AnalyzeRunsOnOwnThreads(benchmark::State& state) {
  regionprof::trace trace;
  const regionprof::name_id marker = trace.strings.intern("regionprof.profiled_run");
  const auto runs = static_cast<std::size_t>(state.range(0));
  trace.intervals.reserve(runs);
  trace.threads.reserve(runs);
  for (std::size_t i = 0; i < runs; ++i) {
    regionprof::cpu_interval interval;
    interval.start_ns = 2 * static_cast<std::int64_t>(i);
    interval.end_ns = interval.start_ns + 1;
    interval.name = marker;
    interval.thread = static_cast<regionprof::thread_index>(trace.threads.size());
    trace.threads.push_back({1, static_cast<std::int64_t>(i) + 1, regionprof::name_id{0}});  // add_thread searches
    interval.kind = regionprof::interval_kind::range;
    trace.intervals.push_back(interval);
  }
  const regionprof::analysis_options analysis;
  for (auto _ : state) {
    regionprof::analysis_result result = regionprof::analyze(trace, analysis);
    if (result.runs.size() != runs) state.SkipWithError("a run is missing");
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(runs));
}

BENCHMARK(BM_Analyze)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeCaptureOrder)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeNoTree)->Arg(1'000'000)->Arg(10'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AnalyzeRunsOnOwnThreads)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
