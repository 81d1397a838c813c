// The option table (options/option_table.hpp): every option declared once, shown under one name per
// surface, parsed and checked the same way for the command, the environment and Python.
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <vector>

#include "regionprof/options/option_table.hpp"

using namespace regionprof;
using namespace regionprof::options;

namespace {

std::string error_of(const option& o, std::string_view setting, const option_value& value) {
  profile_options target;
  try {
    set_option(target, o, setting, value);
  } catch (const setting_error& e) {
    return e.what();
  }
  return "no error";
}

const option& named(option_surface surface, std::string_view name) {
  const option* found = find_option(surface, name);
  BOOST_TEST_REQUIRE(found != nullptr, name);
  return *found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(option_table)

BOOST_AUTO_TEST_CASE(each_surface_shows_each_name_once_and_every_option_somewhere) {
  for (const option_surface surface : {cli_analyze, cli_run, environment, py_profile, py_analyze, py_run}) {
    std::set<std::string_view> names;
    for (const option* o : options_of(surface)) {
      const std::string_view name = surface == environment                               ? o->variable
                                    : (surface == cli_analyze || surface == cli_run) ? o->flag
                                                                                     : o->python;
      BOOST_TEST(!name.empty(), o->member << " has no name on surface " << surface);
      BOOST_TEST(names.insert(name).second, name << " twice on surface " << surface);
    }
  }
  for (const option& o : all_options()) {
    BOOST_TEST(o.surfaces != 0u, o.member);
    BOOST_TEST(!o.doc.empty(), o.member);
  }
}

BOOST_AUTO_TEST_CASE(the_struct_holds_the_declared_defaults) {
  const profile_options o;
  BOOST_TEST(o.warmup_runs == 3u);
  BOOST_TEST(o.measured_runs == 10u);
  BOOST_TEST(o.device_tracing);
  BOOST_TEST(o.analysis.row_limit == 20u);
  BOOST_TEST(!o.window_runs);
  BOOST_TEST(!o.stopping.max_noise);
  // In-process profiles also take `region:` ranges (what REGIONPROF_REGION emits) as regions.
  BOOST_TEST((o.analysis.region_rules == in_process_region_rules()));
  BOOST_TEST(in_process_region_rules().size() == default_region_rules().size() + 1);
  BOOST_TEST(in_process_region_rules().back().pattern == "region:");
  BOOST_TEST((command_defaults().analysis.region_rules == default_region_rules()));
}

BOOST_AUTO_TEST_CASE(text_is_parsed_and_checked_as_the_command_and_environment_give_it) {
  const option& rows = named(cli_analyze, "--row-limit");
  BOOST_TEST(std::get<std::uint64_t>(parse_option_text(rows, "option --row-limit", "20")) == 20u);
  BOOST_CHECK_EXCEPTION(parse_option_text(rows, "option --row-limit", "0"), setting_error, [](const setting_error& e) {
    return std::string(e.what()) == "option --row-limit needs a whole number from 1 to 1000000, got '0'";
  });
  const option& cross = named(environment, "REGIONPROF_CROSS_THREAD");
  BOOST_TEST(std::get<bool>(parse_option_text(cross, "REGIONPROF_CROSS_THREAD", "1")));
  BOOST_TEST(!std::get<bool>(parse_option_text(cross, "REGIONPROF_CROSS_THREAD", "0")));
  const option& mode = named(cli_run, "--graph-attribution");
  BOOST_CHECK_EXCEPTION(parse_option_text(mode, "option --graph-attribution", "replay"), setting_error,
                        [](const setting_error& e) {
                          return std::string(e.what()) ==
                                 "option --graph-attribution must be 'capture' or 'launch', got 'replay'";
                        });
  BOOST_TEST(option_text(named(cli_run, "--region"), std::vector<std::string>{"a=b", "c"}) == "a=b\nc\n");
}

BOOST_AUTO_TEST_CASE(typed_values_are_checked_with_the_python_keywords_messages) {
  BOOST_TEST(error_of(named(py_profile, "measured_runs"), "measured_runs", std::uint64_t{0}) ==
             "measured_runs must be at least 1, not 0");
  BOOST_TEST(error_of(named(py_profile, "window_runs"), "window_runs", std::uint64_t{2'000'000'000}) ==
             "window_runs must be at most 1000000000, not 2000000000");
  BOOST_TEST(error_of(named(py_profile, "graph_attribution"), "graph_attribution", std::string("replay")) ==
             "graph_attribution must be 'capture' or 'launch', not 'replay'");
  BOOST_TEST(error_of(named(py_profile, "regions"), "regions", std::vector<std::string>{"layer_(=layer"})
                 .starts_with("regions: region rule 'layer_(': invalid regex"));
  BOOST_TEST(error_of(named(py_profile, "cross_thread"), "cross_thread", std::uint64_t{1}) == "cross_thread needs on or off");
  // Optional values take none.
  profile_options o;
  o.window_runs = 5;
  set_option(o, named(py_profile, "window_runs"), "window_runs", std::monostate{});
  BOOST_TEST(!o.window_runs);
}

BOOST_AUTO_TEST_CASE(values_read_back_as_they_were_set) {
  profile_options o;
  set_option(o, named(py_profile, "max_noise"), "max_noise", 0.02);
  set_option(o, named(py_analyze, "run_marker"), "run_marker", std::string("step#\\d+"));
  set_option(o, named(py_analyze, "warmup_runs"), "warmup_runs", std::uint64_t{4});
  BOOST_TEST(*o.stopping.max_noise == 0.02);
  BOOST_TEST((o.analysis.run_marker.match == match_kind::regex));
  BOOST_TEST(o.analysis.skip_runs == 4u);
  BOOST_TEST(std::get<std::string>(named(py_analyze, "run_marker").get(o)) == "step#\\d+");
  BOOST_TEST(!same_value(o, profile_options{}, named(py_analyze, "run_marker")));
  BOOST_TEST(same_value(o, profile_options{}, named(py_profile, "row_limit")));
}

BOOST_AUTO_TEST_CASE(defaults_as_docs_and_stubs_show_them) {
  BOOST_TEST(default_text(named(py_profile, "warmup_runs"), true) == "3");
  BOOST_TEST(default_text(named(py_profile, "device_tracing"), true) == "True");
  BOOST_TEST(default_text(named(py_profile, "window_runs"), true) == "None");
  BOOST_TEST(default_text(named(py_profile, "graph_attribution"), true) == "'capture'");
  BOOST_TEST(default_text(named(cli_run, "--cross-thread"), false) == "off");
}

BOOST_AUTO_TEST_SUITE_END()
