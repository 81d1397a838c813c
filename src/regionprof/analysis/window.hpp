// Windows of a long profile (docs/design.md, "Long runs: windows"): every N runs one profile is analysed,
// written and dropped. The one definition of what a window's profile is, used by the session (every way
// of profiling: session/session.hpp): its paths (`%w`), its run numbering, its `target.window` members and
// the run-marker predicate the capture is cut with (capture_session::cut_window).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/trace/process_identity.hpp"

namespace regionprof {

/// Window `index` of a profile cut every `runs` runs.
struct window_position {
  std::uint64_t index = 0;  ///< 0 for the first window (`%w`, report `target.window`)
  std::uint64_t runs = 1;   ///< N, the runs of every window but the last (report `target`'s member)
};

/// The index of the window's first run: index x runs, so that the windows' runs read as one series.
///
/// ```
/// regionprof::window_first_run({2, 10});  // 20
/// ```
std::uint64_t window_first_run(const window_position& window) noexcept;

/// `pattern` expanded as expand_output_path does, `%w` being `window_index`. Throws process_identity_error
/// as expand_output_path does, in particular for a pattern without `%w` (every window would write it).
///
/// ```
/// regionprof::window_output_path("w/prof-%w.json", regionprof::this_process_identity(), 3);  // "w/prof-3.json"
/// regionprof::window_output_path("prof.json", id, 0);  // throws: add %w (the window index)
/// ```
std::string window_output_path(std::string_view pattern, process_identity identity, std::uint64_t window_index);

/// The analysis of a window's trace: `options` as they are for window 0 (its warm-up runs, `skip_runs`,
/// come first), `skip_runs` 0 for every later window (the warm-up runs are in window 0 only).
///
/// ```
/// regionprof::analysis_options analysis = regionprof::window_analysis(options, {1, 10});  // skip_runs 0
/// ```
analysis_options window_analysis(analysis_options options, const window_position& window);

/// Numbers the window's runs on from the windows before it: `run_index` + window_first_run(window) for
/// every run of `result` (an analysis of the window's trace with window_analysis's options).
///
/// ```
/// regionprof::analysis_result result = regionprof::analyze(t, regionprof::window_analysis(options, {2, 10}));
/// regionprof::number_runs_of_window(result, {2, 10});  // runs 20, 21, ...
/// ```
void number_runs_of_window(analysis_result& result, const window_position& window);

/// Whether a range (its name and domain) is a run marker under `rule` (the analysis's rule 2 by name and
/// domain): the predicate capture_session::cut_window cuts windows with. Throws std::invalid_argument
/// (`run marker '<pattern>': <reason>`) for a regex that does not compile.
///
/// ```
/// auto is_marker = regionprof::run_marker_predicate_of(regionprof::default_run_marker());
/// is_marker("regionprof.profiled_run", "regionprof");  // true
/// ```
std::function<bool(std::string_view name, std::string_view domain)> run_marker_predicate_of(const name_rule& rule);

}  // namespace regionprof
