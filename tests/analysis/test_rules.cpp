// Rules 2-3: marker and region rules (regex with and without a capture group, prefix, exact, domain
// filter, first rule wins) on the "regex_rules" test trace:
//
//   ProfilerStep#1 [0,1000]                      ProfilerStep#2 [1000,2000]
//     "## forward ##" [100,500]   phase:forward     "## backward ##" [1100,1500]  phase:backward
//     layer_3 (python) [600,700]  layer:layer_3     layer_12 [1600,1700]          layer:layer_12
//     block.7 [800,900] model     block:7           conv [1750,1800]              op:conv
//     block.8 [910,950] other     (no rule)         api "conv" [1850,1860]        (API: never)
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "support/analysis_queries.hpp"
#include "support/test_traces.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

analysis_result regex_result() {
  const named_trace t = test_trace("regex_rules");
  return analyze(t.value, t.options);
}

using ids = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(rule_matching)

BOOST_AUTO_TEST_CASE(regex_marker_and_touching_runs) {
  const analysis_result r = regex_result();
  // ProfilerStep#2 starts at #1's end: not contained, so a run of its own.
  BOOST_TEST_REQUIRE(r.runs.size() == 2u);
  BOOST_TEST(r.runs[0].cpu_time_ns == 1000);
  BOOST_TEST(r.runs[1].cpu_time_ns == 1000);
  BOOST_TEST(r.warnings.empty());
}

BOOST_AUTO_TEST_CASE(regex_with_capture_group) {
  const analysis_result r = regex_result();
  const region_aggregate* forward = find_region(r, r.runs[0], "phase:forward");
  BOOST_TEST_REQUIRE(forward != nullptr);
  BOOST_TEST(forward->cpu_time_ns == 400);
  BOOST_TEST(find_region(r, r.runs[1], "phase:backward")->cpu_time_ns == 400);
  BOOST_TEST(r.regions.at(0).name == "forward");
  BOOST_TEST(r.regions.at(0).kind == "phase");
}

BOOST_AUTO_TEST_CASE(regex_without_group_uses_the_whole_name) {
  const analysis_result r = regex_result();
  // layer_3 is a python_function, layer_12 a cpu_op: both kinds are matched.
  BOOST_TEST(find_region(r, r.runs[0], "layer:layer_3")->cpu_time_ns == 100);
  BOOST_TEST(find_region(r, r.runs[1], "layer:layer_12")->cpu_time_ns == 100);
}

BOOST_AUTO_TEST_CASE(prefix_rule_with_domain_filter) {
  const analysis_result r = regex_result();
  BOOST_TEST(find_region(r, r.runs[0], "block:7")->cpu_time_ns == 100);  // remainder after "block."
  BOOST_TEST(!find_region(r, r.runs[0], "block:8"));                     // domain "other"
  // Run 0: 400 + 100 + 100 = 600 owned, residual 400.
  BOOST_TEST(r.runs[0].residual_cpu_ns == 400);
}

BOOST_AUTO_TEST_CASE(exact_rule_and_api_calls_never_match) {
  const analysis_result r = regex_result();
  const region_aggregate* conv = find_region(r, r.runs[1], "op:conv");
  BOOST_TEST_REQUIRE(conv != nullptr);
  BOOST_TEST(conv->calls == 1u);  // the API call named "conv" is not a second call
  BOOST_TEST(conv->cpu_time_ns == 50);
  BOOST_TEST(r.runs[1].residual_cpu_ns == 450);  // 1000 - 400 - 100 - 50
}

