// statistics/statistics.hpp: summaries and the Mann-Whitney U test against hand-computed values.
#include <cmath>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/statistics/statistics.hpp"

using namespace regionprof::stats;
namespace tt = boost::test_tools;

BOOST_AUTO_TEST_SUITE(statistics)

BOOST_AUTO_TEST_CASE(summary_of_an_odd_sample) {
  // {1, 2, 4, 10, 3}: sorted 1 2 3 4 10, median 3, mean 4; deviations from the mean -3 -2 -1 0 6,
  // squares 9 4 1 0 36 = 50, sample variance 50 / 4 = 12.5; |x - 3| = 2 1 0 1 7 -> mad 1; cv sqrt(12.5) / 4.
  const std::vector<double> values{1, 2, 4, 10, 3};
  const summary s = summarize(values);
  BOOST_TEST(s.count == 5u);
  BOOST_TEST(s.median == 3.0);
  BOOST_TEST(s.mean == 4.0);
  BOOST_TEST(s.stddev == std::sqrt(12.5), tt::tolerance(1e-15));
  BOOST_TEST(s.min == 1.0);
  BOOST_TEST(s.max == 10.0);
  BOOST_TEST(s.mad == 1.0);
  BOOST_TEST_REQUIRE(s.cv.has_value());
  BOOST_TEST(*s.cv == std::sqrt(12.5) / 4.0, tt::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(summary_of_an_even_sample_and_edge_cases) {
  // {4, 1, 3, 2}: median (2 + 3) / 2 = 2.5; |x - 2.5| = 1.5 1.5 0.5 0.5 -> mad (0.5 + 1.5) / 2 = 1.
  const std::vector<double> even{4, 1, 3, 2};
  BOOST_TEST(summarize(even).median == 2.5);
  BOOST_TEST(summarize(even).mad == 1.0);
  BOOST_TEST(median(even) == 2.5);
  const std::vector<double> one{7};
  const summary single = summarize(one);
  BOOST_TEST(single.stddev == 0.0);  // n - 1 = 0: defined as 0
  BOOST_TEST(single.median == 7.0);
  BOOST_TEST(*single.cv == 0.0);
  const std::vector<double> zeros{0, 0, 0};
  BOOST_TEST(!summarize(zeros).cv.has_value());  // mean 0: no cv
  const summary none = summarize({});
  BOOST_TEST(none.count == 0u);
  BOOST_TEST(!none.cv.has_value());
}

BOOST_AUTO_TEST_CASE(mann_whitney_exact_fully_separated) {
  // A = {1, 2, 3} below B = {4, 5, 6}: U_A = 0, U_B = 9. Of the C(6, 3) = 20 equally likely arrangements,
  // exactly one has U >= 9, so p = 2 * 1 / 20 = 0.1 (scipy.stats.mannwhitneyu: 0.1).
  const std::vector<double> a{1, 2, 3}, b{4, 5, 6};
  const mann_whitney_result r = mann_whitney_u(a, b);
  BOOST_TEST(r.exact);
  BOOST_TEST(r.u_a == 0.0);
  BOOST_TEST(r.p_value == 0.1, tt::tolerance(1e-15));
  BOOST_TEST(mann_whitney_u(b, a).p_value == 0.1, tt::tolerance(1e-15));  // symmetric
}

BOOST_AUTO_TEST_CASE(mann_whitney_exact_interleaved) {
  // A = {1.5, 3, 5, 8}, B = {2, 4, 6, 7, 9}: pairs a > b: 0 + 1 + 2 + 4 = 7 = U_A, U_B = 20 - 7 = 13.
  // Enumerating the C(9, 4) = 126 arrangements, 35 have U >= 13: p = 2 * 35 / 126 = 5 / 9.
  const std::vector<double> a{1.5, 3, 5, 8}, b{2, 4, 6, 7, 9};
  const mann_whitney_result r = mann_whitney_u(a, b);
  BOOST_TEST(r.exact);
  BOOST_TEST(r.u_a == 7.0);
  BOOST_TEST(r.p_value == 5.0 / 9.0, tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(mann_whitney_normal_approximation_with_ties) {
  // A = {1, 2, 2, 3}, B = {2, 3, 4, 4}: U_A = 2.5 (pairs a > b plus half the ties), U_B = 13.5.
  // Tie groups: three 2s, two 3s, two 4s: sum(t^3 - t) = 24 + 6 + 6 = 36.
  // sigma^2 = 16 / 12 * (9 - 36 / 56) = 11.142857..., z = (13.5 - 8 - 0.5) / sigma = 1.4978617...,
  // p = erfc(z / sqrt 2) = 0.1341691801 (scipy.stats.mannwhitneyu, method 'asymptotic': 0.13416918).
  const std::vector<double> a{1, 2, 2, 3}, b{2, 3, 4, 4};
  const mann_whitney_result r = mann_whitney_u(a, b);
  BOOST_TEST(!r.exact);
  BOOST_TEST(r.u_a == 2.5);
  BOOST_TEST(r.p_value == 0.13416918012812581, tt::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(mann_whitney_same_samples_and_large_ones) {
  const std::vector<double> same{5, 5, 5};
  BOOST_TEST(mann_whitney_u(same, same).p_value == 1.0);  // every value equal
  BOOST_TEST(mann_whitney_u(same, {}).p_value == 1.0);    // an empty sample
  // 30 vs 30 distinct values (n = 60 > 50): normal approximation. Fully separated: U_B = 900, mu 450,
  // sigma^2 = 900 / 12 * 61 = 4575, z = 449.5 / 67.6387... = 6.6456..., p = erfc(z / sqrt 2) ~ 3.0e-11.
  std::vector<double> low, high;
  for (int i = 0; i < 30; ++i) {
    low.push_back(i);
    high.push_back(100 + i);
  }
  const mann_whitney_result r = mann_whitney_u(low, high);
  BOOST_TEST(!r.exact);
  BOOST_TEST(r.p_value == std::erfc(449.5 / std::sqrt(4575.0) / std::sqrt(2.0)), tt::tolerance(1e-12));
  BOOST_TEST(r.p_value < 1e-10);
  // 20 vs 20 (n = 40, no ties): exact; interleaved identical distributions give a large p.
  std::vector<double> even, odd;
  for (int i = 0; i < 20; ++i) {
    even.push_back(2 * i);
    odd.push_back(2 * i + 1);
  }
  const mann_whitney_result same_distribution = mann_whitney_u(even, odd);
  BOOST_TEST(same_distribution.exact);
  BOOST_TEST(same_distribution.p_value > 0.5);
}

BOOST_AUTO_TEST_CASE(student_t_by_hand) {
  // {1, 2, 3} against {4, 5, 6}: variances 1 and 1, sp^2 = 1, se^2 = 1/3 + 1/3, t = 3 / sqrt(2/3) = 3.6742,
  // df = 4, p = 2 P(T_4 >= 3.6742) = 0.021312.
  const std::vector<double> a{1, 2, 3}, b{4, 5, 6};
  const t_test_result r = student_t(a, b);
  BOOST_TEST(r.t == 3.0 / std::sqrt(2.0 / 3.0), tt::tolerance(1e-12));
  BOOST_TEST(r.df == 4.0, tt::tolerance(1e-12));
  BOOST_TEST(r.p_value == 0.021312, tt::tolerance(1e-4));
  BOOST_TEST(student_t(b, a).p_value == r.p_value, tt::tolerance(1e-12));  // two-sided
  BOOST_TEST(student_t(b, a).t == -r.t, tt::tolerance(1e-12));
  // Unequal spread, pooled: {1, 2, 3} against {4, 6, 8}: sp^2 = (2 * 1 + 2 * 4) / 4 = 2.5,
  // se^2 = 2.5 * 2/3, t = 4 / sqrt(5/3) = 3.0984, df 4, p = 0.036278 (Welch's df would be 2.94).
  const std::vector<double> wide{4, 6, 8};
  const t_test_result w = student_t(a, wide);
  BOOST_TEST(w.t == 4.0 / std::sqrt(5.0 / 3.0), tt::tolerance(1e-12));
  BOOST_TEST(w.df == 4.0);
  BOOST_TEST(w.p_value == 0.036278, tt::tolerance(1e-4));
  // ln {100, 104, 97} against ln {150, 180, 165}: t = 8.7812 (equal n: the same t as Welch's), df 4,
  // p = 0.00092744 (Welch: df 2.5746, p 0.0055).
  std::vector<double> la{100, 104, 97}, lb{150, 180, 165};
  for (double& x : la) x = std::log(x);
  for (double& x : lb) x = std::log(x);
  const t_test_result u = student_t(la, lb);
  BOOST_TEST(u.t == 8.7812, tt::tolerance(1e-4));
  BOOST_TEST(u.df == 4.0);
  BOOST_TEST(u.p_value == 0.00092744, tt::tolerance(1e-3));
  // Sides of 2 and 4: df = 4; {0, 2} against {1, 3, 5, 7}: sp^2 = (2 + 3 * 20/3) / 4 = 5.5,
  // se^2 = 5.5 (1/2 + 1/4) = 4.125, t = (4 - 1) / 2.031 = 1.4771.
  const std::vector<double> two{0, 2}, four{1, 3, 5, 7};
  BOOST_TEST(student_t(two, four).t == 3.0 / std::sqrt(4.125), tt::tolerance(1e-12));
  BOOST_TEST(student_t(two, four).df == 4.0);
  // Constant samples: equal means p = 1, different means p = 0; fewer than 2 values a side: p = 1.
  const std::vector<double> c{5, 5}, d{6, 6}, one{1};
  BOOST_TEST(student_t(c, c).p_value == 1.0);
  BOOST_TEST(student_t(c, d).p_value == 0.0);
  BOOST_TEST(student_t(one, d).p_value == 1.0);
}

BOOST_AUTO_TEST_CASE(holm_adjustment_by_hand) {
  // Sorted 0.01, 0.03, 0.04 (m = 3): 3 x 0.01 = 0.03; 2 x 0.03 = 0.06; 1 x 0.04 = 0.04, raised to 0.06.
  const std::vector<double> p{0.01, 0.04, 0.03};
  const std::vector<double> adjusted = holm_adjust(p);
  BOOST_TEST_REQUIRE(adjusted.size() == 3u);
  BOOST_TEST(adjusted[0] == 0.03, tt::tolerance(1e-12));
  BOOST_TEST(adjusted[1] == 0.06, tt::tolerance(1e-12));
  BOOST_TEST(adjusted[2] == 0.06, tt::tolerance(1e-12));
  // Capped at 1; none: none.
  const std::vector<double> big{0.6, 0.7};
  BOOST_TEST(holm_adjust(big) == (std::vector<double>{1.0, 1.0}));
  BOOST_TEST(holm_adjust(std::vector<double>{}).empty());
}

BOOST_AUTO_TEST_SUITE_END()
