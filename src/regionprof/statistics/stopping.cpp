// The stopping rule (docs/design.md, rule 16): the relative half-width of the distribution-free 95 %
// confidence interval of the median, from the order statistics and Binomial(n, 1/2).
#include "regionprof/statistics/stopping.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

namespace regionprof {
namespace {

/// Two-sided level of the interval: 2 P(B <= k - 1) must not exceed it.
constexpr double alpha = 0.05;

/// P(B <= j) for B ~ Binomial(n, 1/2), summed from j down (terms shrink by i / (n - i + 1) each step;
/// stops once a term no longer changes the sum). Log-space terms, so any n works.
double binomial_half_cdf(std::size_t n, std::size_t j) {
  if (j >= n) return 1.0;
  const double nd = static_cast<double>(n);
  const double log_half_n = -nd * std::log(2.0);
  const double log_n_factorial = std::lgamma(nd + 1.0);
  double sum = 0.0;
  for (std::size_t i = j + 1; i-- > 0;) {
    const double id = static_cast<double>(i);
    const double term = std::exp(log_n_factorial - std::lgamma(id + 1.0) - std::lgamma(nd - id + 1.0) + log_half_n);
    sum += term;
    if (term <= sum * 1e-17) break;
  }
  return sum;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %%", value * 100.0);
  return text;
}

bool finite_non_negative(double value) { return std::isfinite(value) && value >= 0.0; }

/// The median of ascending `sorted` (the mean of the two middle values for an even count); 0 for none.
double sorted_median(std::span<const std::int64_t> sorted) noexcept {
  const std::size_t n = sorted.size();
  if (n == 0) return 0.0;
  return n % 2 == 1 ? static_cast<double>(sorted[n / 2])
                    : (static_cast<double>(sorted[n / 2 - 1]) + static_cast<double>(sorted[n / 2])) / 2.0;
}

}  // namespace

std::string_view to_string(stop_reason reason) noexcept {
  switch (reason) {
    case stop_reason::noise_reached: return "noise_reached";
    case stop_reason::max_runs: return "max_runs";
    case stop_reason::max_time: return "max_time";
  }
  return "unknown";
}

std::optional<stop_reason> stop_reason_from_string(std::string_view text) noexcept {
  for (stop_reason reason : {stop_reason::noise_reached, stop_reason::max_runs, stop_reason::max_time}) {
    if (to_string(reason) == text) return reason;
  }
  return std::nullopt;
}

std::size_t median_ci95_rank(std::size_t n) {
  if (n == 0) return 0;
  // Start near the normal approximation's answer, then step to the exact one: k is the smallest j with
  // 2 P(B <= j) > alpha (then 2 P(B <= k - 1) <= alpha).
  const double nd = static_cast<double>(n);
  const double guess = std::floor((nd - 1.959964 * std::sqrt(nd)) / 2.0);
  std::size_t k = guess > 0.0 ? static_cast<std::size_t>(guess) : 0;
  while (k < n && 2.0 * binomial_half_cdf(n, k) <= alpha) ++k;
  while (k > 0 && 2.0 * binomial_half_cdf(n, k - 1) > alpha) --k;
  return k;
}

std::optional<double> median_noise(std::span<const std::int64_t> sorted) {
  const std::size_t n = sorted.size();
  const std::size_t k = median_ci95_rank(n);
  if (k == 0) return std::nullopt;
  const double median = sorted_median(sorted);
  if (!(median > 0.0)) return std::nullopt;
  const double low = static_cast<double>(sorted[k - 1]);
  const double high = static_cast<double>(sorted[n - k]);
  return (high - low) / (2.0 * median);
}

bool has_stopping_bounds(const stopping_options& options) noexcept {
  return options.min_runs || options.max_runs || options.min_time_s || options.max_time_s;
}

void validate_stopping_options(const stopping_options& options, std::string_view who) {
  const std::string prefix = std::string(who) + ": ";
  if (!options.max_noise) {
    if (has_stopping_bounds(options)) {
      throw std::invalid_argument(prefix +
                                  "min_runs, max_runs, min_time_s and max_time_s apply only with max_noise "
                                  "(without it the run count is fixed: measured_runs)");
    }
    return;
  }
  if (!finite_non_negative(*options.max_noise)) {
    throw std::invalid_argument(prefix + "max_noise must be a finite number >= 0 (a fraction: 0.01 is 1 %), not " +
                                number(*options.max_noise));
  }
  const std::size_t min_runs = options.min_runs.value_or(default_min_runs);
  const std::size_t max_runs = options.max_runs.value_or(default_max_runs);
  if (max_runs == 0) throw std::invalid_argument(prefix + "max_runs must be at least 1");
  if (min_runs > max_runs) {
    throw std::invalid_argument(prefix + "min_runs (" + std::to_string(min_runs) + ") is above max_runs (" +
                                std::to_string(max_runs) + ")");
  }
  const double min_time = options.min_time_s.value_or(0.0);
  const double max_time = options.max_time_s.value_or(default_max_time_s);
  if (!finite_non_negative(min_time)) {
    throw std::invalid_argument(prefix + "min_time_s must be a finite number of seconds >= 0, not " + number(min_time));
  }
  if (!finite_non_negative(max_time) || max_time == 0.0) {
    throw std::invalid_argument(prefix + "max_time_s must be a finite number of seconds > 0, not " + number(max_time));
  }
  if (min_time > max_time) {
    throw std::invalid_argument(prefix + "min_time_s (" + number(min_time) + ") is above max_time_s (" +
                                number(max_time) + ")");
  }
}

noise_stopper::noise_stopper(const stopping_options& options) {
  validate_stopping_options(options, "regionprof::noise_stopper");
  if (!options.max_noise) throw std::invalid_argument("regionprof::noise_stopper: max_noise is not set");
  max_noise_ = *options.max_noise;
  min_runs_ = options.min_runs.value_or(default_min_runs);
  max_runs_ = options.max_runs.value_or(default_max_runs);
  min_time_ns_ = static_cast<std::int64_t>(std::ceil(options.min_time_s.value_or(0.0) * 1e9));
  max_time_ns_ = static_cast<std::int64_t>(std::ceil(options.max_time_s.value_or(default_max_time_s) * 1e9));
}

bool noise_stopper::add_run(std::int64_t run_ns, std::int64_t elapsed_ns) {
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), run_ns), run_ns);
  total_ns_ += run_ns;
  noise_ = median_noise(sorted_);
  if (noise_ && *noise_ <= max_noise_ && sorted_.size() >= min_runs_ && total_ns_ >= min_time_ns_) {
    reason_ = stop_reason::noise_reached;
    return true;
  }
  if (sorted_.size() >= max_runs_) {
    reason_ = stop_reason::max_runs;
    return true;
  }
  if (elapsed_ns >= max_time_ns_) {
    reason_ = stop_reason::max_time;
    return true;
  }
  return false;
}

