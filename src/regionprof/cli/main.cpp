// `regionprof`: dispatches to a subcommand, parses its command line and maps errors to exit codes
// (0 ok, 1 input error, 2 usage error; `run` passes the program's status through, `diff` exits 3 past
// its gate).
#include <array>
#include <exception>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "regionprof/cli/command_line.hpp"
#include "regionprof/cli/commands.hpp"
#include "regionprof/import/import.hpp"

#ifndef REGIONPROF_VERSION
#define REGIONPROF_VERSION "unknown"
#endif

namespace regionprof::cli {
namespace {

/// Every subcommand, in the order `regionprof --help` lists them.
constexpr std::array<command_entry, 5> all_commands{{
    {"analyze", "attribute a torch.profiler (Kineto) trace's CPU and device time to runs and regions",
     &make_analyze_command},
    {"run", "profile an unmodified program from outside (NVTX and CUDA injection)", &make_run_command},
    {"diff", "compare two saved profiles region by region (medians, Mann-Whitney U, verdicts)", &make_diff_command},
    {"report", "render a saved profile as Markdown, a terminal table or HTML", &make_report_command},
    {"merge", "join the profiles of a job's ranks into one job report (stragglers across ranks)",
     &make_merge_command},
}};

const command_entry* find_command(std::string_view name) {
  for (const command_entry& c : all_commands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

void print_help(std::ostream& out) {
  out << "usage: regionprof <command> [options...]\n"
         "       regionprof --help | --version\n\n"
         "regionprof tells you where each run of your program spends its time, region by region, on the\n"
         "CPU and on the GPU: for every measured run, the CPU time and device time each region owned and\n"
         "the residual that no region owned.\n\n"
         "Commands:\n";
  for (const command_entry& c : all_commands) {
    out << "  " << c.name << std::string(c.name.size() < 10 ? 10 - c.name.size() : 1, ' ') << c.summary << "\n";
  }
  out << "\n"
         "Run 'regionprof <command> --help' (or 'regionprof help <command>') for a command's options.\n"
         "Exit status: 0 success, 1 input error (names the file and what is wrong), 2 usage error;\n"
         "diff: 3 when B is slower beyond --fail-if-slower.\n";
}

int run_entry(const command_entry& entry, std::span<char* const> args) {
  const std::unique_ptr<command> c = entry.make();
  command_line line("regionprof " + std::string(entry.name));
  c->declare(line);
  try {
    if (!line.parse(args)) {
      std::cout << "usage: " << line.synopsis() << "\n\n" << c->description() << line.options_help() << c->epilog();
      return exit_ok;
    }
    return c->execute();
  } catch (const usage_error& e) {
    std::cerr << "regionprof " << entry.name << ": " << e.what() << "\n"
              << "usage: " << line.synopsis() << "\n"
              << "Try 'regionprof " << entry.name << " --help' for more information.\n";
    return exit_usage_error;
  } catch (const import_error& e) {
    std::cerr << "regionprof: " << e.what() << "\n";
    return exit_input_error;
  } catch (const std::exception& e) {
    std::cerr << "regionprof " << entry.name << ": " << e.what() << "\n";
    return exit_input_error;
  }
}

}  // namespace
}  // namespace regionprof::cli

int main(int argc, char** argv) {
  using namespace regionprof::cli;
  const std::span<char* const> args(argv + 1, argc > 0 ? static_cast<std::size_t>(argc - 1) : 0);
  if (args.empty()) {
    std::cerr << "regionprof: missing command\n";
    print_help(std::cerr);
    return exit_usage_error;
  }
  const std::string_view first = args[0];
  if (first == "-h" || first == "--help") {
    print_help(std::cout);
    return exit_ok;
  }
  if (first == "--version") {
    std::cout << "regionprof " << REGIONPROF_VERSION << "\n";
    return exit_ok;
  }
  if (first == "help") {
    if (args.size() == 1) {
      print_help(std::cout);
      return exit_ok;
    }
    const command_entry* c = find_command(args[1]);
    if (c == nullptr) {
      std::cerr << "regionprof: unknown command '" << args[1] << "'\n";
      return exit_usage_error;
    }
    static char help_flag[] = "--help";
    char* help_args[] = {help_flag};
    return run_entry(*c, help_args);
  }
  const command_entry* c = find_command(first);
  if (c == nullptr) {
    std::cerr << "regionprof: unknown command '" << first << "'\n"
              << "Try 'regionprof --help' for the list of commands.\n";
    return exit_usage_error;
  }
  return run_entry(*c, args.subspan(1));
}
