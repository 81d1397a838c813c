// The rule settings every report-producing part of regionprof shares (`analyze`, `run`, and the
// injection library, which reads them from the environment), validated in one place so their meaning
// and messages never drift apart, and the output set they ask for. Knows no command line.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/analysis/run_marker.hpp"
#include "regionprof/output/output.hpp"

namespace regionprof::cli {

/// A setting with an invalid value. what() names the setting and the problem, e.g.
/// "option --run-marker: run marker '[step': invalid regex (RE2 syntax; ...): ...".
class setting_error : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The one whole-number parser of the CLI and the injection library (flags and variables alike).
/// Parses a non-negative decimal integer in [min, max]; throws setting_error
/// "<setting> needs a whole number from <min> to <max>, got '<text>'".
///
/// ```
/// parse_count("option --row-limit", "20", 1, 1'000'000);  // 20
/// ```
std::size_t parse_count(std::string_view setting, std::string_view text, std::size_t min, std::size_t max);

/// The attribution rules and report outputs, as the flags or variables set them. Each setter
/// validates its value and throws setting_error prefixed with `setting` (the flag or variable name,
/// as messages show it).
///
/// ```
/// report_settings s;
/// s.set_run_marker("option --run-marker", R"(ProfilerStep#\d+)");
/// s.add_region("option --region", "## (.*) ##=phase");  // replaces the default region rules
/// regionprof::analyze(trace, s.analysis);
/// ```
struct report_settings {
  analysis_options analysis;                 ///< what the settings below make of the defaults
  std::optional<std::string> run_marker;     ///< the --run-marker regex as given
  std::vector<std::string> regions;          ///< every --region REGEX[=KIND] as given, in order
  std::optional<std::size_t> row_limit;      ///< --row-limit as given
  std::optional<std::string> graph_attribution;  ///< --graph-attribution as given (capture or launch)
  std::optional<std::string> json_path;      ///< -o
  std::optional<std::string> markdown_path;  ///< --markdown
  std::optional<std::string> trace_path;     ///< --trace

  /// A regex over every domain (Kineto annotations and NVTX ranges alike) whose matches mark the runs
  /// (regionprof::run_marker_rule).
  void set_run_marker(std::string_view setting, std::string_view regex);
  /// REGEX[=KIND] (regionprof::parse_region_arg): the first call drops the default region rules.
  void add_region(std::string_view setting, std::string_view arg);
  void set_row_limit(std::string_view setting, std::string_view text);  ///< 1 to 1'000'000
  void set_warmup_runs(std::string_view setting, std::string_view text);  ///< 0 to 1'000'000: skip_runs
  /// `capture` or `launch` (regionprof::parse_graph_attribution; docs/design.md, rule 15).
  void set_graph_attribution(std::string_view setting, std::string_view mode);

  /// What the flags ask to be written: JSON to -o, Markdown to --markdown, the trace to --trace, and
  /// the Markdown to standard output when there is no -o.
  output_set outputs() const;
};

}  // namespace regionprof::cli
