// A saved profile (regionprof's or the reference module's JSON, read by read_profile) turned back into
// what the report writers take, so `regionprof report` renders a saved file with the same writers that
// produced it.
#pragma once

#include "regionprof/analysis.hpp"
#include "regionprof/profile_reader.hpp"
#include "regionprof/report.hpp"
#include "regionprof/trace.hpp"

namespace regionprof {

/// The inputs of to_markdown / to_html / to_terminal_table rebuilt from a saved profile.
///
/// What comes back: runs, regions (ids, kinds, module types; a region id seen only in `runs` gets its
/// kind and name split at the first ':'), key averages (profiler.key_averages, microseconds rounded to
/// ns), warnings with a code regionprof knows (others are dropped: analysis_result holds only known codes),
/// config (run marker and region rules as patterns; a rule's match kind defaults to `regex`), target.type,
/// created_at, warm-up and measured runs. has_device_data is true when any run has device_time_us.
struct saved_report_input {
  analysis_result result;
  trace source;               ///< only target_type is set
  analysis_options options;   ///< run_marker, region_rules, cross_thread, row_limit as saved
  report_context context;
};

/// Rebuilds the report inputs from `profile`. Never throws on a profile read_profile accepted.
///
/// ```
/// auto input = regionprof::to_report_input(regionprof::read_profile("profile.json"));
/// std::cout << regionprof::to_markdown(input.result, input.source, input.options, input.context);
/// ```
saved_report_input to_report_input(const saved_profile& profile);

}  // namespace regionprof
