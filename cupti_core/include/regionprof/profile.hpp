// Profile: a trace, the analysis of it, and its reports in one value.
#pragma once

#include <string>

#include "regionprof/analysis.hpp"
#include "regionprof/report.hpp"
#include "regionprof/trace.hpp"

namespace regionprof {

/// The result of profiling: the trace it was computed from, its analysis, and the reports.
///
/// ```
/// regionprof::Profile profile(std::move(trace), regionprof::analysis_options{});
/// std::cout << profile.markdown();
/// profile.write_json("profile.json");
/// ```
class Profile {
 public:
  /// Analyses `source` with `options`; see regionprof::analyze.
  Profile(trace source, analysis_options options, report_context context = {});

  const trace& source() const noexcept { return source_; }
  const analysis_options& options() const noexcept { return options_; }
  const report_context& context() const noexcept { return context_; }
  const analysis_result& result() const noexcept { return result_; }

  std::string json() const;
  std::string markdown(const markdown_options& markdown = {}) const;
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

}  // namespace regionprof
