// Command-line plumbing shared by every `regionprof` subcommand: an argument cursor and the usage
// error (exit code 2).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace regionprof::cli {

/// Exit codes of every subcommand.
enum exit_code : int { exit_ok = 0, exit_input_error = 1, exit_usage_error = 2 };

/// A malformed command line: unknown flag, missing or bad value. main prints the message, the
/// subcommand's short usage and a hint to --help, and exits with exit_usage_error.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Walks a subcommand's arguments. Flags take their value as `--flag VALUE` or `--flag=VALUE`
/// (`-o VALUE` or `-oVALUE` for one-letter flags); `--` ends the flags.
class arguments {
 public:
  explicit arguments(std::span<char* const> args) : args_(args) {}

  bool done() const noexcept { return next_ >= args_.size(); }
  /// The current argument, not consumed.
  std::string_view peek() const { return args_[next_]; }
  /// Consumes the current argument.
  std::string_view take() { return args_[next_++]; }
  /// True once `--` was consumed: what follows is positional, even when it starts with '-'.
  bool only_positionals() const noexcept { return only_positionals_; }
  void end_of_flags() noexcept { only_positionals_ = true; }

  /// When the current argument is `name` (`--name`, `--name=VALUE`, or `-x`/`-xVALUE` for a
  /// one-letter name like "-o"), consumes it with its value and returns the value; throws
  /// usage_error when the value is missing. Otherwise returns nullopt and consumes nothing.
  std::optional<std::string> value_of(std::string_view name);
  /// When the current argument is the switch `name`, consumes it and returns true.
  bool switch_of(std::string_view name);

 private:
  std::span<char* const> args_;
  std::size_t next_ = 0;
  bool only_positionals_ = false;
};

/// Parses a non-negative decimal integer in [min, max]; throws usage_error naming `flag`.
std::size_t parse_count(std::string_view flag, std::string_view text, std::size_t min, std::size_t max);

}  // namespace regionprof::cli
