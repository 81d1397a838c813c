// `regionprof diff A B`: per region and time domain, A's and B's medians, the change, the p-value and a
// verdict; `--fail-if-slower PCT` gates CI (exit 3). A side is one profile, a directory of them or a
// quoted pattern naming several (one per process; docs/design.md, rule 17).
#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "regionprof/cli/commands.hpp"
#include "regionprof/cli/number_option.hpp"
#include "regionprof/compare/profile_diff.hpp"
#include "regionprof/output/output.hpp"
#include "regionprof/saved/profile_reader.hpp"

namespace regionprof::cli {
namespace {

namespace fs = std::filesystem;

/// The files a quoted shell pattern `pattern` names (glob(3): `*`, `?`, `[...]`), sorted. Throws naming the
/// pattern when nothing matches.
std::vector<std::string> expand_pattern(const std::string& pattern) {
  glob_t matches{};
  const int result = glob(pattern.c_str(), GLOB_ERR, nullptr, &matches);
  std::vector<std::string> files(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
  globfree(&matches);
  if (result == GLOB_ABORTED) throw std::runtime_error("'" + pattern + "': cannot expand this pattern (a directory in it cannot be read)");
  if (result == GLOB_NOSPACE) throw std::runtime_error("'" + pattern + "': out of memory expanding this pattern");
  if (files.empty()) throw std::runtime_error("'" + pattern + "': no file matches this pattern");
  return files;  // glob(3) sorts them (no GLOB_NOSORT)
}

/// A side: the profile `path`; every `*.json` file directly in the directory `path` (not starting with
/// `.`, so no hidden temporary), by name; or, where `path` names nothing and holds `*`, `?` or `[`, every
/// file the pattern matches (several files a side without a directory: 'base/prof-*.json'). Throws
/// naming the directory or pattern when it gives no profile.
std::vector<named_profile> read_side(const std::string& path) {
  std::error_code error;
  std::vector<std::string> files;
  if (!fs::exists(path, error) && path.find_first_of("*?[") != std::string::npos) {
    files = expand_pattern(path);
  } else if (!fs::is_directory(path, error)) {
    return {named_profile{path, read_profile(path)}};
  } else {
    for (const fs::directory_entry& entry : fs::directory_iterator(path)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && !name.starts_with('.') && name.ends_with(".json")) files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) throw std::runtime_error(path + ": a directory without a profile (no *.json file in it)");
  }
  std::vector<named_profile> side;
  for (const std::string& file : files) side.push_back({file, read_profile(file)});
  return side;
}

class diff_command final : public command {
 public:
  void declare(command_line& line) override {
    line.section("Comparison")
        .value("--fail-if-slower", "PCT",
               "Exit 3 when a region present in both profiles, or a run total, is\n"
               "slower by more than PCT % of A's median with p < alpha.",
               [this](std::string_view setting, std::string_view text) {
                 options_.fail_if_slower = parse_number(setting, text, 0.0, 1e9, "a percentage from 0");
               })
        .value("--fail-if-more-memory", "PCT",
               "Exit 3 when a region present in both profiles has a median peak\n"
               "allocated (per device, docs/design.md rule 21) more by more than\n"
               "PCT % of A's with p < alpha (its own Holm family with processes).",
               [this](std::string_view setting, std::string_view text) {
                 options_.fail_if_more_memory = parse_number(setting, text, 0.0, 1e9, "a percentage from 0");
               })
        .value("--alpha", "P",
               "Significance level, 0 < P <= 1: of each U test with one process a side\n"
               "(default 0.01); family-wise over the gated entries with several (default 0.05).",
               [this](std::string_view setting, std::string_view text) {
                 options_.alpha = parse_number(setting, text, 1e-300, 1.0, "a number above 0, at most 1");
               });
    line.section("Outputs")
        .value("-o", "DIFF.json", "Write the diff as JSON.",
               [this](std::string_view, std::string_view path) { json_path_ = path; })
        .value("--markdown", "OUT.md", "Write the Markdown diff to OUT.md (default: standard output).",
               [this](std::string_view, std::string_view path) { markdown_path_ = path; })
        .value("--html", "OUT.html", "Write a self-contained HTML page: A against B per region.",
               [this](std::string_view, std::string_view path) { html_path_ = path; });
    line.operands("A B", "A and B (each a saved profile, a directory of profiles or a quoted pattern)", 2,
                  [this](std::string_view path) { (a_path_ ? b_path_ : a_path_) = std::string(path); });
  }

