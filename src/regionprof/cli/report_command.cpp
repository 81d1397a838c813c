// `regionprof report PROFILE.json`: renders a saved profile as Markdown, a terminal table or HTML, or a
// saved job report (`regionprof merge -o`) as its Markdown.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "regionprof/cli/commands.hpp"
#include "regionprof/job/job.hpp"
#include "regionprof/options/option_table.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/saved/profile_reader.hpp"

namespace regionprof::cli {
namespace {

class report_command final : public command {
 public:
  void declare(command_line& line) override {
    line.section("Outputs")
        .value("--format", "FORMAT",
               "markdown (default), table (a terminal view: aligned columns and a\n"
               "bar per region; colour only on a terminal and without NO_COLOR), or\n"
               "html (one self-contained page: charts, tables, warnings).",
               [this](std::string_view setting, std::string_view value) {
                 if (value == "markdown") {
                   format_ = output_format::markdown;
                 } else if (value == "table") {
                   format_ = output_format::terminal_table;
                 } else if (value == "html") {
                   format_ = output_format::html;
                 } else {
                   throw usage_error("option " + std::string(setting) + ": expected markdown, table or html, got '" +
                                     std::string(value) + "'");
                 }
               })
        .value("--runs-detail", "N",
               "Markdown: detailed tables for the first N runs (default: every run\n"
               "when there are at most 5, else none).",
               [this](std::string_view setting, std::string_view value) {
                 runs_detail_ = options::parse_count(setting, value, 0, 1'000'000'000);
               })
        .value("-o", "OUT", "Write to OUT (default: standard output).",
               [this](std::string_view, std::string_view path) { output_path_ = path; });
    line.operand("PROFILE.json", "PROFILE.json (a saved profile, or a job report)",
                 [this](std::string_view path) { profile_path_ = path; });
  }

  std::string_view description() const override {
    return R"(Renders a saved profile (regionprof's JSON, or the reference module's, which has the same
schema) without the trace it came from: the Markdown report, a terminal table, or an HTML page. A job
report (regionprof merge -o) renders as its Markdown view, stragglers first.

)";
  }

  std::string_view epilog() const override {
    return R"(
Exit status:
  0  the report was written
  1  input error: PROFILE.json is not a profile or job report (the message names it), a job report
     with --format table or html, or OUT cannot be written
  2  usage error

Examples:
  regionprof report profile.json --format table
  regionprof report profile.json --format html -o report.html
)";
  }

  int execute() override {
    const saved_report saved = read_saved_report(profile_path_);
    output_set outputs;
    if (output_path_) {
      outputs.add(format_, *output_path_);
    } else {
      outputs.to_stdout = format_;
    }
    if (saved.job) {
      if (format_ != output_format::markdown) {
        throw std::runtime_error(profile_path_ + " is a job report: it renders as Markdown (--format markdown); " +
                                 "--format table and html render one profile, e.g. a rank's own");
      }
      write_outputs(outputs, job_writers(*saved.job), std::cout);
      return exit_ok;
    }
    const Profile& profile = *saved.profile;
    const char* no_color = std::getenv("NO_COLOR");
    const bool colour = !output_path_ && isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || *no_color == '\0');
    output_writers writers = profile_writers(profile, markdown_options{runs_detail_});
    writers.terminal_table = [&](std::ostream& out) { out << to_terminal_table(profile, colour); };
    write_outputs(outputs, writers, std::cout);
    return exit_ok;
  }

 private:
  output_format format_ = output_format::markdown;
  std::optional<std::size_t> runs_detail_;
  std::optional<std::string> output_path_;
  std::string profile_path_;
};

}  // namespace

std::unique_ptr<command> make_report_command() { return std::make_unique<report_command>(); }

}  // namespace regionprof::cli
