// The stopping rule (docs/design.md, rule 16) on given sequences of run times, with expectations computed
// by hand from Binomial(n, 1/2): P(B <= j) = sum_{i <= j} C(n, i) / 2^n.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "regionprof/statistics/stopping.hpp"

using namespace regionprof;

namespace {

/// Feeds `runs` (ns) with elapsed time = the sum so far; the 1-based run at which the stopper stopped, or
/// 0 when it never did.
std::size_t stop_run(noise_stopper& stopper, const std::vector<std::int64_t>& runs) {
  std::int64_t elapsed = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    elapsed += runs[i];
    if (stopper.add_run(runs[i], elapsed)) return i + 1;
  }
  return 0;
}

bool message_contains(const std::invalid_argument& e, const std::string& part) {
  return std::string(e.what()).find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(stopping)

BOOST_AUTO_TEST_CASE(median_interval_ranks_follow_the_binomial_distribution) {
  // n = 5: 2 P(B <= 0) = 2/32 = 0.0625 > 0.05, no interval; n = 6: 2/64 = 0.031 -> k = 1.
  for (std::size_t n = 0; n <= 5; ++n) BOOST_TEST(median_ci95_rank(n) == 0u);
  BOOST_TEST(median_ci95_rank(6) == 1u);
  BOOST_TEST(median_ci95_rank(7) == 1u);  // 2 P(B <= 1) = 2 * 8/128 = 0.125
  BOOST_TEST(median_ci95_rank(8) == 1u);  // 2 * 9/256 = 0.070
  BOOST_TEST(median_ci95_rank(9) == 2u);  // 2 * 10/512 = 0.039; 2 P(B <= 2) = 2 * 46/512 = 0.18
  BOOST_TEST(median_ci95_rank(10) == 2u);  // 2 * 11/1024 = 0.021; 2 * 56/1024 = 0.109
  BOOST_TEST(median_ci95_rank(12) == 3u);  // 2 * 79/4096 = 0.039; 2 * 299/4096 = 0.146
  BOOST_TEST(median_ci95_rank(20) == 6u);  // 2 * 21700/2^20 = 0.041; 2 * 60460/2^20 = 0.115
  BOOST_TEST(median_ci95_rank(100) == 40u);  // the textbook interval [x_(40), x_(61)]
}

BOOST_AUTO_TEST_CASE(noise_is_the_relative_half_width_of_the_interval) {
  const std::vector<std::int64_t> five{90, 95, 100, 105, 110};
  BOOST_TEST(!median_noise(five).has_value());
  const std::vector<std::int64_t> six{90, 95, 100, 100, 105, 110};  // k = 1: (110 - 90) / (2 * 100)
  BOOST_TEST(*median_noise(six) == 0.1, boost::test_tools::tolerance(1e-12));
  // k = 2: [x_(2), x_(9)] = [101, 109]; median (104 + 106) / 2 = 105: 8 / 210.
  const std::vector<std::int64_t> ten{100, 101, 102, 103, 104, 106, 107, 108, 109, 120};
  BOOST_TEST(*median_noise(ten) == 8.0 / 210.0, boost::test_tools::tolerance(1e-12));
  const std::vector<std::int64_t> zeros(6, 0);
  BOOST_TEST(!median_noise(zeros).has_value());
}

BOOST_AUTO_TEST_CASE(stops_at_the_first_run_whose_noise_is_low_enough) {
  stopping_options options;
  options.max_noise = 0.05;
  options.min_runs = 6;
  noise_stopper stopper(options);
  // Runs 1-8: k = 1, the whole range 70..130 around a median of 100: 60 / 200 = 0.3.
  // Run 9: sorted {70, 99, 100, 100, 100, 100, 101, 102, 130}, k = 2: [99, 102], (102 - 99) / 200 = 0.015.
  BOOST_TEST(stop_run(stopper, {100, 130, 70, 100, 101, 99, 100, 100, 102, 98}) == 9u);
  const stopping_summary summary = stopper.summary();
  BOOST_TEST(summary.runs == 9u);
  BOOST_TEST(*summary.noise == 0.015, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(summary.target == 0.05);
  BOOST_TEST((summary.reason == stop_reason::noise_reached));
  BOOST_TEST(summary.criterion == "median_ci95");
  BOOST_TEST(!noise_target_warning(summary).has_value());
}

BOOST_AUTO_TEST_CASE(min_runs_holds_the_stop_back) {
  stopping_options options;
  options.max_noise = 0.05;
  options.min_runs = 10;
  noise_stopper stopper(options);
  // Run 10 adds 98: sorted {70, 98, 99, 100, 100, 100, 100, 101, 102, 130}, k = 2: [98, 102] -> 4 / 200.
  BOOST_TEST(stop_run(stopper, {100, 130, 70, 100, 101, 99, 100, 100, 102, 98, 100}) == 10u);
  BOOST_TEST(*stopper.summary().noise == 0.02, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(min_time_holds_the_stop_back) {
  stopping_options options;
  options.max_noise = 0.0;
  options.min_runs = 6;
  options.min_time_s = 10e-6;  // 10,000 ns: ten runs of 1,000 ns
  noise_stopper stopper(options);
  BOOST_TEST(stop_run(stopper, std::vector<std::int64_t>(20, 1000)) == 10u);
  BOOST_TEST(*stopper.summary().noise == 0.0);
  BOOST_TEST((stopper.summary().reason == stop_reason::noise_reached));
}

BOOST_AUTO_TEST_CASE(max_runs_stops_a_noisy_sequence_with_a_warning) {
  stopping_options options;
  options.max_noise = 0.01;
  options.min_runs = 6;
  options.max_runs = 8;
  noise_stopper stopper(options);
  BOOST_TEST(stop_run(stopper, {50, 150, 50, 150, 50, 150, 50, 150, 50, 150}) == 8u);
  const stopping_summary summary = stopper.summary();
  BOOST_TEST((summary.reason == stop_reason::max_runs));
  BOOST_TEST(*summary.noise == 0.5, boost::test_tools::tolerance(1e-12));  // (150 - 50) / (2 * 100)
  const auto warning = noise_target_warning(summary);
  BOOST_REQUIRE(warning.has_value());
  BOOST_TEST((warning->code == warning_code::noise_target_not_met));
  BOOST_TEST((warning->source == warning_source::nvtx));
  BOOST_TEST(warning->message.find("50.00 %") != std::string::npos);
  BOOST_TEST(warning->message.find("after 8 measured runs") != std::string::npos);
  BOOST_TEST(warning->message.find("max_noise 1.00 %") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(max_time_stops_before_the_noise_is_defined) {
  stopping_options options;
  options.max_noise = 0.01;
  options.max_time_s = 2.5;
  noise_stopper stopper(options);
  BOOST_TEST(!stopper.add_run(1000, 1'000'000'000));
  BOOST_TEST(!stopper.add_run(1000, 2'000'000'000));
  BOOST_TEST(stopper.add_run(1000, 3'000'000'000));
  const stopping_summary summary = stopper.summary();
  BOOST_TEST(summary.runs == 3u);
  BOOST_TEST((summary.reason == stop_reason::max_time));
  BOOST_TEST(!summary.noise.has_value());
  BOOST_TEST(noise_target_warning(summary)->message.find("undefined") != std::string::npos);
}

// The median the noise is relative to: the middle run, or the mean of the two middle ones.
BOOST_AUTO_TEST_CASE(median_of_the_runs_so_far) {
  stopping_options options;
  options.max_noise = 0.0;
  options.min_runs = 1;
  options.max_runs = 100;
  noise_stopper stopper(options);
  BOOST_TEST(stopper.median_ns() == 0.0);  // no run yet
  stopper.add_run(130, 0);
  BOOST_TEST(stopper.median_ns() == 130.0);
  stopper.add_run(70, 0);
  BOOST_TEST(stopper.median_ns() == 100.0);  // (70 + 130) / 2
  stopper.add_run(101, 0);
  BOOST_TEST(stopper.median_ns() == 101.0);  // {70, 101, 130}
}

// What a profile gets: the summary, and the warning only at a maximum.
BOOST_AUTO_TEST_CASE(profile_stopping_adds_the_warning_at_a_maximum) {
  stopping_options options;
  options.max_noise = 0.01;
  options.min_runs = 6;
  options.max_runs = 6;
  noise_stopper noisy(options);
  BOOST_TEST(stop_run(noisy, {50, 150, 50, 150, 50, 150}) == 6u);
  std::vector<warning> warnings;
  const stopping_summary at_max = profile_stopping(noisy, warnings);
  BOOST_TEST((at_max.reason == stop_reason::max_runs));
  BOOST_TEST(at_max.runs == 6u);
  BOOST_TEST_REQUIRE(warnings.size() == 1u);
  BOOST_TEST((warnings[0].code == warning_code::noise_target_not_met));
  BOOST_TEST(warnings[0].message == noise_target_warning(at_max)->message);

  options.max_noise = 1.0;  // (150 - 50) / 200 = 0.5 is met at run 6
  noise_stopper quiet(options);
  BOOST_TEST(stop_run(quiet, {50, 150, 50, 150, 50, 150}) == 6u);
  const stopping_summary reached = profile_stopping(quiet, warnings);
  BOOST_TEST((reached.reason == stop_reason::noise_reached));
  BOOST_TEST(warnings.size() == 1u);  // nothing added
}

BOOST_AUTO_TEST_CASE(options_are_checked) {
  stopping_options fixed;
  BOOST_CHECK_NO_THROW(validate_stopping_options(fixed, "test"));
  fixed.max_runs = 5;
  BOOST_CHECK_EXCEPTION(validate_stopping_options(fixed, "test"), std::invalid_argument,
                        [](const auto& e) { return message_contains(e, "apply only with max_noise"); });
  stopping_options bad;
  bad.max_noise = -0.1;
  BOOST_CHECK_EXCEPTION(validate_stopping_options(bad, "test"), std::invalid_argument,
                        [](const auto& e) { return message_contains(e, "test: max_noise must be"); });
  bad.max_noise = 0.1;
  bad.min_runs = 20;
  bad.max_runs = 10;
  BOOST_CHECK_EXCEPTION(validate_stopping_options(bad, "test"), std::invalid_argument,
                        [](const auto& e) { return message_contains(e, "min_runs (20) is above max_runs (10)"); });
  bad.min_runs.reset();
  bad.max_runs.reset();
  bad.min_time_s = 30.0;  // above the default max_time_s of 15
  BOOST_CHECK_EXCEPTION(validate_stopping_options(bad, "test"), std::invalid_argument,
                        [](const auto& e) { return message_contains(e, "min_time_s (30) is above max_time_s (15)"); });
  for (stop_reason r : {stop_reason::noise_reached, stop_reason::max_runs, stop_reason::max_time}) {
    BOOST_TEST((stop_reason_from_string(to_string(r)) == std::optional(r)));
  }
  BOOST_TEST(!stop_reason_from_string("timeout").has_value());
}

BOOST_AUTO_TEST_SUITE_END()
