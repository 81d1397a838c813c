// The flags every report-producing subcommand shares (`analyze`, `run`, and later `diff`, `report`,
// `merge`): attribution rules and report outputs, declared once so their spelling, help and
// validation never differ between subcommands.
#pragma once

#include "regionprof/cli/command_line.hpp"
#include "regionprof/options/report_settings.hpp"

namespace regionprof::cli {

/// Declares --run-marker, --region, --cross-thread and --row-limit (section "Runs and regions") and
/// -o, --markdown and --trace (section "Outputs") on `line`, each setting `settings` when given.
///
/// ```
/// report_settings settings;
/// command_line line("regionprof analyze");
/// declare_report_options(line, settings);
/// ```
void declare_report_options(command_line& line, report_settings& settings);

}  // namespace regionprof::cli
