// Windows of a long profile (regionprof/analysis/window.hpp): paths, run numbering, target members, the cut's
// run-marker predicate.
#include <stdexcept>
#include <string>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/window.hpp"

using namespace regionprof;

BOOST_AUTO_TEST_SUITE(windows)

BOOST_AUTO_TEST_CASE(a_window_path_expands_w_and_needs_it) {
  const process_identity id{2, 0, 4, "node7", 4242, std::nullopt, std::nullopt, std::nullopt};
  BOOST_TEST(window_output_path("w/r%r-%w.json", id, 3) == "w/r2-3.json");
  BOOST_TEST(window_output_path("w/%r-%w-100%%.json", id, 0) == "w/2-0-100%.json");
  BOOST_CHECK_THROW(window_output_path("w/r%r.json", id, 1), process_identity_error);  // every window one file
  BOOST_CHECK_THROW(window_output_path("w/%w.json", id, 1), process_identity_error);   // 4 ranks, one file
}

BOOST_AUTO_TEST_CASE(runs_are_numbered_on_and_warmups_stay_in_window_0) {
  BOOST_TEST(window_first_run({0, 10}) == 0u);
  BOOST_TEST(window_first_run({2, 10}) == 20u);
  analysis_options options;
  options.skip_runs = 3;
  BOOST_TEST(window_analysis(options, {0, 10}).skip_runs == 3u);
  BOOST_TEST(window_analysis(options, {1, 10}).skip_runs == 0u);
  analysis_result result;
  result.runs.resize(2);
  result.runs[1].run_index = 1;
  number_runs_of_window(result, {2, 10});
  BOOST_TEST(result.runs[0].run_index == 20u);
  BOOST_TEST(result.runs[1].run_index == 21u);
}

BOOST_AUTO_TEST_CASE(the_marker_predicate_is_the_rule_by_name_and_domain) {
  const auto exact = run_marker_predicate_of(default_run_marker());
  BOOST_TEST(exact("regionprof.profiled_run", "regionprof"));
  BOOST_TEST(exact("regionprof.profiled_run", ""));
  BOOST_TEST(!exact("regionprof.profiled_run2", "regionprof"));
  const auto in_domain = run_marker_predicate_of({match_kind::prefix, "step", "region", "app"});
  BOOST_TEST(in_domain("step 3", "app"));
  BOOST_TEST(!in_domain("step 3", "other"));
  const auto regex = run_marker_predicate_of({match_kind::regex, "ProfilerStep#\\d+", "region", ""});
  BOOST_TEST(regex("ProfilerStep#12", "x"));
  BOOST_TEST(!regex("ProfilerStep#12a", "x"));
  BOOST_CHECK_THROW(run_marker_predicate_of({match_kind::regex, "step_(", "region", ""}), std::invalid_argument);
}

BOOST_AUTO_TEST_SUITE_END()
