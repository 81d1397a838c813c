// Random traces for property and reference tests: nested and overlapping ranges on several threads,
// markers (some nested, some on other threads), regions, API calls and their device ops.
#pragma once

#include <cstddef>
#include <cstdint>

#include "regionprof/trace/trace.hpp"

namespace regionprof::test {

struct random_trace_options {
  std::size_t threads = 3;
  std::size_t top_level_items = 8;    ///< top-level intervals per thread
  int max_depth = 4;
  double overlap_probability = 0.08;  ///< an interval ends after its parent
  double equal_probability = 0.04;    ///< an interval is followed by an equal one
  double other_thread_marker_probability = 0.1;
  bool device_ops = true;
  bool shuffle = true;  ///< shuffle the input order (rule 1 must not depend on it except for ties)
};

/// A deterministic random trace for `seed` (same seed, same trace, on every platform: only the
/// generator's raw output is used, never a std distribution).
trace random_trace(std::uint64_t seed, const random_trace_options& options = {});

}  // namespace regionprof::test