BOOST_AUTO_TEST_CASE(first_matching_rule_wins) {
  const analysis_result r = regex_result();
  // layer_12 also matches the later "layer_(\d+)" -> late:12 rule; the earlier layer rule wins.
  BOOST_TEST(region_ids(r) ==
                 (ids{"phase:forward", "layer:layer_3", "block:7", "phase:backward", "layer:layer_12", "op:conv"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(regex_must_match_the_whole_name) {
  trace_builder b;
  b.thread(1).marker(0, 100).range("layer_3", 10, 20).range("step", 30, 40);
  analysis_options options;
  options.region_rules = {{match_kind::regex, "layer", "layer", ""},         // a part only: no match
                          {match_kind::regex, "step(_\\d+)?", "step", ""}};  // group not taken: ""
  const analysis_result r = analyze(b.get(), options);
  BOOST_TEST(region_ids(r) == (ids{"step:"}), boost::test_tools::per_element());
  BOOST_TEST(r.regions[0].name.empty());
}

BOOST_AUTO_TEST_CASE(rule_domain_absent_from_trace_never_matches) {
  trace_builder b;
  b.thread(1).marker(0, 100).range("aot_module:a", 10, 20);
  analysis_options options;
  options.region_rules = {{match_kind::prefix, "aot_module:", "aot_module", "nowhere"}};
  const analysis_result r = analyze(b.get(), options);
  BOOST_TEST(r.regions.empty());
  BOOST_TEST(r.runs.at(0).residual_cpu_ns == 100);
}

BOOST_AUTO_TEST_CASE(same_name_in_two_domains) {
  // The classification cache is per (name, domain): "block.1" in model is a region, in other it is not.
  trace_builder b;
  b.thread(1).marker(0, 100).range("block.1", 10, 20, "other").range("block.1", 30, 50, "model");
  analysis_options options;
  options.region_rules = {{match_kind::prefix, "block.", "block", "model"}};
  const analysis_result r = analyze(b.get(), options);
  BOOST_TEST(find_region(r, r.runs.at(0), "block:1")->cpu_time_ns == 20);
  BOOST_TEST(find_region(r, r.runs.at(0), "block:1")->calls == 1u);
}

BOOST_AUTO_TEST_CASE(invalid_regex_throws_naming_the_rule) {
  const trace t;
  analysis_options options;
  options.region_rules = {{match_kind::regex, "layer_(", "layer", ""}};
  try {
    analyze(t, options);
    BOOST_FAIL("an invalid region regex must throw");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("region rule 'layer_(': invalid regex (RE2 syntax") != std::string::npos);
  }
  analysis_options marker;
  marker.run_marker = {match_kind::regex, "[step", "run", ""};
  try {
    analyze(t, marker);
    BOOST_FAIL("an invalid marker regex must throw");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()).find("run marker '[step': invalid regex (RE2 syntax") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(marker_rule_wins_over_region_rules) {
  // A range matching both the marker rule and a region rule is a marker.
  trace_builder b;
  b.thread(1).range("step", 0, 100).range("step", 200, 300);
  analysis_options options;
  options.run_marker = {match_kind::exact, "step", "run", ""};
  options.region_rules = {{match_kind::exact, "step", "region", ""}};
  const analysis_result r = analyze(b.get(), options);
  BOOST_TEST(r.runs.size() == 2u);
  BOOST_TEST(r.regions.empty());
}

// docs/design.md, rule 11: RE2. Unsupported constructs are refused when the rule is validated, with
// the rule and RE2's reason; a valid rule matches in linear time whatever the name.
BOOST_AUTO_TEST_CASE(backreferences_and_lookaround_are_refused_naming_the_rule) {
  for (const std::string pattern : {"(a)\\1", "layer(?=_0)", "(?<!x)layer", "a{2,1}"}) {
    try {
      validate_name_rule({match_kind::regex, pattern, "layer", ""}, "region rule");
      BOOST_FAIL("RE2 must refuse " + pattern);
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      BOOST_TEST(message.starts_with("region rule '" + pattern + "': invalid regex (RE2 syntax"), message);
    }
  }
  BOOST_CHECK_THROW(parse_region_arg("(a)\\1=r"), std::invalid_argument);
  BOOST_CHECK_NO_THROW(validate_name_rule({match_kind::regex, "(?i)step#\\d+", "run", ""}, "run marker"));
}

BOOST_AUTO_TEST_CASE(a_20_mb_name_and_a_nested_quantifier_match_in_linear_time) {
  // std::regex recursed once per character here (a stack overflow at ~20 MB) and took exponential
  // time on (a+)+b; RE2 does neither.
  const std::string huge = "r" + std::string(20u << 20, 'x');
  const std::string as(100'000, 'a');
  trace t = trace_builder()
                .thread(1)
                .marker(0, 1000)
                .range(huge, 10, 110)
                .range(as, 200, 300)
                .range(as + "b", 400, 450)
                .build();
  analysis_options options;
  options.region_rules = {parse_region_arg("r(.*)=r"), parse_region_arg("((a+)+b)=nested")};
  const analysis_result r = analyze(t, options);
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  BOOST_TEST_REQUIRE(r.regions.size() == 2u);
  BOOST_TEST(r.regions[0].id.size() == 2 + (20u << 20));  // "r:" + the 20 MiB of x
  BOOST_TEST(find_region(r, r.runs[0], r.regions[0].id)->cpu_time_ns == 100);
  BOOST_TEST(r.regions[1].id == "nested:" + as + "b");  // the a-only name does not match
  BOOST_TEST(find_region(r, r.runs[0], r.regions[1].id)->cpu_time_ns == 50);
}

BOOST_AUTO_TEST_SUITE_END()
