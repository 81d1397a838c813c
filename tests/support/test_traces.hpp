// The library of named, hand-built test traces. The analysis tests assert hand-computed figures on them;
// the import tests round-trip each through the Chrome writer and the Kineto importer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof::test {

struct named_trace {
  std::string name;         ///< stable identifier, e.g. "one_run_one_region"
  std::string description;  ///< what the trace exercises
  trace value;
  analysis_options options;  ///< the options the analysis tests use with it
};

/// Every named test trace, in a fixed order. Names are unique.
std::vector<named_trace> test_traces();

/// The named trace `name`; throws std::out_of_range naming it when there is none.
named_trace test_trace(std::string_view name);

/// Declared work (docs/design.md, rule 18), not in test_traces() (a Chrome trace does not carry work).
/// Thread 1, three runs; `aot_module:copy` (A) declares work in each, times in ns:
/// - run 0 [0, 1000]: A [100, 300] bytes 1000 flops 4000 (launches corr 1: kernel [300, 550]), with
///   `aot_module:inner` [120, 140] bytes 99 nested in it; A [400, 500] bytes 500; `aot_module:idle`
///   [600, 600] items 7 (zero length). A: CPU 300, device 250, bytes 1500, flops 4000.
/// - run 1 [2000, 3000]: A [2100, 2700] bytes 1500 (launches corr 2: kernel [2200, 2700]). CPU 600, device 500.
/// - run 2 [4000, 5000]: A [4100, 4200] bytes 1000, no launch. CPU 100, device 0.
/// Without `device`, no launch and no kernel (a CPU-only trace).
trace declared_work_trace(bool device);

}  // namespace regionprof::test
