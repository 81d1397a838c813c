// `regionprof analyze`: regionprof's attribution over a torch.profiler (Kineto) trace.
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/cli/commands.hpp"
#include "regionprof/cli/job_outputs.hpp"
#include "regionprof/cli/option_flags.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/job/job.hpp"
#include "regionprof/model/profile.hpp"
#include "regionprof/output/output.hpp"

namespace regionprof::cli {
namespace {

class analyze_command final : public command {
 public:
  void declare(command_line& line) override {
    declare_option_flags(line, options_, options::cli_analyze);
    line.value("--runs-detail", "N",
               "Markdown: detailed tables for the first N runs (default: every run\n"
               "when there are at most 5, else none; the summary covers all).",
               [this](std::string_view setting, std::string_view value) {
                 markdown_.runs_detail = options::parse_count(setting, value, 0, 1'000'000'000);
               });
    line.operands("TRACE", "TRACE (a torch.profiler trace, .json or .json.gz)",
                  [this](std::string_view path) { trace_paths_.emplace_back(path); });
  }

  std::string_view description() const override {
    return R"(Applies regionprof's attribution to a trace captured elsewhere: a torch.profiler (Kineto)
Chrome trace, plain JSON or gzip (.json.gz; told apart by content, not name), either an object with
"traceEvents" or a bare list of events. For every run it reports the CPU time and device time each
region owned and the residual no region owned, plus key averages and warnings.

What is read: complete events ("ph": "X") of cat cpu_op, user_annotation, python_function,
cuda_runtime and cuda_driver are CPU intervals on their (pid, tid) thread; kernel, gpu_memcpy and
gpu_memset are device work, owned through args.correlation by the API call that launched it.
PyTorch 1.8/1.9 traces (Operator, Runtime, Kernel, Memcpy, Memset) and ROCm traces read the same.
torch.profiler's [memory] and [OutOfMemory] instants (profile_memory=True) are allocations, frees and
failed allocations on the CPU and CUDA devices, on their thread. Timestamps are converted from their
text to exact nanoseconds. Other categories are not read and are counted in an IGNORED_EVENTS warning.
A trace without device ops or device properties is CPU-only.

Several TRACEs (one per rank of a distributed job) give one job report: each rank's full report, and
per run and region the median, min, max, slowest rank and imbalance across ranks (the stragglers).
A trace's rank is Kineto's distributedInfo.rank when every trace has a distinct one, else its place
on the command line. The traces are analysed in parallel, one thread per core.

)";
  }

  std::string_view epilog() const override {
    return R"(
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

  int execute() override {
    if (trace_paths_.size() > 1) {
      const job_report job = merge_ranks(analyze_traces(trace_paths_, options_.analysis));
      write_outputs(outputs_of(options_), job_writers(job), std::cout);
      return exit_ok;
    }
    const output_set outputs = outputs_of(options_);
    trace imported = import_kineto_trace(trace_paths_.front());
    // Only the Chrome trace reads the events: without one, they are freed before the result is built.
    const Profile profile = outputs.has(output_format::chrome_trace)
                                ? Profile(std::move(imported), options_.analysis, report_context{})
                                : Profile::analyzed_without_events(std::move(imported), options_.analysis);
    write_outputs(outputs, profile_writers(profile, markdown_), std::cout);
    return exit_ok;
  }

 private:
  profile_options options_ = options::command_defaults();
  markdown_options markdown_;
  std::vector<std::string> trace_paths_;
};

}  // namespace

std::unique_ptr<command> make_analyze_command() { return std::make_unique<analyze_command>(); }

}  // namespace regionprof::cli
