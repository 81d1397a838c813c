// Profile: a trace, the analysis of it, and its reports in one value.
#pragma once

#include <cstddef>
#include <string>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/trace.hpp"

namespace regionprof {

/// The one result model: a profile's analysis (analysis_result) with what the writers need besides
/// (the options it was analysed with, the report context, and the trace: its events for the Chrome
/// trace, its target for the reports). What the analysis produces, what read_profile reads back from a
/// saved JSON report, and what merge_ranks, diff_profiles, `regionprof report` and Python take: one type,
/// so a read-back profile writes the same JSON, Markdown, HTML and terminal table as the live one.
///
/// ```
/// regionprof::Profile live(std::move(trace), regionprof::analysis_options{});
/// live.write_json("profile.json");
/// regionprof::Profile saved = regionprof::read_profile("profile.json");  // regionprof/saved/profile_reader.hpp
/// assert(saved.json() == live.json() && saved.markdown() == live.markdown());
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

  /// The same profile with a trace that keeps only what the reports read (target_type,
  /// target_extra_json, device_tracing): its reports are unchanged, its Chrome trace is empty. For
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

  std::string json() const;
  std::string markdown(const markdown_options& markdown = {}) const;
  std::string html() const;
  std::string terminal_table(bool colour, std::size_t width = 100) const;
  std::string chrome_trace() const;

  /// Write to `path` via write_outputs (output.hpp: %r %l %h %p expanded, replaced atomically); throw naming it.
  void write_json(const std::string& path) const;
  void write_markdown(const std::string& path, const markdown_options& markdown = {}) const;
  void write_trace(const std::string& path) const;

 private:
  trace source_;
  analysis_options options_;
  report_context context_;
  analysis_result result_;
};

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
