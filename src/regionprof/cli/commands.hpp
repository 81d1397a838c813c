// The subcommands of `regionprof`. Each lives in its own <name>_command.cpp and is listed once in
// main.cpp's table; main owns dispatch, --help/--version, the parsing of every command line and the
// mapping of errors to exit codes.
#pragma once

#include <memory>
#include <string_view>

#include "regionprof/cli/command_line.hpp"

namespace regionprof::cli {

/// One subcommand: declares its command line, then runs with what the command line set.
///
/// ```
/// class hello_command final : public command {
///   std::string name_;
///  public:
///   void declare(command_line& line) override {
///     line.operand("NAME", "NAME to greet", [this](std::string_view n) { name_ = n; });
///   }
///   std::string_view description() const override { return "Greets NAME.\n"; }
///   std::string_view epilog() const override { return ""; }
///   int execute() override { std::cout << "hello " << name_ << "\n"; return exit_ok; }
/// };
/// ```
class command {
 public:
  virtual ~command() = default;
  /// Declares the options and operands on `line`, their handlers bound to this object.
  virtual void declare(command_line& line) = 0;
  /// --help's text before the option list (what the command does), ending with a blank line.
  virtual std::string_view description() const = 0;
  /// --help's text after the option list (exit status, examples), starting with a blank line.
  virtual std::string_view epilog() const = 0;
  /// Runs once the command line parsed; returns the exit code. Throws usage_error (exit 2),
  /// regionprof::import_error or std::exception (exit 1).
  virtual int execute() = 0;
};

struct command_entry {
  std::string_view name;     ///< `regionprof <name> ...`
  std::string_view summary;  ///< one line for `regionprof --help`
  std::unique_ptr<command> (*make)();
};

std::unique_ptr<command> make_analyze_command();  // analyze_command.cpp
std::unique_ptr<command> make_run_command();      // run_command.cpp
std::unique_ptr<command> make_diff_command();     // diff_command.cpp
std::unique_ptr<command> make_report_command();   // report_command.cpp
std::unique_ptr<command> make_merge_command();    // merge_command.cpp

}  // namespace regionprof::cli
