// Structured warnings: every loss or anomaly is counted and reported, never dropped silently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace regionprof {

/// Stable warning codes (DESIGN.md, Report). The string form is part of the report schema.
enum class warning_code : std::uint8_t {
  unmapped_region_events = 0,
  uncorrelated_device_ops = 1,
  off_thread_events = 2,
  no_run_markers = 3,
  run_count_mismatch = 4,
  overlapping_ranges = 5,
  unbalanced_ranges = 6,
  clock_anomaly = 7,
  device_tracing_unavailable = 8,
  cupti_subscriber_conflict = 9,
  nvtx_tool_conflict = 10,
  dropped_device_records = 11,
  dropped_host_records = 12,
  cupti_overhead = 13,  ///< CUPTI's own time (OVERHEAD records), by kind: informs, loses nothing
};

/// Which part of regionprof raised a warning.
enum class warning_source : std::uint8_t { core = 0, nvtx = 1, cupti = 2, import = 3 };

/// `UNMAPPED_REGION_EVENTS`, ... exactly as the report writes it.
std::string_view to_string(warning_code code) noexcept;
/// `core`, `nvtx`, `cupti` or `import`.
std::string_view to_string(warning_source source) noexcept;

/// One report warning. `message` states the count and what to do about it.
///
/// ```
/// regionprof::warning w{regionprof::warning_code::no_run_markers, regionprof::warning_source::core,
///                       "no run marker matched 'step'; the whole trace is one run"};
/// ```
struct warning {
  warning_code code;
  warning_source source;
  std::string message;
};

}  // namespace regionprof
