// `regionprof analyze`: regionprof's attribution over a torch.profiler (Kineto) trace.
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "arguments.hpp"
#include "commands.hpp"
#include "regionprof/import.hpp"
#include "regionprof/profile.hpp"
#include "report_options.hpp"

namespace regionprof::cli {
namespace {

constexpr std::string_view analyze_usage =
    "regionprof analyze [--run-marker REGEX] [--region REGEX[=KIND]]... [--cross-thread]\n"
    "                          [--row-limit N] [-o OUT.json] [--markdown OUT.md] [--trace OUT.json] TRACE";

void print_help(std::ostream& out) {
  out << "usage: " << analyze_usage << "\n\n"
      << R"(Applies regionprof's attribution to a trace captured elsewhere: a torch.profiler (Kineto)
Chrome trace, plain JSON or gzip (.json.gz; told apart by content, not name), either an object with
"traceEvents" or a bare list of events. For every run it reports the CPU time and device time each
region owned and the residual no region owned, plus key averages and warnings.

What is read: complete events ("ph": "X") of cat cpu_op, user_annotation, python_function,
cuda_runtime and cuda_driver are CPU intervals on their (pid, tid) thread; kernel, gpu_memcpy and
gpu_memset are device work, owned through args.correlation by the API call that launched it.
Timestamps are converted from their text to exact nanoseconds. Other categories are ignored and
counted in a warning.

)" << report_flags_help()
      << R"(
  -h, --help            Show this help.

Exit status:
  0  the report was written
  1  input error: the trace cannot be read (the message names the file and what is wrong, with
     line, column and byte offset for JSON errors), or an output file cannot be written
  2  usage error: unknown option, missing or invalid value (regex, number), no TRACE

Examples:
  regionprof analyze --run-marker 'ProfilerStep#\d+' --region '## (.*) ##=phase' \
      sampled_rank0_kineto.json.gz
  regionprof analyze --run-marker '\[param\|.*\|measure\|forward\]' --region 'aten::(.*)=op' \
      --cross-thread -o profile.json --markdown profile.md alexnet_a100_kineto.json.gz
)";
}

int analyze_main(std::span<char* const> argv) {
  arguments args(argv);
  report_options options;
  std::optional<std::string> trace_path;
  while (!args.done()) {
    if (!args.only_positionals()) {
      const std::string_view arg = args.peek();
      if (arg == "-h" || arg == "--help") {
        print_help(std::cout);
        return exit_ok;
      }
      if (arg == "--") {
        args.take();
        args.end_of_flags();
        continue;
      }
      if (parse_report_flag(args, options)) continue;
      if (arg.size() > 1 && arg.front() == '-') throw usage_error("unknown option '" + std::string(arg) + "'");
    }
    const std::string_view path = args.take();
    if (trace_path) {
      throw usage_error("one TRACE only, got '" + *trace_path + "' and '" + std::string(path) + "'");
    }
    trace_path = std::string(path);
  }
  if (!trace_path) throw usage_error("missing TRACE (a torch.profiler trace, .json or .json.gz)");

  trace imported = import_kineto_trace(*trace_path);
  const Profile profile(std::move(imported), options.analysis, report_context{});
  write_reports(profile, options, std::cout);
  return exit_ok;
}

}  // namespace

const command analyze_command{
    "analyze",
    "attribute a torch.profiler (Kineto) trace's CPU and device time to runs and regions",
    analyze_usage,
    analyze_main,
};

}  // namespace regionprof::cli
