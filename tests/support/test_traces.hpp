// The library of named, hand-built test traces. The analysis tests assert hand-computed figures on them;
// the import tests round-trip each through the Chrome writer and the Kineto importer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "regionprof/analysis.hpp"
#include "regionprof/trace.hpp"

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

}  // namespace regionprof::test
