// Helpers shared by the harness tests.
#pragma once

#include <algorithm>
#include <cstddef>

#include "regionprof/harness.hpp"

namespace regionprof::testing {

inline bool has_warning(const analysis_result& result, warning_code code) {
  return std::any_of(result.warnings.begin(), result.warnings.end(), [code](const warning& w) { return w.code == code; });
}

/// Default options with the given run counts.
inline profile_options quick(std::size_t warmup, std::size_t measured) {
  profile_options options;
  options.warmup_runs = warmup;
  options.measured_runs = measured;
  return options;
}

}  // namespace regionprof::testing
