// Profile: a trace, the analysis of it, and how it was taken, in one value: the result model every
// writer (report/), reader (saved/), diff (compare/) and job (job/) works on. It writes nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/machine/machine.hpp"
#include "regionprof/statistics/stopping.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof {

/// What the workload was called with (report `input`): a count and names, never values.
struct report_input {
  std::size_t args_count = 0;       ///< positional arguments
  std::vector<std::string> kwargs;  ///< keyword argument names, in call order
};

/// How the data behind a report was taken (report `created_at`, `tool`, `config`, `input`; the analysis
/// options and the trace's target give the rest). A profile read back from a report (read_profile) has
/// the file's values here, so writing it again reproduces the file.
struct report_context {
  std::size_t warmup_runs = 0;
  std::size_t measured_runs = 0;  ///< 0: the number of runs found
  bool uses_inference_function = false;
  /// ISO-8601 UTC (utc_timestamp_now()); a profile that analyses its trace sets it, when empty, to the
  /// time of its analysis, so that every output of one profile (each window's file and Python's `data`
  /// alike) says the same. Empty elsewhere: the time the report is written.
  std::string created_at;
  report_input input;      ///< report `input`
  /// Report `tool.name` and `tool.version`; empty: `regionprof` and this build's version. Set from the file
  /// for a read-back profile (another tool's, such as the reference module's, keeps its name).
  std::string tool_name;
  std::string tool_version;
  /// Report `stopping`: how a run count set by max_noise came about (docs/design.md, rule 16); nullopt for a
  /// fixed count.
  std::optional<stopping_summary> stopping;
  /// Report `environment`: the machine of a live profile (harness, `regionprof run`, regionprof::benchmark);
  /// nullopt for an imported trace, which carries none.
  std::optional<machine_environment> environment;
};

/// The one result model: a profile's analysis (analysis_result) with what the writers need besides
/// (the options it was analysed with, the report context, and the trace: its events for the Chrome
/// trace, its target for the reports). What the analysis produces, what read_profile reads back from a
/// saved JSON report, and what merge_ranks, diff_profiles, `regionprof report` and Python take: one type,
/// so a read-back profile writes the same JSON, Markdown, HTML and terminal table as the live one. The
/// writers are report/report.hpp's (to_json, to_markdown, ...); files are written through
/// output/output.hpp (write_outputs, or write_json and the like).
///
/// ```
/// regionprof::Profile live(std::move(trace), regionprof::analysis_options{});
/// regionprof::write_json(live, "profile.json");                         // regionprof/output/output.hpp
/// regionprof::Profile saved = regionprof::read_profile("profile.json");  // regionprof/saved/profile_reader.hpp
/// assert(regionprof::to_json(saved) == regionprof::to_json(live));       // regionprof/report/report.hpp
/// ```
class Profile {
 public:
  /// Analyses `source` with `options`; see regionprof::analyze.
  Profile(trace source, analysis_options options, report_context context = {});
  /// A profile whose analysis is done: `result` is analyze(source, options)'s, or a saved report's
  /// (read_profile; then `source` holds only the target: no events, so its Chrome trace is empty).
  Profile(trace source, analysis_options options, report_context context, analysis_result result);

  const trace& source() const noexcept { return source_; }
  const analysis_options& options() const noexcept { return options_; }
  const report_context& context() const noexcept { return context_; }
  const analysis_result& result() const noexcept { return result_; }

  /// The same profile with a trace that keeps only what the reports read (the target and
  /// device_tracing): its reports are unchanged, its Chrome trace is empty. For
  /// holding many profiles (the ranks of a job) without their events.
  ///
  /// ```
  /// regionprof::Profile light = regionprof::Profile(std::move(trace), options).without_events();
  /// ```
  Profile without_events() &&;

  /// Profile(source, options, context).without_events(), but the trace's CPU intervals are freed as
  /// soon as the analysis no longer reads them, before its result is assembled: a long trace's events
  /// and its result never stand in memory together (docs/design.md, rule 13). For writing reports
  /// without a Chrome trace (`regionprof analyze` without --trace).
  ///
  /// ```
  /// auto profile = regionprof::Profile::analyzed_without_events(regionprof::import_kineto_trace("t.json"), {});
  /// ```
  static Profile analyzed_without_events(trace source, analysis_options options, report_context context = {});

 private:
  trace source_;
  analysis_options options_;
  report_context context_;
  analysis_result result_;
};

/// Now as ISO-8601 UTC with seconds: `2026-12-05T18:00:00Z` (report `created_at`).
std::string utc_timestamp_now();

/// A profile and the file it came from (a saved report, or the trace `analyze` read), as merge_ranks and
/// diff_profiles name it in what they write.
///
/// ```
/// regionprof::named_profile baseline{"a.json", regionprof::read_profile("a.json")};
/// ```
struct named_profile {
  std::string file;
  Profile profile;
};

}  // namespace regionprof
