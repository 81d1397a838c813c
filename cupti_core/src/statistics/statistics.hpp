// The one place for the statistics regionprof reports across runs: median, mean, sample standard
// deviation, min, max, median absolute deviation, coefficient of variation, and the two-sided
// Mann-Whitney U test. Pure functions over plain doubles; the unit is the caller's (the reports pass us).
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace regionprof::stats {

/// The spread of one quantity over n values.
///
/// - `median`: the middle value, or the mean of the two middle values when n is even.
/// - `mean`: the arithmetic mean.
/// - `stddev`: the sample standard deviation, sqrt(sum((x - mean)^2) / (n - 1)); 0 when n < 2.
/// - `mad`: the median absolute deviation, median(|x - median|), unscaled (multiply by 1.4826 for a
///   normal-consistent estimate of the standard deviation).
/// - `cv`: stddev / mean; absent when the mean is 0.
/// All are 0 (and `cv` absent) for n = 0.
struct summary {
  std::size_t count = 0;
  double median = 0.0;
  double mean = 0.0;
  double stddev = 0.0;
  double min = 0.0;
  double max = 0.0;
  double mad = 0.0;
  std::optional<double> cv;
};

/// The summary of `values` (any order; not modified).
///
/// ```
/// const double runs_us[] = {1.0, 2.0, 4.0};
/// regionprof::stats::summary s = regionprof::stats::summarize(runs_us);  // median 2, mad 1
/// ```
summary summarize(std::span<const double> values);

/// The median of `values` (0 for none).
double median(std::span<const double> values);

/// Result of a two-sided Mann-Whitney U test of "A and B come from the same distribution".
struct mann_whitney_result {
  double u_a = 0.0;      ///< U of sample A: pairs (a, b) with a > b, plus half the ties
  double p_value = 1.0;  ///< two-sided, in [0, 1]
  bool exact = false;    ///< true: exact distribution of U; false: normal approximation
};

/// Samples up to this total size without ties get the exact p-value; larger ones, or any tie, the
/// normal approximation.
inline constexpr std::size_t mann_whitney_exact_limit = 50;

/// The two-sided Mann-Whitney U test over `a` and `b` (as scipy.stats.mannwhitneyu with
/// alternative='two-sided', method='auto' for small untied samples, use_continuity=True otherwise):
///
/// - Ranks of the pooled sample, tied values taking their average rank; U_A = R_A - nA (nA + 1) / 2.
/// - Exact (no ties and nA + nB <= mann_whitney_exact_limit): p = min(1, 2 P(U >= max(U_A, U_B))),
///   with the distribution of U counted over all C(nA + nB, nA) equally likely arrangements.
/// - Otherwise the normal approximation with tie correction and continuity correction:
///   z = (max(U_A, U_B) - nA nB / 2 - 0.5) / sigma,
///   sigma^2 = nA nB / 12 * ((n + 1) - sum(t^3 - t) / (n (n - 1))) over the sizes t of the tie groups,
///   p = min(1, 2 (1 - Phi(z))). Every value equal (sigma 0): p = 1.
/// - An empty sample: p = 1.
///
/// ```
/// const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
/// double p = regionprof::stats::mann_whitney_u(a, b).p_value;  // 0.1 = 2 * 1 / C(6, 3)
/// ```
mann_whitney_result mann_whitney_u(std::span<const double> a, std::span<const double> b);

}  // namespace regionprof::stats
