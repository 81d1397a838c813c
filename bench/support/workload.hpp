// A generated trace shaped like a real profile, for benchmarks (and for writing big Kineto traces).
//
// One main thread runs the measured runs: each run is a `regionprof.profiled_run` marker holding an
// `untuned_module:model` region with `layers` `aot_module:layer_<k>` regions, each with the ops of a
// linear layer and an activation (aten::linear > aten::addmm > cudaLaunchKernel, aten::relu >
// cudaLaunchKernel), and ends with cudaDeviceSynchronize. Every launch runs 2 device ops on the main
// stream. The other threads (autograd-like workers) run `worker_tasks` tasks per run inside the run's
// time window (evaluate_function > aten::mm > cudaLaunchKernel with 2 device ops on the worker's own
// stream; every 4th task inside an `aot_module:backward_<k>` region), so cross_thread has work to do.
// Correlation ids are dense from 1, as CUPTI's are. Durations carry a little deterministic jitter.
//
// ```
// regionprof::trace t = regionprof::bench::generate_workload({.events = 1'000'000});
// auto result = regionprof::analyze(t, regionprof::bench::workload_analysis_options());
// ```
#pragma once

#include <cstddef>
#include <cstdint>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::bench {

struct workload_options {
  std::size_t events = 1'000'000;  ///< at least this many events (intervals + device ops), whole runs
  std::size_t threads = 8;         ///< the main thread and threads - 1 workers
  std::size_t layers = 96;         ///< aot_module regions per run
  std::size_t worker_tasks = 32;   ///< tasks per worker per run
  /// false: each thread's intervals in start order and device ops sorted by start (as Kineto writes a
  /// trace). true: intervals in end order (as a capture records ranges when they are popped) and device
  /// ops in launch order per thread, so the analysis has to sort.
  bool capture_order = false;
  std::uint64_t seed = 42;
};

/// Generates the workload. Vectors are reserved up front (no growth slack in the trace's memory).
trace generate_workload(const workload_options& options);

/// The analysis options the benchmarks use: default rules, cross_thread on.
analysis_options workload_analysis_options();

}  // namespace regionprof::bench
