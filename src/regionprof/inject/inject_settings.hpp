// What `regionprof run` hands libregionprof_inject.so, in one struct, and the one codec for it: the
// environment variables of inject_env.hpp, encoded by to_environment (in `run`) and decoded by
// from_environment (in the library), side by side so they cannot drift apart.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "regionprof/options/report_settings.hpp"

namespace regionprof::inject {

/// The injection library's settings. `report` holds the rules (run marker, regions, --cross-thread,
/// --row-limit, the warm-up runs as analysis.skip_runs) and the output path patterns (placeholders
/// unexpanded; the JSON profile defaults to profile.json).
///
/// ```
/// inject_settings s;
/// s.report.set_run_marker("option --run-marker", "step");
/// s.report.json_path = "prof-%r.json";
/// auto variables = to_environment(s);  // REGIONPROF_RUN_MARKER=step, REGIONPROF_OUTPUT=prof-%r.json, ...
/// ```
struct inject_settings {
  cli::report_settings report;
  std::optional<std::string> claim;             ///< REGIONPROF_CLAIM: only its creator is profiled
  std::optional<std::size_t> device_buffer_mb;  ///< REGIONPROF_DEVICE_BUFFER_MB, 4 to 1048576
  bool sync_records = false;                    ///< REGIONPROF_SYNC_RECORDS=1
  /// REGIONPROF_WINDOW_RUNS (--window-runs), 1 to max_window_runs: a profile every N measured runs, each
  /// output path's `%w` the window's index (docs/capture.md, "Windows").
  std::optional<std::size_t> window_runs;
  static constexpr std::size_t max_window_runs = 1'000'000'000;
};

/// A variable's value, or nullopt when it is unset or empty.
using environment_lookup = std::function<std::optional<std::string>(std::string_view name)>;

/// The variables that configure the library as `settings` says, as (name, value) pairs. Warm-up runs
/// and --cross-thread are always set; the others only when given. A region holding a newline cannot
/// be encoded (they travel one per line): throws cli::setting_error.
std::vector<std::pair<std::string, std::string>> to_environment(const inject_settings& settings);

/// The settings `lookup` gives, validated as the CLI's flags are (cli::report_settings' setters);
/// throws cli::setting_error naming the variable. from_environment(lookup of to_environment(s))
/// gives back `s`.
///
/// ```
/// inject_settings s = from_environment([](std::string_view name) -> std::optional<std::string> {
///   const char* value = std::getenv(std::string(name).c_str());
///   return value && *value ? std::optional<std::string>(value) : std::nullopt;
/// });
/// ```
inject_settings from_environment(const environment_lookup& lookup);

/// This process's environment as an environment_lookup (std::getenv; an empty value is unset).
std::optional<std::string> process_environment(std::string_view name);

}  // namespace regionprof::inject
