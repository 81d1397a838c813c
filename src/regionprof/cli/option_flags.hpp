// The command's flags of the user options, made from the option table (options/option_table.hpp): each
// option a subcommand shows becomes its flag, with its value name, help and checks, so `analyze` and `run`
// (and the injection library, through the environment) spell and check every option the same way.
#pragma once

#include <string>
#include <vector>

#include "regionprof/cli/command_line.hpp"
#include "regionprof/options/option_table.hpp"

namespace regionprof::cli {

/// Declares on `line` the flag of every option `surface` shows (options::cli_analyze or cli_run): the
/// output paths in the section "Outputs", the others in "Runs and regions", in declaration order. Each
/// sets its member of `options` when given (a repeated --region: the rules given so far, replacing the
/// defaults); a bad value is a usage error naming the flag.
///
/// ```
/// regionprof::profile_options options = regionprof::options::command_defaults();
/// command_line line("regionprof analyze");
/// declare_option_flags(line, options, regionprof::options::cli_analyze);
/// ```
void declare_option_flags(command_line& line, profile_options& options, options::option_surface surface);

/// What the output flags ask to be written (options::command_outputs of -o, --markdown, --trace).
output_set outputs_of(const profile_options& options);

}  // namespace regionprof::cli
