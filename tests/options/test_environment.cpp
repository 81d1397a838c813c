// The codec between `regionprof run` and its injection library (options/environment.hpp), both ways: what
// to_environment writes, variable by variable, and from_environment giving it back.
#include <boost/test/unit_test.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "regionprof/options/environment.hpp"

namespace {

using namespace regionprof;
using variables = std::vector<std::pair<std::string, std::string>>;

options::environment_lookup lookup_in(const variables& env) {
  std::map<std::string, std::string, std::less<>> table(env.begin(), env.end());
  return [table](std::string_view name) -> std::optional<std::string> {
    const auto found = table.find(name);
    if (found == table.end() || found->second.empty()) return std::nullopt;
    return found->second;
  };
}

void set(profile_options& o, std::string_view flag, const options::option_value& value) {
  const options::option* found = options::find_option(options::cli_run, flag);
  if (found == nullptr) found = options::find_option(options::environment, flag);
  BOOST_TEST_REQUIRE(found != nullptr, flag);
  options::set_option(o, *found, flag, value);
}

profile_options every_option() {
  profile_options o = options::command_defaults();
  set(o, "--run-marker", std::string("step"));
  set(o, "--region", std::vector<std::string>{"layer_(.*)=layer", "a=b=c"});
  set(o, "--row-limit", std::uint64_t{5});
  set(o, "--warmup-runs", std::uint64_t{2});
  set(o, "--cross-thread", true);
  set(o, "-o", std::string("/out/prof-%r.json.regionprof-7.partial"));
  set(o, "--markdown", std::string("/out/p.md.regionprof-7.partial"));
  set(o, "--trace", std::string("/out/t.json.regionprof-7.partial"));
  set(o, "REGIONPROF_DEVICE_BUFFER_MB", std::uint64_t{64});
  set(o, "REGIONPROF_SYNC_RECORDS", true);
  set(o, "--window-runs", std::uint64_t{20'000});
  return o;
}

std::string message_of(const variables& env) {
  try {
    options::from_environment(lookup_in(env));
  } catch (const options::setting_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(environment_codec)

BOOST_AUTO_TEST_CASE(to_environment_writes_each_variable_in_declaration_order) {
  const variables expected = {
      {"REGIONPROF_WINDOW_RUNS", "20000"},
      {"REGIONPROF_OUTPUT", "/out/prof-%r.json.regionprof-7.partial"},
      {"REGIONPROF_MARKDOWN", "/out/p.md.regionprof-7.partial"},
      {"REGIONPROF_TRACE", "/out/t.json.regionprof-7.partial"},
      {"REGIONPROF_DEVICE_BUFFER_MB", "64"},
      {"REGIONPROF_SYNC_RECORDS", "1"},
      {"REGIONPROF_RUN_MARKER", "step"},
      {"REGIONPROF_REGIONS", "layer_(.*)=layer\na=b=c\n"},
      {"REGIONPROF_CROSS_THREAD", "1"},
      {"REGIONPROF_ROW_LIMIT", "5"},
      {"REGIONPROF_WARMUP_RUNS", "2"},
  };
  BOOST_TEST((options::to_environment(every_option()) == expected));
}

BOOST_AUTO_TEST_CASE(the_defaults_write_nothing) {
  BOOST_TEST(options::to_environment(options::command_defaults()).empty());
}

BOOST_AUTO_TEST_CASE(from_environment_gives_back_what_to_environment_wrote) {
  const profile_options given = every_option();
  const profile_options back = options::from_environment(lookup_in(options::to_environment(given)));
  BOOST_TEST((back.analysis.run_marker.match == match_kind::regex));
  BOOST_TEST(back.analysis.run_marker.pattern == "step");
  BOOST_TEST_REQUIRE(back.analysis.region_rules.size() == 2u);
  BOOST_TEST(back.analysis.region_rules[0].kind == "layer");
  BOOST_TEST(back.analysis.region_rules[1].pattern == "a=b");
  BOOST_TEST(back.analysis.region_rules[1].kind == "c");
  BOOST_TEST(back.analysis.row_limit == 5u);
  BOOST_TEST(back.analysis.skip_runs == 2u);
  BOOST_TEST(back.analysis.cross_thread);
  BOOST_TEST(*back.json_output == *given.json_output);
  BOOST_TEST(*back.markdown_output == *given.markdown_output);
  BOOST_TEST(*back.trace_file == *given.trace_file);
  BOOST_TEST(*back.device_buffer_mb == 64u);
  BOOST_TEST(device_options_of(back).max_buffer_bytes == std::size_t{64} << 20);
  BOOST_TEST(back.sync_records);
  BOOST_TEST(*back.window_runs == 20'000u);
  // And the other way: encoding what was decoded writes the same variables again.
  BOOST_TEST((options::to_environment(back) == options::to_environment(given)));
}

BOOST_AUTO_TEST_CASE(an_empty_environment_is_the_commands_defaults) {
  const profile_options back = options::from_environment(lookup_in({}));
  BOOST_TEST((back.analysis.run_marker == default_run_marker()));
  BOOST_TEST((back.analysis.region_rules == default_region_rules()));
  BOOST_TEST(!back.json_output);
  BOOST_TEST(!back.markdown_output);
  BOOST_TEST(!back.device_buffer_mb);
  BOOST_TEST(!back.sync_records);
  BOOST_TEST(!back.window_runs);
  BOOST_TEST(back.analysis.skip_runs == 0u);
  BOOST_TEST(!back.analysis.cross_thread);
  BOOST_TEST(!back.uses_inference_function);
}

BOOST_AUTO_TEST_CASE(a_bad_value_names_its_variable) {
  BOOST_TEST(message_of({{"REGIONPROF_ROW_LIMIT", "abc"}}) ==
             "REGIONPROF_ROW_LIMIT needs a whole number from 1 to 1000000, got 'abc'");
  BOOST_TEST(message_of({{"REGIONPROF_DEVICE_BUFFER_MB", "2"}}) ==
             "REGIONPROF_DEVICE_BUFFER_MB needs a whole number from 4 to 1048576, got '2'");
  BOOST_TEST(message_of({{"REGIONPROF_WINDOW_RUNS", "0"}}) ==
             "REGIONPROF_WINDOW_RUNS needs a whole number from 1 to 1000000000, got '0'");
  BOOST_TEST(message_of({{"REGIONPROF_CROSS_THREAD", "yes"}}) ==
             "REGIONPROF_CROSS_THREAD needs 1 (on) or 0 (off), got 'yes'");
  BOOST_TEST(message_of({{"REGIONPROF_RUN_MARKER", "[step"}}).starts_with("REGIONPROF_RUN_MARKER: run marker '[step': "));
  BOOST_TEST(message_of({{"REGIONPROF_REGIONS", "ok=a\n(("}}).starts_with("REGIONPROF_REGIONS: region rule '((': "));
}

BOOST_AUTO_TEST_CASE(graph_attribution_travels_when_given_and_is_validated) {
  profile_options given = options::command_defaults();
  set(given, "--graph-attribution", std::string("launch"));
  const variables written = options::to_environment(given);
  BOOST_TEST((written == variables{{"REGIONPROF_GRAPH_ATTRIBUTION", "launch"}}));
  const profile_options back = options::from_environment(lookup_in(written));
  BOOST_TEST((back.analysis.graph_attribution == graph_attribution::launch));
  BOOST_TEST((profile_options{}.analysis.graph_attribution == graph_attribution::capture));
  BOOST_TEST(message_of({{"REGIONPROF_GRAPH_ATTRIBUTION", "both"}}) ==
             "REGIONPROF_GRAPH_ATTRIBUTION must be 'capture' or 'launch', got 'both'");
}

BOOST_AUTO_TEST_CASE(a_region_of_two_lines_cannot_be_encoded) {
  profile_options o = options::command_defaults();
  o.analysis.region_rules = {{match_kind::regex, "a\nb", "region", ""}};
  BOOST_CHECK_THROW(options::to_environment(o), options::setting_error);
}

BOOST_AUTO_TEST_CASE(run_owns_the_variables_of_its_flags_only) {
  const std::vector<std::string_view> owned = options::owned_variables();
  const std::vector<std::string_view> expected = {"REGIONPROF_WINDOW_RUNS", "REGIONPROF_OUTPUT",
                                                  "REGIONPROF_MARKDOWN",    "REGIONPROF_TRACE",
                                                  "REGIONPROF_RUN_MARKER",  "REGIONPROF_REGIONS",
                                                  "REGIONPROF_CROSS_THREAD", "REGIONPROF_GRAPH_ATTRIBUTION",
                                                  "REGIONPROF_ROW_LIMIT",   "REGIONPROF_WARMUP_RUNS"};
  BOOST_TEST(owned == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
