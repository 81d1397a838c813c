// Helpers shared by the harness tests.
#pragma once

#include <algorithm>
#include <cstddef>

#include "regionprof/harness/harness.hpp"
#include "support/warning_queries.hpp"

namespace regionprof::testing {

using regionprof::test::has_warning;

/// Default options with the given run counts.
inline profile_options quick(std::size_t warmup, std::size_t measured) {
  profile_options options;
  options.warmup_runs = warmup;
  options.measured_runs = measured;
  return options;
}

}  // namespace regionprof::testing
