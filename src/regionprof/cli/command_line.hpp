// One subcommand's command line, declared once: its options (with their help) and its operands. The
// parser, the synopsis and the option list of --help all come from the declarations, so they cannot
// drift apart.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace regionprof::cli {

/// Exit codes of every subcommand (`run` passes the program's own status through instead of exit_ok).
enum exit_code : int { exit_ok = 0, exit_input_error = 1, exit_usage_error = 2 };

/// A malformed command line: unknown option, missing or bad value, missing or extra operand. main
/// prints the message, the subcommand's synopsis and a hint to --help, and exits with exit_usage_error.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The options and operands of one subcommand.
///
/// Options take their value as `--flag VALUE` or `--flag=VALUE` (`-o VALUE` or `-oVALUE` for a
/// one-letter flag); `-h` and `--help` are always declared; `--` ends the options. A handler that
/// throws std::invalid_argument (regionprof::options::setting_error) makes its what() a usage error.
///
/// ```
/// command_line line("regionprof analyze");
/// std::string trace;
/// line.section("Outputs")
///     .value("-o", "OUT.json", "Write the JSON report to OUT.json.",
///            [&](std::string_view, std::string_view path) { json_path = path; })
///     .operand("TRACE", "TRACE (a .json or .json.gz trace)", [&](std::string_view path) { trace = path; });
/// if (!line.parse(args)) std::cout << line.help();  // -h or --help was given
/// ```
class command_line {
 public:
  /// Receives the option's value and the option's name for messages ("option --row-limit").
  using value_handler = std::function<void(std::string_view setting, std::string_view value)>;

  /// `invocation` starts the synopsis, e.g. "regionprof analyze".
  explicit command_line(std::string invocation) : invocation_(std::move(invocation)) {}

  /// Options declared from now on are listed under `title` in --help (an existing section is reused).
  command_line& section(std::string_view title);
  /// An option with a value, e.g. value("--row-limit", "N", ...). `help` may hold several lines.
  command_line& value(std::string_view name, std::string_view value_name, std::string_view help, value_handler apply);
  /// Like value(), shown as repeatable (`[--region REGEX]...`): every occurrence calls `apply`.
  command_line& repeated(std::string_view name, std::string_view value_name, std::string_view help,
                         value_handler apply);
  /// An option without a value; `--name=VALUE` is a usage error.
  command_line& flag(std::string_view name, std::string_view help, std::function<void()> apply);
  /// Exactly one operand; a second one is a usage error, none is "missing <missing>".
  command_line& operand(std::string_view name, std::string_view missing, std::function<void(std::string_view)> apply);
  /// Exactly `count` operands, each passed to `apply` in order; `name` stands for all of them in the
  /// synopsis (`A.json B.json`). Fewer is "missing <missing>", more a usage error.
  command_line& operands(std::string_view name, std::string_view missing, std::size_t count,
                         std::function<void(std::string_view)> apply);
  /// One or more operands (shown as `NAME...`), each passed to `apply` in order; none is "missing <missing>".
  command_line& operands(std::string_view name, std::string_view missing, std::function<void(std::string_view)> apply);
  /// A command to run, e.g. command("PROGRAM", "[ARGS...]", ...): the first operand and every word after
  /// it, options or not, in order; none is "missing <missing>".
  command_line& command(std::string_view name, std::string_view arguments, std::string_view missing,
                        std::vector<std::string>& words);

  /// Parses the arguments after the subcommand's name, calling the handlers in command-line order.
  /// Returns false, without checking the operands, when -h or --help comes before any error.
  /// Throws usage_error.
  bool parse(std::span<char* const> args) const;

  /// "regionprof analyze [--run-marker REGEX] ... TRACE", wrapped to fit 100 columns after "usage: ".
  std::string synopsis() const;
  /// The options, section by section, each with its help aligned in one column, then -h, --help.
  std::string options_help() const;

 private:
  struct option {
    std::string name;
    std::string value_name;  ///< empty: a flag
    std::string help;
    bool repeats = false;
    value_handler apply;
  };
  struct option_section {
    std::string title;
    std::vector<option> options;
  };

  option& add(std::string_view name, std::string_view value_name, std::string_view help);
  /// When `arg` (at args[next]) is one of the options, applies it and advances `next` past it and its value.
  bool apply_option(std::span<char* const> args, std::size_t& next) const;

  std::string invocation_;
  std::vector<option_section> sections_;
  std::size_t current_section_ = 0;
  std::string operand_name_;
  std::string operand_arguments_;  ///< after a command operand: "[ARGS...]"
  std::string missing_;
  std::size_t operand_count_ = 1;  ///< operands expected (operand: 1)
  bool operand_repeats_ = false;  ///< operands(): any number from 1
  std::function<void(std::string_view)> apply_operand_;
  std::vector<std::string>* command_words_ = nullptr;  ///< set for a command operand
};

}  // namespace regionprof::cli
