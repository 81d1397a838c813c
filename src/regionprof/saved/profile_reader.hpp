// Reading saved reports back into the result models: regionprof's JSON report (schema_version 1, see
// to_json in report/report.hpp) and the reference module's (NVIDIA AITune runtime_profile), which writes
// the same schema, into a regionprof::Profile; a job report into a regionprof::job_report.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "regionprof/job/job.hpp"
#include "regionprof/model/profile.hpp"

namespace regionprof {

/// A profile that cannot be read: unreadable file, invalid JSON, not a profile, an unsupported
/// schema_version, or a key of the wrong type. what() is the full message, ready to print:
/// `<file>: <path>: <problem>` for a key (`p.json: runs[2].regions[0].calls: expected an unsigned
/// integer, found a string`), `<file>: <problem>` otherwise (`p.json: not a regionprof profile (no
/// schema_version)`, `p.json: invalid JSON at line 3, column 14 (byte offset 57): syntax error`).
///
/// ```
/// try {
///   auto profile = regionprof::read_profile("p.json");
/// } catch (const regionprof::profile_read_error& e) {
///   std::cerr << "regionprof: " << e.what() << "\n";
/// }
/// ```
class profile_read_error : public std::runtime_error {
 public:
  /// `path` is the key's place in the document (`runs[2].timing.cpu_time_us`), empty when the problem
  /// is the file or the document as a whole; line and column (1-based, column in bytes) for JSON errors.
  profile_read_error(std::string file, std::string path, std::string problem, std::uint64_t line = 0,
                     std::uint64_t column = 0);

  const std::string& file() const noexcept { return file_; }
  const std::string& path() const noexcept { return path_; }
  const std::string& problem() const noexcept { return problem_; }
  std::uint64_t line() const noexcept { return line_; }      ///< 0: not a JSON syntax error
  std::uint64_t column() const noexcept { return column_; }  ///< 0: not a JSON syntax error

 private:
  std::string file_;
  std::string path_;
  std::string problem_;
  std::uint64_t line_ = 0;
  std::uint64_t column_ = 0;
};

/// Reads the profile JSON in `path` (see read_profile_text). Throws profile_read_error naming `path`
/// when the file cannot be read or is not a profile this reader reads.
///
/// ```
/// regionprof::Profile profile = regionprof::read_profile("baseline.json");
/// for (const auto& run : profile.result().runs) std::printf("run %zu: %lld ns CPU\n", run.run_index,
///     static_cast<long long>(run.cpu_time_ns));
/// std::cout << to_markdown(profile);  // the Markdown report the analysis wrote alongside the file
/// ```
Profile read_profile(const std::string& path);

/// Reads a profile from text into the one result model (regionprof::Profile, profile.hpp); `name`
/// stands for the file in messages. Writing the profile again (json(), markdown(), html(),
/// terminal_table(), or in a job report) gives what the analysis wrote: for a report regionprof wrote,
/// json() is the file's text byte for byte.
///
/// Required: a top-level object with `schema_version` 1 and `runs`, each run with `run_index`,
/// `timing.wall_time_us`, `timing.cpu_time_us`, `regions` (each with `region_id`, `calls`,
/// `cpu_time_us`) and `residual.cpu_time_us`. Everything else is optional, so profiles of the
/// reference module (no `region_summary`, another `tool`) read too; a key present with the wrong type
/// is an error. What is read, and how:
/// - times are integer ns converted exactly from the decimal text of the microseconds in the file
///   (`1234.567` -> 1234567 ns; beyond 3 decimals, rounded half to even), never through a double;
/// - `runs` (timing and `timing.devices`, regions, residual, `tree`, and the `memory` of runs, residuals
///   and regions, rule 21: a device key other than `cpu` or `cuda:N`, a negative or non-integer figure
///   is an error naming the key), `regions`, `profiler.key_averages` and `warnings` become the
///   analysis_result (a region id seen only in `runs` gets its kind and name split at the first ':'; a
///   warning whose code or source regionprof does not know is left out);
///   has_device_data: a run with `device_time_us`, `CUDA` in `profiler.activities` or a
///   `device_time_total` view; has_region_tree: a run with `tree`, or `tree_summary`;
/// - `config` becomes the analysis options (run marker and region rules; a run marker other than the
///   default is a regex in any domain) and the report context (warm-up and measured runs, inference
///   function), with `created_at`, `tool` and `input`;
/// - `target` becomes the trace's target (its modelled members typed, the others foreign, in their
///   order); the trace has no events.
/// Derived keys (fractions, `region_summary`, `run_summary`, `tree_summary`) are recomputed on writing.
///
/// ```
/// regionprof::Profile profile = regionprof::read_profile_text(to_json(live), "live.json");
/// std::int64_t first_region_ns = profile.result().runs.at(0).regions.at(0).cpu_time_ns;
/// ```
Profile read_profile_text(std::string_view text, const std::string& name = "<memory>");

/// Reads a job report that job_to_json wrote (`"kind": "regionprof_job"`) back into the job_report:
/// each rank's profile is read as read_profile_text reads one (named by its `file`), and the ranks
/// are joined again by merge_ranks, so job_to_json of the result is the file's text byte for byte
/// (the `tool` version aside, for a file of another version). `name` stands for the file in messages.
/// Throws profile_read_error (profile_reader.hpp) naming the file and the key:
/// `job.json: ranks[1].profile.runs: required key missing`.
///
/// ```
/// regionprof::job_report job = regionprof::read_job("job.json");
/// std::cout << regionprof::job_to_markdown(job);
/// ```
job_report read_job_text(std::string_view text, const std::string& name = "<memory>");

/// read_job_text of the file `path`; profile_read_error naming it when it cannot be read.
job_report read_job(const std::string& path);

/// A saved report of either kind: exactly one of the two is set.
struct saved_report {
  std::optional<Profile> profile;  ///< a profile (read_profile_text)
  std::optional<job_report> job;   ///< a job report (`"kind": "regionprof_job"`, read_job_text)
};

/// Reads a saved profile or job report, whichever `text` holds (by its `kind`), from one parse; errors
/// as read_profile_text and read_job_text give them.
///
/// ```
/// regionprof::saved_report saved = regionprof::read_saved_report("any.json");
/// std::cout << (saved.job ? regionprof::job_to_markdown(*saved.job) : regionprof::to_markdown(*saved.profile));
/// ```
saved_report read_saved_report_text(std::string_view text, const std::string& name = "<memory>");

/// read_saved_report_text of the file `path`.
saved_report read_saved_report(const std::string& path);

}  // namespace regionprof
