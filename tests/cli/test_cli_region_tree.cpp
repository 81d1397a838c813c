// The region tree (docs/design.md, rule 14) on the real torch.profiler traces of REGIONPROF_TRACES_DIR
// (skipped, exit 77, without it): AlexNet's operator tree (`--region 'aten::(.*)=op'`) node by node
// against the naive reference and the invariants, first the engine, then the CLI's JSON and Markdown.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/import/import.hpp"
#include "support/reference_attribution.hpp"
#include "support/shared_traces.hpp"
#include "support/tree_checks.hpp"

using namespace regionprof;

namespace {

const std::string alexnet_file = "alexnet_a100_kineto.json.gz";
const std::string alexnet_marker = R"(\[param\|pytorch\.model\.alex_net\|0\|0\|0\|measure\|forward\])";
const std::string op_rule = "aten::(.*)=op";

void check_engine_against_reference(bool cross_thread) {
  const trace t = import_kineto_trace(regionprof::test::shared_trace(alexnet_file));
  analysis_options options;
  options.run_marker = {match_kind::regex, alexnet_marker, "run", ""};
  options.region_rules = {parse_region_arg(op_rule)};
  options.cross_thread = cross_thread;
  const analysis_result got = analyze(t, options);
  for (const std::string& line : test::tree_violations(got)) BOOST_ERROR(line);

  test::reference::rules rules;
  rules.run_marker = std::regex(alexnet_marker, std::regex::ECMAScript);
  rules.regions.push_back({std::regex("aten::(.*)", std::regex::ECMAScript), "op"});
  rules.cross_thread = cross_thread;
  const auto want = test::reference::attribute(t, rules).runs;
  BOOST_TEST_REQUIRE(got.runs.size() == want.size());
  BOOST_TEST_REQUIRE(got.runs.size() == 1u);
  std::size_t deep = 0;
  for (std::size_t r = 0; r < want.size(); ++r) {
    const run_result& run = got.runs[r];
    BOOST_TEST(run.tree.size() == want[r].tree.size());
    for (std::size_t i = 0; i < run.tree.size(); ++i) {
      std::vector<std::string> path;
      for (std::uint32_t region : tree_path(run.tree, i)) path.push_back(got.tree_regions.at(region).id);
      if (path.size() >= 3) ++deep;
      BOOST_TEST_CONTEXT("run " << r << " " << test::path_text(got, run, i)) {
        auto found = want[r].tree.find(path);
        BOOST_TEST_REQUIRE((found != want[r].tree.end()));
        const tree_node& node = run.tree[i];
        BOOST_TEST(node.calls == found->second.calls);
        BOOST_TEST(node.cpu_time_ns == found->second.cpu_ns);
        BOOST_TEST(node.self_cpu_time_ns == found->second.self_cpu_ns);
        BOOST_TEST(node.device_time_ns.value_or(-1) == found->second.device_ns);
        BOOST_TEST(node.self_device_time_ns.value_or(-1) == found->second.self_device_ns);
      }
    }
  }
  BOOST_TEST(deep > 0u);  // the operator tree nests (aten::conv2d > aten::convolution > aten::_convolution ...)
}

std::int64_t ns(const boost::json::value& us) { return std::llround(us.to_number<double>() * 1000.0); }

}  // namespace

BOOST_AUTO_TEST_SUITE(region_tree_real_traces)

BOOST_AUTO_TEST_CASE(engine_alexnet_operator_tree) { check_engine_against_reference(false); }
BOOST_AUTO_TEST_CASE(engine_alexnet_operator_tree_cross_thread) { check_engine_against_reference(true); }

// The CLI's JSON: per node self = inclusive - children, self >= 0, topmost nodes = the run's regions[];
// and the Markdown tree indents the operators under the operators that called them.
BOOST_AUTO_TEST_CASE(cli_alexnet_operator_tree) {
  const std::string input = regionprof::test::shared_trace(alexnet_file);
  const std::string json_path = cli_test::temp_path("alexnet_tree.json");
  const cli_test::cli_result cli =
      cli_test::run_cli({"analyze", "--run-marker", alexnet_marker, "--region", op_rule, "-o", json_path, input});
  BOOST_TEST_REQUIRE(cli.exit_code == 0, cli.err);
  const boost::json::value report = boost::json::parse(cli_test::read_file(json_path));
  std::remove(json_path.c_str());
  const boost::json::array& runs = report.at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == 1u);
  for (const boost::json::value& run : runs) {
    const boost::json::array& tree = run.at("tree").as_array();
    BOOST_TEST_REQUIRE(!tree.empty());
    std::map<std::string, std::int64_t> child_cpu;
    std::map<std::string, std::int64_t> child_device;
    auto key = [](const boost::json::array& path, std::size_t length) {
      std::string text;
      for (std::size_t k = 0; k < length; ++k) text += std::string(path[k].as_string()) + "/";
      return text;
    };
    for (const boost::json::value& node : tree) {
      const boost::json::array& path = node.at("path").as_array();
      if (path.size() < 2) continue;
      child_cpu[key(path, path.size() - 1)] += ns(node.at("cpu_time_us"));
      child_device[key(path, path.size() - 1)] += ns(node.at("device_time_us"));
    }
    std::vector<const boost::json::value*> topmost;
    for (const boost::json::value& node : tree) {
      const boost::json::array& path = node.at("path").as_array();
      const std::string k = key(path, path.size());
      BOOST_TEST_CONTEXT(k) {
        BOOST_TEST(ns(node.at("self_cpu_time_us")) == ns(node.at("cpu_time_us")) - child_cpu[k]);
        BOOST_TEST(ns(node.at("self_device_time_us")) == ns(node.at("device_time_us")) - child_device[k]);
        BOOST_TEST(ns(node.at("self_cpu_time_us")) >= 0);
        BOOST_TEST(ns(node.at("self_device_time_us")) >= 0);
      }
      if (path.size() == 1) topmost.push_back(&node);
    }
    const boost::json::array& regions = run.at("regions").as_array();
    BOOST_TEST_REQUIRE(topmost.size() == regions.size());
    for (std::size_t k = 0; k < regions.size(); ++k) {
      BOOST_TEST(topmost[k]->at("path").at(0).as_string() == regions[k].at("region_id").as_string());
      BOOST_TEST(topmost[k]->at("calls").as_int64() == regions[k].at("calls").as_int64());
      BOOST_TEST(ns(topmost[k]->at("cpu_time_us")) == ns(regions[k].at("cpu_time_us")));
      BOOST_TEST(ns(topmost[k]->at("device_time_us")) == ns(regions[k].at("device_time_us")));
    }
  }
  BOOST_TEST(report.at("tree_summary").as_array().size() == runs[0].at("tree").as_array().size());

  const cli_test::cli_result markdown =
      cli_test::run_cli({"analyze", "--run-marker", alexnet_marker, "--region", op_rule, input});
  BOOST_TEST_REQUIRE(markdown.exit_code == 0, markdown.err);
  const auto at = markdown.out.find("\n## Region tree\n");
  BOOST_TEST_REQUIRE(at != std::string::npos);
  BOOST_TEST_MESSAGE(markdown.out.substr(at, 3000));
  BOOST_TEST(markdown.out.find("\nop:conv2d ", at) != std::string::npos);
  BOOST_TEST(markdown.out.find("\n  op:convolution ", at) != std::string::npos);
  BOOST_TEST(markdown.out.find("\n    op:_convolution ", at) != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
