#include "regionprof/statistics/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

namespace regionprof::stats {
namespace {

/// Median of `values`, which it reorders.
double median_in_place(std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2.0;
}

/// Number of arrangements of m A-values and n B-values (no ties) with U_A = u, for u = 0 .. m n: the
/// coefficients of the Gaussian binomial [m + n choose m]_q = prod_{k=1..m} (1 - q^(n+k)) / (1 - q^k).
/// Exact in int64: after step k the polynomial is [n + k choose k]_q, coefficients <= C(n + k, k), and
/// C(50, 25) < 2^47.
std::vector<std::int64_t> u_distribution(std::size_t m, std::size_t n) {
  std::vector<std::int64_t> poly{1};
  for (std::size_t k = 1; k <= m; ++k) {
    const std::size_t up = n + k;
    poly.resize(poly.size() + up, 0);
    for (std::size_t i = poly.size(); i-- > up;) poly[i] -= poly[i - up];  // * (1 - q^up)
    for (std::size_t i = k; i < poly.size(); ++i) poly[i] += poly[i - k];  // / (1 - q^k)
    poly.resize(poly.size() - k);
  }
  return poly;
}

}  // namespace

double median(std::span<const double> values) {
  std::vector<double> copy(values.begin(), values.end());
  return median_in_place(copy);
}

summary summarize(std::span<const double> values) {
  summary out;
  out.count = values.size();
  if (values.empty()) return out;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  out.min = sorted.front();
  out.max = sorted.back();
  out.median = median_in_place(sorted);
  double sum = 0.0;
  for (double v : values) sum += v;
  out.mean = sum / static_cast<double>(values.size());
  if (values.size() >= 2) {
    double squares = 0.0;
    for (double v : values) squares += (v - out.mean) * (v - out.mean);
    out.stddev = std::sqrt(squares / static_cast<double>(values.size() - 1));
  }
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - out.median));
  out.mad = median_in_place(deviations);
  if (out.mean != 0.0) out.cv = out.stddev / out.mean;
  return out;
}

mann_whitney_result mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  mann_whitney_result out;
  const std::size_t na = a.size();
  const std::size_t nb = b.size();
  if (na == 0 || nb == 0) return out;
  const std::size_t n = na + nb;

  // Pooled sample, sorted by value; `first` marks values of A.
  std::vector<std::pair<double, bool>> pooled;
  pooled.reserve(n);
  for (double v : a) pooled.emplace_back(v, true);
  for (double v : b) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });

  double rank_sum_a = 0.0;
  double tie_term = 0.0;  // sum(t^3 - t) over tie groups
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;  // ranks are 1-based
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_a += average_rank;
    }
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dna = static_cast<double>(na);
  const double dnb = static_cast<double>(nb);
  out.u_a = rank_sum_a - dna * (dna + 1.0) / 2.0;
  const double u_max = std::max(out.u_a, dna * dnb - out.u_a);

  if (!ties && n <= mann_whitney_exact_limit) {
    const std::vector<std::int64_t> counts = u_distribution(na, nb);
    const auto from = static_cast<std::size_t>(std::llround(u_max));
    double total = 0.0;
    double tail = 0.0;
    for (std::size_t u = 0; u < counts.size(); ++u) {
      total += static_cast<double>(counts[u]);
      if (u >= from) tail += static_cast<double>(counts[u]);
    }
    out.exact = true;
    out.p_value = std::min(1.0, 2.0 * tail / total);
    return out;
  }

  const double dn = static_cast<double>(n);
  const double variance = dna * dnb / 12.0 * ((dn + 1.0) - tie_term / (dn * (dn - 1.0)));
  if (variance <= 0.0) return out;  // every value equal: no evidence of a difference
  const double z = (u_max - dna * dnb / 2.0 - 0.5) / std::sqrt(variance);
  out.p_value = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return out;
}

t_test_result student_t(std::span<const double> a, std::span<const double> b) {
  t_test_result out;
  if (a.size() < 2 || b.size() < 2) return out;
  const summary sa = summarize(a);
  const summary sb = summarize(b);
  const double na = static_cast<double>(a.size());
  const double nb = static_cast<double>(b.size());
  out.df = na + nb - 2.0;
  const double pooled = ((na - 1.0) * sa.stddev * sa.stddev + (nb - 1.0) * sb.stddev * sb.stddev) / out.df;
  const double se2 = pooled * (1.0 / na + 1.0 / nb);
  const double difference = sb.mean - sa.mean;
  if (se2 <= 0.0) {
    out.p_value = difference == 0.0 ? 1.0 : 0.0;
    return out;
  }
  out.t = difference / std::sqrt(se2);
  const boost::math::students_t distribution(out.df);
  out.p_value = std::min(1.0, 2.0 * boost::math::cdf(boost::math::complement(distribution, std::fabs(out.t))));
  return out;
}

std::vector<double> holm_adjust(std::span<const double> p) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&p](std::size_t x, std::size_t y) { return p[x] < p[y]; });
  std::vector<double> adjusted(p.size(), 1.0);
  double running = 0.0;  // the max so far keeps the adjusted values in the order of the raw ones
  for (std::size_t i = 0; i < order.size(); ++i) {
    running = std::max(running, std::min(1.0, static_cast<double>(p.size() - i) * p[order[i]]));
    adjusted[order[i]] = running;
  }
  return adjusted;
}

}  // namespace regionprof::stats
