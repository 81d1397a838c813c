// Stopping on noise (docs/design.md, rule 16): measured runs go on until the noise of the run total is
// at most a target and the minimums are met, or a maximum is reached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/trace/warnings.hpp"

namespace regionprof {

/// When to stop measuring. Without `max_noise` the run count is fixed (the harness's `measured_runs`)
/// and the other members must stay unset; with it, each unset member takes the default below.
struct stopping_options {
  // max_noise: the largest acceptable noise of the run total, relative (0.01 = 1 %): median_noise() of
  // the runs' wall times (nullopt: a fixed run count); min_runs (default 10: the noise is defined from 6
  // runs on), max_runs (default 10000); min_time_s: the measured runs' summed wall time must reach this
  // (default 0); max_time_s: stop once this long (s) has passed since the first measured run began (run
  // times, cache flushes and the harness's own work included; default 15). Declared in
  // stopping_options.def.
#define REGIONPROF_OPTION(member, type, initializer, ...) type member = initializer;
#include "regionprof/statistics/stopping_options.def"
#undef REGIONPROF_OPTION
};

inline constexpr std::size_t default_min_runs = 10;
inline constexpr std::size_t default_max_runs = 10000;
inline constexpr double default_max_time_s = 15.0;

/// Why measuring stopped (report `stopping.reason`).
enum class stop_reason : std::uint8_t { noise_reached = 0, max_runs = 1, max_time = 2 };

/// `noise_reached`, `max_runs`, `max_time`.
std::string_view to_string(stop_reason reason) noexcept;
/// The reason whose string form is `text`, if any.
std::optional<stop_reason> stop_reason_from_string(std::string_view text) noexcept;

/// The one criterion so far: the relative half-width of the distribution-free 95 % confidence interval
/// of the median (report `stopping.criterion`).
inline constexpr std::string_view median_ci95_criterion = "median_ci95";

/// How measuring stopped (report `stopping`).
struct stopping_summary {
  std::string criterion{median_ci95_criterion};
  std::size_t runs = 0;        ///< measured runs
  std::optional<double> noise;  ///< median_noise() of those runs; nullopt when undefined
  double target = 0.0;         ///< max_noise
  stop_reason reason = stop_reason::noise_reached;
};

/// The ranks of the distribution-free 95 % confidence interval of the median of n values: the largest
/// k >= 1 with 2 P(B <= k - 1) <= 0.05, B ~ Binomial(n, 1/2), so that [x_(k), x_(n+1-k)] (1-based order
/// statistics) covers the median with probability 1 - 2 P(B <= k - 1) >= 0.95. 0 when no such k exists
/// (n < 6).
///
/// ```
/// std::size_t k = regionprof::median_ci95_rank(10);  // 2: [x_(2), x_(9)], coverage 0.979
/// ```
std::size_t median_ci95_rank(std::size_t n);

/// The noise of `sorted` (ascending run times, any unit): (x_(n+1-k) - x_(k)) / (2 median), the relative
/// half-width of the 95 % confidence interval of the median (median_ci95_rank). nullopt when n < 6 or the
/// median is not positive.
///
/// ```
/// const std::int64_t runs[] = {90, 95, 100, 100, 105, 110};  // k = 1: (110 - 90) / (2 * 100)
/// double noise = *regionprof::median_noise(runs);          // 0.1
/// ```
std::optional<double> median_noise(std::span<const std::int64_t> sorted);

/// Whether any of `options`' bounds (min_runs, max_runs, min_time_s, max_time_s) is set.
///
/// ```
/// regionprof::stopping_options options;
/// options.max_runs = 50;
/// bool bounded = regionprof::has_stopping_bounds(options);  // true
/// ```
bool has_stopping_bounds(const stopping_options& options) noexcept;

/// Throws std::invalid_argument naming the member for a negative or non-finite max_noise, max_runs 0,
/// min_runs above max_runs, a negative or non-finite time, min_time_s above max_time_s, max_time_s 0, or
/// any member set without max_noise. `who` prefixes the message (`regionprof::profile`).
void validate_stopping_options(const stopping_options& options, std::string_view who);

/// The stopping rule over a sequence of runs, one add_run() per measured run.
///
/// ```
/// regionprof::noise_stopper stopper({.max_noise = 0.02});
/// while (!stopper.add_run(time_one_run(), elapsed_since_start())) {}
/// regionprof::stopping_summary summary = stopper.summary();
/// ```
class noise_stopper {
 public:
  /// `options.max_noise` must be set (validate_stopping_options is applied).
  explicit noise_stopper(const stopping_options& options);

  /// Adds a run that took `run_ns`, `elapsed_ns` after the first run began; true when measuring stops
  /// here: noise <= max_noise with min_runs and min_time_s met (noise_reached), else max_runs runs
  /// (max_runs), else elapsed_ns >= max_time_s (max_time).
  bool add_run(std::int64_t run_ns, std::int64_t elapsed_ns);

  std::size_t runs() const noexcept { return sorted_.size(); }
  /// The median of the runs so far (ns; the mean of the two middle ones for an even count), 0 for none:
  /// the median the noise is relative to.
  double median_ns() const noexcept;
  /// The current summary (reason as of the last add_run() that returned true).
  stopping_summary summary() const;

 private:
  double max_noise_;
  std::size_t min_runs_;
  std::size_t max_runs_;
  std::int64_t min_time_ns_;
  std::int64_t max_time_ns_;
  std::int64_t total_ns_ = 0;
  std::vector<std::int64_t> sorted_;
  std::optional<double> noise_;
  stop_reason reason_ = stop_reason::max_runs;
};

/// NOISE_TARGET_NOT_MET (source `nvtx`) when `summary` stopped at a maximum, naming the noise reached and
/// what to do; nullopt for noise_reached.
std::optional<warning> noise_target_warning(const stopping_summary& summary);

/// What a profile gets from a finished `stopper` (the harness's and regionprof::benchmark's one way): its
/// summary, for report_context::stopping, with noise_target_warning() appended to `warnings` when it
/// stopped at a maximum.
///
/// ```
/// context.stopping = regionprof::profile_stopping(stopper, t.warnings);
/// ```
stopping_summary profile_stopping(const noise_stopper& stopper, std::vector<warning>& warnings);

}  // namespace regionprof
