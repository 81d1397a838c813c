// Reading saved profiles back: regionprof's JSON report (schema_version 1, see to_json in report.hpp)
// and the reference module's (NVIDIA AITune runtime_profile), which writes the same schema.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

#include "regionprof/warnings.hpp"

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

/// One region's time in one run (report `runs[i].regions[j]`). Times in ns.
struct saved_region_time {
  std::string region_id;
  std::uint64_t calls = 0;
  std::int64_t cpu_ns = 0;
  std::optional<std::int64_t> device_ns;          ///< absent without device data
  std::optional<std::int64_t> off_thread_cpu_ns;  ///< regionprof only, when seen off-thread
};

/// What no region owns in one run (report `runs[i].residual`). Times in ns.
struct saved_residual {
  std::int64_t cpu_ns = 0;
  std::optional<std::int64_t> device_ns;
};

/// One node of a run's region tree (report `runs[i].tree[n]`). Times in ns.
struct saved_tree_node {
  std::vector<std::string> path;  ///< region ids, topmost first; never empty
  std::uint64_t calls = 0;
  std::int64_t cpu_ns = 0;        ///< inclusive
  std::int64_t self_cpu_ns = 0;
  std::optional<std::int64_t> device_ns;       ///< absent without device data
  std::optional<std::int64_t> self_device_ns;  ///< absent without device data
};

/// One profiled run (report `runs[i]`). Times in ns.
struct saved_run {
  std::uint64_t run_index = 0;
  std::int64_t wall_ns = 0;
  std::int64_t cpu_ns = 0;
  std::optional<std::int64_t> device_ns;       ///< absent without device data
  std::optional<std::int64_t> device_busy_ns;  ///< regionprof only
  std::optional<std::int64_t> device_span_ns;  ///< regionprof only
  std::vector<saved_region_time> regions;      ///< in the file's order
  saved_residual residual;
  /// The run's region tree, depth-first as written; absent when the file has no `tree` key (the region
  /// tree off, or the reference module's profile).
  std::optional<std::vector<saved_tree_node>> tree;
};

/// One region of the profile (report `regions[i]`); a key the file lacks reads as "".
struct saved_region {
  std::string id;           ///< `kind:name`
  std::string name;
  std::string kind;
  std::string module_type;  ///< "-" for ranges that are not modules
};

/// One warning (report `warnings[i]`). Codes and sources regionprof does not know (another tool's)
/// are kept as text, with `code` / `source` empty.
struct saved_warning {
  std::optional<warning_code> code;
  std::string code_text;  ///< as written: `DROPPED_DEVICE_RECORDS`
  std::optional<warning_source> source;
  std::string source_text;
  std::string message;
};

/// A saved profile as plain data, with the whole parsed document for the keys the struct does not model
/// (fractions, key averages, region_summary, config.region_rules, target details, ...).
///
/// Times are integer ns converted exactly from the decimal text of the microseconds in the file
/// (`1234.567` -> 1234567 ns; beyond 3 decimals, rounded half to even), never through a double.
/// Keys other than those read_profile_text requires may be absent (or null) and read as empty /
/// nullopt; a key present with the wrong type is an error.
struct saved_profile {
  std::string file;                    ///< the name given to the reader (messages name it)
  std::uint64_t schema_version = 1;
  std::string created_at;              ///< ISO-8601 as written
  std::string tool_name;               ///< `regionprof`; may be another tool's or empty
  std::string tool_version;
  std::optional<std::string> run_marker;  ///< config.run_marker
  std::string target_type;             ///< target.type
  std::vector<saved_run> runs;         ///< in the file's order
  std::vector<saved_region> regions;
  std::vector<saved_warning> warnings;
  boost::json::value document;         ///< the whole file, parsed (numbers as Boost.JSON reads them)
};

/// Reads the profile JSON in `path` (see read_profile_text). Throws profile_read_error naming `path`
/// when the file cannot be read or is not a profile this reader reads.
///
/// ```
/// regionprof::saved_profile profile = regionprof::read_profile("baseline.json");
/// for (const auto& run : profile.runs) std::printf("run %llu: %lld ns CPU\n",
///     static_cast<unsigned long long>(run.run_index), static_cast<long long>(run.cpu_ns));
/// ```
saved_profile read_profile(const std::string& path);

/// Reads a profile from text; `name` stands for the file in messages and in saved_profile::file.
///
/// Required: a top-level object with `schema_version` 1 and `runs`, each run with `run_index`,
/// `timing.wall_time_us`, `timing.cpu_time_us`, `regions` (each with `region_id`, `calls`,
/// `cpu_time_us`) and `residual.cpu_time_us`. Everything else is optional, so profiles of the
/// reference module (no `region_summary`, another `tool`) read too. Throws profile_read_error.
///
/// ```
/// auto profile = regionprof::read_profile_text(regionprof::to_json(result, trace, options, {}));
/// std::int64_t first_region_ns = profile.runs.at(0).regions.at(0).cpu_ns;
/// ```
saved_profile read_profile_text(std::string_view text, const std::string& name = "<memory>");

}  // namespace regionprof
