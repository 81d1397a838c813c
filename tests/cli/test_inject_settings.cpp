// The codec between `regionprof run` and its injection library (src/regionprof/inject/inject_settings.hpp), both
// ways: what to_environment writes, variable by variable, and from_environment giving it back.
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/inject/inject_settings.hpp"

namespace {

using regionprof::inject::inject_settings;
using variables = std::vector<std::pair<std::string, std::string>>;

regionprof::inject::environment_lookup lookup_in(const variables& env) {
  std::map<std::string, std::string, std::less<>> table(env.begin(), env.end());
  return [table](std::string_view name) -> std::optional<std::string> {
    const auto found = table.find(name);
    if (found == table.end() || found->second.empty()) return std::nullopt;
    return found->second;
  };
}

inject_settings every_setting() {
  inject_settings s;
  s.report.set_run_marker("option --run-marker", "step");
  s.report.add_region("option --region", "layer_(.*)=layer");
  s.report.add_region("option --region", "a=b=c");
  s.report.set_row_limit("option --row-limit", "5");
  s.report.set_warmup_runs("option --warmup-runs", "2");
  s.report.analysis.cross_thread = true;
  s.report.json_path = "/out/prof-%r.json.regionprof-7.partial";
  s.report.markdown_path = "/out/p.md.regionprof-7.partial";
  s.report.trace_path = "/out/t.json.regionprof-7.partial";
  s.claim = "/tmp/regionprof-run-x/claim";
  s.device_buffer_mb = 64;
  s.sync_records = true;
  s.window_runs = 20'000;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(inject_settings_codec)

BOOST_AUTO_TEST_CASE(to_environment_writes_each_variable_as_run_hands_it) {
  const variables expected = {
      {"REGIONPROF_WARMUP_RUNS", "2"},
      {"REGIONPROF_CLAIM", "/tmp/regionprof-run-x/claim"},
      {"REGIONPROF_OUTPUT", "/out/prof-%r.json.regionprof-7.partial"},
      {"REGIONPROF_MARKDOWN", "/out/p.md.regionprof-7.partial"},
      {"REGIONPROF_TRACE", "/out/t.json.regionprof-7.partial"},
      {"REGIONPROF_RUN_MARKER", "step"},
      {"REGIONPROF_REGIONS", "layer_(.*)=layer\na=b=c\n"},
      {"REGIONPROF_CROSS_THREAD", "1"},
      {"REGIONPROF_ROW_LIMIT", "5"},
      {"REGIONPROF_DEVICE_BUFFER_MB", "64"},
      {"REGIONPROF_SYNC_RECORDS", "1"},
      {"REGIONPROF_WINDOW_RUNS", "20000"},
  };
  BOOST_TEST((regionprof::inject::to_environment(every_setting()) == expected));
}

BOOST_AUTO_TEST_CASE(defaults_write_only_warmup_and_cross_thread) {
  const variables expected = {{"REGIONPROF_WARMUP_RUNS", "0"}, {"REGIONPROF_CROSS_THREAD", "0"}};
  BOOST_TEST((regionprof::inject::to_environment(inject_settings{}) == expected));
}

BOOST_AUTO_TEST_CASE(from_environment_gives_back_what_to_environment_wrote) {
  const inject_settings given = every_setting();
  const inject_settings back = regionprof::inject::from_environment(lookup_in(regionprof::inject::to_environment(given)));
  BOOST_TEST(*back.report.run_marker == "step");
  BOOST_TEST((back.report.analysis.run_marker.match == regionprof::match_kind::regex));
  BOOST_TEST(back.report.analysis.run_marker.pattern == "step");
  BOOST_TEST((back.report.regions == std::vector<std::string>{"layer_(.*)=layer", "a=b=c"}));
  BOOST_TEST_REQUIRE(back.report.analysis.region_rules.size() == 2u);
  BOOST_TEST(back.report.analysis.region_rules[0].kind == "layer");
  BOOST_TEST(back.report.analysis.region_rules[1].pattern == "a=b");
  BOOST_TEST(back.report.analysis.region_rules[1].kind == "c");
  BOOST_TEST(*back.report.row_limit == 5u);
  BOOST_TEST(back.report.analysis.row_limit == 5u);
  BOOST_TEST(back.report.analysis.skip_runs == 2u);
  BOOST_TEST(back.report.analysis.cross_thread);
  BOOST_TEST(*back.report.json_path == *given.report.json_path);
  BOOST_TEST(*back.report.markdown_path == *given.report.markdown_path);
  BOOST_TEST(*back.report.trace_path == *given.report.trace_path);
  BOOST_TEST(*back.claim == *given.claim);
  BOOST_TEST(*back.device_buffer_mb == 64u);
  BOOST_TEST(back.sync_records);
  BOOST_TEST(*back.window_runs == 20'000u);
  // And the other way: encoding what was decoded writes the same variables again.
  BOOST_TEST((regionprof::inject::to_environment(back) == regionprof::inject::to_environment(given)));
}

BOOST_AUTO_TEST_CASE(an_empty_environment_is_the_defaults) {
  const inject_settings back = regionprof::inject::from_environment(lookup_in({}));
  BOOST_TEST(!back.report.run_marker);
  BOOST_TEST(back.report.analysis.run_marker.pattern == regionprof::default_run_marker().pattern);
  BOOST_TEST(back.report.analysis.region_rules.size() == regionprof::default_region_rules().size());
  BOOST_TEST(!back.report.json_path);
  BOOST_TEST(!back.report.markdown_path);
  BOOST_TEST(!back.claim);
  BOOST_TEST(!back.device_buffer_mb);
  BOOST_TEST(!back.sync_records);
  BOOST_TEST(!back.window_runs);
  BOOST_TEST(back.report.analysis.skip_runs == 0u);
  BOOST_TEST(!back.report.analysis.cross_thread);
}

BOOST_AUTO_TEST_CASE(a_bad_value_names_its_variable) {
  const auto message = [](const variables& env) {
    try {
      regionprof::inject::from_environment(lookup_in(env));
    } catch (const regionprof::cli::setting_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  BOOST_TEST(message({{"REGIONPROF_ROW_LIMIT", "abc"}}) ==
             "REGIONPROF_ROW_LIMIT needs a whole number from 1 to 1000000, got 'abc'");
  BOOST_TEST(message({{"REGIONPROF_DEVICE_BUFFER_MB", "2"}}) ==
             "REGIONPROF_DEVICE_BUFFER_MB needs a whole number from 4 to 1048576, got '2'");
  BOOST_TEST(message({{"REGIONPROF_WINDOW_RUNS", "0"}}) ==
             "REGIONPROF_WINDOW_RUNS needs a whole number from 1 to 1000000000, got '0'");
  BOOST_TEST(message({{"REGIONPROF_RUN_MARKER", "[step"}}).starts_with("REGIONPROF_RUN_MARKER: run marker '[step': "));
}

BOOST_AUTO_TEST_CASE(graph_attribution_travels_when_given_and_is_validated) {
  inject_settings given;
  given.report.set_graph_attribution("option --graph-attribution", "launch");
  const variables written = regionprof::inject::to_environment(given);
  const variables expected = {{"REGIONPROF_WARMUP_RUNS", "0"},
                              {"REGIONPROF_CROSS_THREAD", "0"},
                              {"REGIONPROF_GRAPH_ATTRIBUTION", "launch"}};
  BOOST_TEST((written == expected));
  const inject_settings back = regionprof::inject::from_environment(lookup_in(written));
  BOOST_TEST((back.report.analysis.graph_attribution == regionprof::graph_attribution::launch));
  BOOST_TEST((inject_settings{}.report.analysis.graph_attribution == regionprof::graph_attribution::capture));
  try {
    regionprof::inject::from_environment(lookup_in({{"REGIONPROF_GRAPH_ATTRIBUTION", "both"}}));
    BOOST_ERROR("no error for REGIONPROF_GRAPH_ATTRIBUTION=both");
  } catch (const regionprof::cli::setting_error& e) {
    BOOST_TEST(std::string(e.what()) == "REGIONPROF_GRAPH_ATTRIBUTION must be 'capture' or 'launch', got 'both'");
  }
}

BOOST_AUTO_TEST_CASE(a_region_of_two_lines_cannot_be_encoded) {
  inject_settings s;
  s.report.regions = {"a\nb"};
  BOOST_CHECK_THROW(regionprof::inject::to_environment(s), regionprof::cli::setting_error);
}

BOOST_AUTO_TEST_SUITE_END()
