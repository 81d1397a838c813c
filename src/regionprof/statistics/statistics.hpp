// The one place for the statistics regionprof reports across runs: median, mean, sample standard
// deviation, min, max, median absolute deviation, coefficient of variation, the two-sided
// Mann-Whitney U test, Welch's t test and the Holm-Bonferroni adjustment. Pure functions over plain doubles; the unit is the caller's (the reports pass us).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

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

/// Result of a two-sided two-sample t test of "A and B have the same mean".
struct t_test_result {
  double t = 0.0;        ///< (mean B - mean A) / se
  double df = 0.0;       ///< degrees of freedom, nA + nB - 2
  double p_value = 1.0;  ///< two-sided, in [0, 1]
};

/// Student's two-sided two-sample t test with the pooled variance over `a` and `b` (as
/// scipy.stats.ttest_ind with equal_var=True), each with at least 2 values (else p = 1):
///
/// - sp^2 = ((nA - 1) sA^2 + (nB - 1) sB^2) / (nA + nB - 2), sA^2 and sB^2 the sample variances (n - 1);
/// - se^2 = sp^2 (1 / nA + 1 / nB); t = (mean B - mean A) / se; df = nA + nB - 2;
/// - p = 2 P(T_df >= |t|), Student's t distribution with df degrees of freedom;
/// - se = 0 (each sample constant): p = 1 when the means are equal, else 0.
///
/// Pooled rather than Welch's: docs/design.md, rule 17 (under the gate's null hypothesis both sides are
/// the same program, so their spreads are equal; with 3 a side Welch's df falls towards 2 whenever one
/// side's three values happen to lie close, and with it the test's power).
///
/// ```
/// const double a[] = {1, 2, 3}, b[] = {4, 6, 8};
/// double p = regionprof::stats::student_t(a, b).p_value;  // sp^2 = 2.5, t = 4 / sqrt(5 / 3) = 3.098, df 4: p = 0.0363
/// ```
t_test_result student_t(std::span<const double> a, std::span<const double> b);

/// The Holm-Bonferroni adjusted p-values of `p` (same order): with the m values sorted ascending,
/// p'_(i) = min(1, max over j <= i of (m - j + 1) p_(j)). Rejecting where p' < alpha keeps the chance
/// of any false rejection among the m at most alpha, whatever their dependence.
///
/// ```
/// const std::vector<double> p{0.01, 0.04, 0.03};
/// std::vector<double> adjusted = regionprof::stats::holm_adjust(p);  // {0.03, 0.06, 0.06}
/// ```
std::vector<double> holm_adjust(std::span<const double> p);

}  // namespace regionprof::stats