  std::string_view description() const override {
    return R"(Compares two sides of saved profiles (regionprof's JSON, or the reference module's, which has
the same schema): A is the baseline, B the candidate. A side is one profile, or a directory whose
*.json files are one profile per process of the same program ('regionprof run --processes N -o
DIR/prof-%n.json' writes one), or a quoted pattern such as 'base-*.json' naming several files. For every region and time domain (cpu_time_us, device_time_us when
all have device data, off_thread_cpu_time_us; memory per device, allocated_bytes:DEVICE and
peak_allocated_bytes:DEVICE, in bytes) and for the run totals it reports A's and B's medians,
the change in the domain's unit and in %, a p-value and a verdict. With 2 or more processes a side the test is
Student's t (pooled) over the log of each process's median, one-sided in the change's direction and
Holm-adjusted over every gated entry (alpha 0.05 family-wise by default), so the gate accounts for
process-to-process noise; with one process on a side it is the Mann-Whitney U
test over the per-run values, and the warning ONE_PROCESS_PER_SIDE says its verdicts cannot
separate a change from that noise. Verdicts:
  unchanged     the medians are equal
  faster        p < alpha and B's median is below A's
  slower        p < alpha and B's median is above A's
  within noise  the medians differ, p >= alpha
  less, more    memory: p < alpha and B's median is below / above A's
Regions only in B are "new", only in A "vanished" (never gated). The Markdown goes to standard
output unless --markdown, -o or --html is given.

)";
  }

  std::string_view epilog() const override {
    return R"(
Exit status:
  0  B is the same or faster (or slower only within the gate)
  1  input error: a file is not a profile (the message names it), or an output cannot be written
  2  usage error
  3  --fail-if-slower: some region or run total is slower beyond PCT % with p < alpha;
     --fail-if-more-memory: some region's peak memory is more beyond PCT % with p < alpha

Examples:
  regionprof diff baseline.json candidate.json
  regionprof run --processes 3 -o 'a/prof-%n.json' -- ./app   # then b/ the same way
  regionprof diff --fail-if-slower 10 -o diff.json --html diff.html a b
  regionprof diff 'runs/base-*.json' 'runs/cand-*.json'   # several files a side, quoted
)";
  }

  int execute() override {
    const std::vector<named_profile> a = read_side(*a_path_);
    const std::vector<named_profile> b = read_side(*b_path_);
    const profile_diff diff = diff_profiles(*a_path_, a, *b_path_, b, options_);
    output_set outputs;
    if (json_path_) outputs.add(output_format::json, *json_path_);
    if (html_path_) outputs.add(output_format::html, *html_path_);
    if (markdown_path_) outputs.add(output_format::markdown, *markdown_path_);
    if (outputs.files.empty()) outputs.to_stdout = output_format::markdown;
    write_outputs(outputs, diff_writers(diff), std::cout);
    const char* adjusted = diff.test == diff_test::student_t_log_process_medians ? "Holm-adjusted " : "";
    if (diff.time_gate_failed) {
      std::cerr << "regionprof diff: slower than " << *a_path_ << " by more than " << *options_.fail_if_slower
                << " % (" << adjusted << "p < " << *diff.options.alpha << ")\n";
    }
    if (diff.memory_gate_failed) {
      std::cerr << "regionprof diff: a region's peak memory more than in " << *a_path_ << " by more than "
                << *options_.fail_if_more_memory << " % (" << adjusted << "p < " << *diff.options.alpha << ")\n";
    }
    if (diff.gate_failed) return exit_slower;
    return exit_ok;
  }

 private:
  static constexpr int exit_slower = 3;
  diff_options options_;
  std::optional<std::string> a_path_;
  std::optional<std::string> b_path_;
  std::optional<std::string> json_path_;
  std::optional<std::string> markdown_path_;
  std::optional<std::string> html_path_;
};

}  // namespace

std::unique_ptr<command> make_diff_command() { return std::make_unique<diff_command>(); }

}  // namespace regionprof::cli
