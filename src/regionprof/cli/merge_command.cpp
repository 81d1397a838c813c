// `regionprof merge`: the saved profiles of a job's ranks -> one job report.
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "regionprof/cli/commands.hpp"
#include "regionprof/job/job.hpp"
#include "regionprof/options/option_table.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/saved/profile_reader.hpp"

namespace regionprof::cli {
namespace {

class merge_command final : public command {
 public:
  void declare(command_line& line) override {
    line.section("Outputs")
        .value("-o", "JOB.json",
               "Write the job report (JSON, kind regionprof_job) to JOB.json. Without -o,\n"
               "the Markdown view goes to standard output.",
               [this](std::string_view, std::string_view path) { json_ = path; })
        .value("--markdown", "OUT.md", "Write the job's Markdown view (stragglers first) to OUT.md.",
               [this](std::string_view, std::string_view path) { markdown_ = path; })
        .value("--trace", "OUT.json",
               "Write a Chrome trace with one process per rank, each rank's runs aligned\n"
               "at their starts.",
               [this](std::string_view, std::string_view path) { trace_ = path; });
    line.operands("PROFILE", "PROFILE (a JSON profile of regionprof run, analyze or the harness)",
                  [this](std::string_view path) { profile_paths_.emplace_back(path); });
  }

  std::string_view description() const override {
    return R"(Joins the JSON profiles of the ranks of one job (e.g. the prof-%r.json files of
'mpirun -np N regionprof run -o prof-%r.json -- PROGRAM') into one job report: each rank's full
profile, and per run index, region and time domain the median, min, max, slowest rank and
imbalance (max / median) across ranks: the stragglers. A profile's rank is its target.rank (or
target.distributedInfo.rank) when every profile has a distinct one, else its place on the command
line. Ranks with different run counts or regions are merged by run index with a RANK_MISMATCH
warning, never dropped.

)";
  }

  std::string_view epilog() const override {
    return R"(
Exit status:
  0  the job report was written
  1  input error: a profile cannot be read (the message names the file, the key and what is
     wrong), or an output file cannot be written
  2  usage error: unknown option, missing value, no PROFILE

Examples:
  mpirun -np 2 regionprof run -o 'prof-%r.json' -- build/bin/nvtx_app
  regionprof merge prof-0.json prof-1.json -o job.json --markdown job.md --trace job_trace.json
)";
  }

  int execute() override {
    std::vector<named_profile> profiles;
    profiles.reserve(profile_paths_.size());
    for (const std::string& path : profile_paths_) profiles.push_back({path, read_profile(path)});
    const job_report job = merge_ranks(std::move(profiles));
    write_outputs(options::command_outputs(json_, markdown_, trace_), job_writers(job), std::cout);
    return exit_ok;
  }

 private:
  std::optional<std::string> json_;
  std::optional<std::string> markdown_;
  std::optional<std::string> trace_;
  std::vector<std::string> profile_paths_;
};

}  // namespace

std::unique_ptr<command> make_merge_command() { return std::make_unique<merge_command>(); }

}  // namespace regionprof::cli