double noise_stopper::median_ns() const noexcept { return sorted_median(sorted_); }

stopping_summary noise_stopper::summary() const {
  stopping_summary summary;
  summary.runs = sorted_.size();
  summary.noise = noise_;
  summary.target = max_noise_;
  summary.reason = reason_;
  return summary;
}

std::optional<warning> noise_target_warning(const stopping_summary& summary) {
  if (summary.reason == stop_reason::noise_reached) return std::nullopt;
  const std::string noise = summary.noise ? percent(*summary.noise) : std::string("undefined (fewer than 6 runs)");
  const std::string limit = summary.reason == stop_reason::max_runs ? "max_runs" : "max_time_s";
  return warning{warning_code::noise_target_not_met, warning_source::nvtx,
                 "the run total's noise (" + std::string(summary.criterion) + ") was " + noise + " after " +
                     std::to_string(summary.runs) + " measured runs, above max_noise " + percent(summary.target) +
                     ": measuring stopped at " + limit +
                     "; raise " + limit + ", quiet the machine, or accept a larger max_noise"};
}

stopping_summary profile_stopping(const noise_stopper& stopper, std::vector<warning>& warnings) {
  stopping_summary summary = stopper.summary();
  if (auto w = noise_target_warning(summary)) warnings.push_back(std::move(*w));
  return summary;
}

}  // namespace regionprof
