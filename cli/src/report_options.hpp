// The flags every report-producing subcommand shares (`analyze`, and `run` later): attribution rules
// and report outputs, parsed in one place so their spelling and meaning never drift apart.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "arguments.hpp"
#include "regionprof/analysis.hpp"
#include "regionprof/profile.hpp"

namespace regionprof::cli {

/// What the rule and output flags say.
struct report_options {
  analysis_options analysis;              ///< run marker, region rules, cross_thread, row_limit
  bool custom_regions = false;            ///< --region given: its rules replace the defaults
  std::optional<std::string> json_path;       ///< -o
  std::optional<std::string> markdown_path;   ///< --markdown
  std::optional<std::string> trace_path;      ///< --trace
};

/// If the current argument is one of the shared flags (--run-marker, --region, --cross-thread,
/// --row-limit, -o, --markdown, --trace), consumes it with its value into `options` and returns
/// true. Throws usage_error for a missing or invalid value (a bad regex, a bad number).
bool parse_report_flag(arguments& args, report_options& options);

/// The --help lines of the shared flags.
std::string_view report_flags_help();
/// The one-line synopsis of the shared flags.
std::string_view report_flags_synopsis();

/// Writes the outputs `options` asks for: JSON to -o, Markdown to --markdown, the trace to --trace,
/// and the Markdown to `out` when there is no -o. Throws std::runtime_error naming a file that
/// cannot be written.
void write_reports(const Profile& profile, const report_options& options, std::ostream& out);

}  // namespace regionprof::cli
