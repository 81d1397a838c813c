// Reading saved profiles back into the one result model (regionprof::Profile): regionprof's JSON report
// (schema_version 1, see to_json in report.hpp) and the reference module's (NVIDIA AITune
// runtime_profile), which writes the same schema.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

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
/// std::cout << profile.markdown();  // the Markdown report the analysis wrote alongside the file
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
/// - `runs` (timing and `timing.devices`, regions, residual, `tree`), `regions`, `profiler.key_averages`
///   and `warnings` become the analysis_result (a region id seen only in `runs` gets its kind and name
///   split at the first ':'; a warning whose code or source regionprof does not know is left out);
///   has_device_data: a run with `device_time_us`, `CUDA` in `profiler.activities` or a
///   `device_time_total` view; has_region_tree: a run with `tree`, or `tree_summary`;
/// - `config` becomes the analysis options (run marker and region rules; a run marker other than the
///   default is a regex in any domain) and the report context (warm-up and measured runs, inference
///   function), with `created_at`, `tool` and `input`;
/// - `target.type` becomes the trace's target_type, the other members of `target` its
///   target_extra_json; the trace has no events.
/// Derived keys (fractions, `region_summary`, `run_summary`, `tree_summary`) are recomputed on writing.
///
/// ```
/// regionprof::Profile profile = regionprof::read_profile_text(live.json(), "live.json");
/// std::int64_t first_region_ns = profile.result().runs.at(0).regions.at(0).cpu_time_ns;
/// ```
Profile read_profile_text(std::string_view text, const std::string& name = "<memory>");

}  // namespace regionprof
