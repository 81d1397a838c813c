// The region tree in the reports (docs/report-schema.md: `runs[i].tree`, `tree_summary`, the Markdown
// "Region tree"; docs/design.md, rule 14), from analyses of hand-built traces.
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "support/report_fixtures.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

// Three runs on one thread (ns):
//   run 0 [0, 100]:     A [10, 90] holding B [20, 30]                    A/B 10
//   run 1 [200, 300]:   A [210, 290]                                     no A/B
//   run 2 [400, 500]:   A [410, 490] holding B [420, 440] and B [450, 460] A/B 30 (2 calls)
//     B [450, 460] holds a launch (corr 1) of a 5 ns kernel
trace three_runs(bool device) {
  test::trace_builder b;
  b.thread(1)
      .marker(0, 100)
      .range("aot_module:A", 10, 90)
      .range("aot_module:B", 20, 30)
      .marker(200, 300)
      .range("aot_module:A", 210, 290)
      .marker(400, 500)
      .range("aot_module:A", 410, 490)
      .range("aot_module:B", 420, 440)
      .range("aot_module:B", 450, 460);
  if (device) b.launch(452, 453, 1).kernel("k", 600, 605, 1);
  return b.build();
}

std::vector<std::string> path_of(const json::value& node) {
  std::vector<std::string> path;
  for (const json::value& id : node.at("path").as_array()) path.emplace_back(id.as_string());
  return path;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tree_report)

BOOST_AUTO_TEST_CASE(runs_carry_their_tree_depth_first) {
  const trace t = three_runs(true);
  const analysis_result result = analyze(t, analysis_options{});
  const json::object report = parse(to_json(Profile(t, analysis_options{}, fixed_context(), result))).as_object();
  const json::array& runs = report.at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == 3u);
  BOOST_TEST(keys(runs[0].as_object()) ==
                 (std::vector<std::string>{"run_index", "timing", "regions", "residual", "tree"}),
             boost::test_tools::per_element());
  const json::array& tree = runs[2].at("tree").as_array();
  BOOST_TEST_REQUIRE(tree.size() == 2u);
  BOOST_TEST(path_of(tree[0]) == (std::vector<std::string>{"aot_module:A"}));
  BOOST_TEST(path_of(tree[1]) == (std::vector<std::string>{"aot_module:A", "aot_module:B"}));
  BOOST_TEST(keys(tree[0].as_object()) == (std::vector<std::string>{"path", "calls", "cpu_time_us", "self_cpu_time_us",
                                                                    "device_time_us", "self_device_time_us"}),
             boost::test_tools::per_element());
  BOOST_TEST(tree[1].at("calls").as_int64() == 2);
  BOOST_TEST(num(tree[1].at("cpu_time_us")) == 0.03);       // 20 + 10 ns
  BOOST_TEST(num(tree[0].at("self_cpu_time_us")) == 0.05);  // 80 - 30 ns
  BOOST_TEST(num(tree[0].at("device_time_us")) == 0.005);
  BOOST_TEST(num(tree[0].at("self_device_time_us")) == 0.0);
  BOOST_TEST(num(tree[1].at("self_device_time_us")) == 0.005);
  BOOST_TEST(runs[1].at("tree").as_array().size() == 1u);
  // The top level: tree_summary after region_summary and run_summary, the other additions; then
  // region_ops (rule 20).
  const std::vector<std::string> top = keys(report);
  BOOST_TEST_REQUIRE(top.size() >= 4u);
  BOOST_TEST(top[top.size() - 4] == "region_summary");
  BOOST_TEST(top[top.size() - 3] == "run_summary");
  BOOST_TEST(top[top.size() - 2] == "tree_summary");
  BOOST_TEST(top.back() == "region_ops");
}

BOOST_AUTO_TEST_CASE(tree_summary_takes_medians_over_all_runs_with_absent_as_zero) {
  const trace t = three_runs(false);
  const analysis_result result = analyze(t, analysis_options{});
  const json::array summary =
      parse(to_json(Profile(t, analysis_options{}, fixed_context(), result))).at("tree_summary").as_array();
  BOOST_TEST_REQUIRE(summary.size() == 2u);
  BOOST_TEST(keys(summary[0].as_object()) ==
                 (std::vector<std::string>{"path", "runs_present", "calls", "cpu_time_us", "self_cpu_time_us"}),
             boost::test_tools::per_element());  // no device data: no device field
  BOOST_TEST(path_of(summary[1]) == (std::vector<std::string>{"aot_module:A", "aot_module:B"}));
  BOOST_TEST(summary[1].at("runs_present").as_int64() == 2);
  BOOST_TEST(num(summary[1].at("calls")) == 1.0);             // median of 1, 0, 2
  BOOST_TEST(num(summary[1].at("cpu_time_us")) == 0.01);      // median of 10, 0, 30 ns
  BOOST_TEST(num(summary[0].at("cpu_time_us")) == 0.08);      // 80, 80, 80
  BOOST_TEST(num(summary[0].at("self_cpu_time_us")) == 0.07); // median of 70, 80, 50
}

BOOST_AUTO_TEST_CASE(no_tree_no_keys_and_no_section) {
  const trace t = three_runs(false);
  analysis_options off;
  off.region_tree = false;
  const analysis_result result = analyze(t, off);
  const json::object report = parse(to_json(Profile(t, off, fixed_context(), result))).as_object();
  BOOST_TEST(!report.contains("tree_summary"));
  BOOST_TEST(!report.at("runs").at(0).as_object().contains("tree"));
  BOOST_TEST(to_markdown(Profile(t, off, fixed_context(), result)).find("## Region tree") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(markdown_indents_each_node_under_its_parent) {
  const trace t = three_runs(true);
  const analysis_result result = analyze(t, analysis_options{});
  const std::string text = to_markdown(Profile(t, analysis_options{}, fixed_context(), result));
  const auto at = text.find("\n## Region tree\n");
  BOOST_TEST_REQUIRE(at != std::string::npos);
  BOOST_TEST(at > text.find("\n## Attribution per run\n"));
  BOOST_TEST(at < text.find("\n## Key averages\n"));
  const std::string section = text.substr(at, text.find("\n## Key averages\n") - at);
  BOOST_TEST_MESSAGE(section);
  BOOST_TEST(section.find("\nregion          runs  calls  CPU (us)  self CPU (us)  device (us)  self device (us)\n") !=
             std::string::npos);
  BOOST_TEST(section.find("\naot_module:A       3      1     0.080          0.070        0.000             0.000\n") !=
             std::string::npos);
  BOOST_TEST(section.find("\n  aot_module:B     2      1     0.010          0.010        0.000             0.000\n") !=
             std::string::npos);
  BOOST_TEST(section.find(" \n") == std::string::npos);  // no line ends in a space
}

BOOST_AUTO_TEST_SUITE_END()
