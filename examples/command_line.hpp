// The examples' command lines: one way to report a usage error, read a flag's value and a positive number.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

namespace example {

/// One program's command line, read flag by flag.
///
/// ```
/// example::command_line line{"torch_mlp", "[--runs N]", argc, argv};
/// while (line.next()) {
///   if (line.flag() == "--runs") runs = line.positive();
///   else line.fail("unknown argument '" + std::string(line.flag()) + "'");
/// }
/// ```
class command_line {
 public:
  command_line(const char* program, const char* synopsis, int argc, char** argv)
      : program_(program), synopsis_(synopsis), argc_(argc), argv_(argv) {}

  /// Moves to the next argument; false after the last.
  bool next() { return ++index_ < argc_; }
  /// The current argument.
  std::string_view flag() const { return argv_[index_]; }
  /// The argument after the current flag (consumed), or a usage error.
  std::string_view value() {
    if (index_ + 1 >= argc_) fail(std::string(flag()) + " needs a value");
    return argv_[++index_];
  }
  /// The current flag's value as an integer above 0, or a usage error.
  std::size_t positive() {
    const std::string_view name = flag();
    const std::string_view text = value();
    std::size_t number = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (error != std::errc{} || end != text.data() + text.size() || number == 0) {
      fail(std::string(name) + " needs a positive integer, got '" + std::string(text) + "'");
    }
    return number;
  }
  /// Prints `<program>: <problem>` and the usage line to stderr, and exits with status 2.
  [[noreturn]] void fail(const std::string& problem) const {
    std::fprintf(stderr, "%s: %s\nusage: %s %s\n", program_, problem.c_str(), program_, synopsis_);
    std::exit(2);
  }

 private:
  const char* program_;
  const char* synopsis_;
  int argc_;
  char** argv_;
  int index_ = 0;
};

}  // namespace example
