// The subcommands of `regionprof`. Each lives in its own <name>_command.cpp and is listed once in
// main.cpp's table; main owns dispatch, --help/--version and the mapping of errors to exit codes.
#pragma once

#include <span>
#include <string_view>

namespace regionprof::cli {

struct command {
  std::string_view name;     ///< `regionprof <name> ...`
  std::string_view summary;  ///< one line for `regionprof --help`
  std::string_view usage;    ///< the synopsis, printed with usage errors
  /// Runs with the arguments after the subcommand's name; returns the exit code. Throws
  /// usage_error (exit 2), regionprof::import_error or std::exception (exit 1).
  int (*main)(std::span<char* const> args);
};

extern const command analyze_command;
extern const command run_program_command;  // `regionprof run` (run_command.cpp)

}  // namespace regionprof::cli
