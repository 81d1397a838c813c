// The `regionprof` command line: exit codes 0/1/2 with their messages, the files -o/--markdown/--trace
// write, --help and --version.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <string>
#include <string_view>

#include "cli_runner.hpp"
#include "regionprof/import/import.hpp"

using cli_test::run_cli;

namespace {
bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// A usage error: exit 2, the message, the synopsis and the hint on stderr, nothing on stdout.
void expect_usage_error(const std::vector<std::string>& args, std::string_view message) {
  BOOST_TEST_CONTEXT("regionprof " << [&] {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    return joined;
  }()) {
    const auto r = run_cli(args);
    BOOST_TEST(r.exit_code == 2);
    BOOST_TEST(r.out.empty());
    BOOST_TEST(contains(r.err, message), r.err);
    BOOST_TEST(contains(r.err, "usage: regionprof analyze"), r.err);
    BOOST_TEST(contains(r.err, "Try 'regionprof analyze --help'"), r.err);
  }
}
}  // namespace

BOOST_AUTO_TEST_SUITE(cli)

BOOST_AUTO_TEST_CASE(version) {
  const auto r = run_cli({"--version"});
  BOOST_TEST(r.exit_code == 0);
  BOOST_TEST(r.out == "regionprof " REGIONPROF_VERSION_TEXT "\n");
}

BOOST_AUTO_TEST_CASE(help_describes_every_command_and_flag) {
  const auto top = run_cli({"--help"});
  BOOST_TEST(top.exit_code == 0);
  BOOST_TEST(contains(top.out, "usage: regionprof <command>"));
  BOOST_TEST(contains(top.out, "  analyze "));
  BOOST_TEST(contains(top.out, "Exit status: 0 success, 1 input error"));
  const auto help = run_cli({"analyze", "--help"});
  BOOST_TEST(help.exit_code == 0);
  for (std::string_view part : {"usage: regionprof analyze", "--run-marker REGEX", "--region REGEX[=KIND]",
                                "--cross-thread", "--graph-attribution MODE", "--row-limit N", "-o OUT.json", "--markdown OUT.md",
                                "--trace OUT.json", "first capture group", "first matching rule wins",
                                "Markdown report goes to standard output", "Exit status:", "2  usage error",
                                "1  input error", "ProfilerStep#\\d+", ".json.gz"}) {
    BOOST_TEST(contains(help.out, part), "analyze --help lacks '" << part << "'");
  }
  BOOST_TEST(run_cli({"analyze", "-h"}).out == help.out);
  BOOST_TEST(run_cli({"help", "analyze"}).out == help.out);
}

BOOST_AUTO_TEST_CASE(usage_errors_exit_2) {
  const std::string trace = cli_test::data_file("basic.json");
  expect_usage_error({"analyze"}, "regionprof analyze: missing TRACE");
  expect_usage_error({"analyze", "--bogus", trace}, "regionprof analyze: unknown option '--bogus'");
  expect_usage_error({"analyze", trace, "--region"}, "option --region needs a value");
  expect_usage_error({"analyze", "--region", "layer_(", trace}, "option --region: region rule 'layer_(': invalid regex (RE2 syntax");
  expect_usage_error({"analyze", "--run-marker", "[step", trace}, "option --run-marker: run marker '[step': invalid regex (RE2 syntax");
  expect_usage_error({"analyze", "--run-marker=", trace}, "option --run-marker: run marker '': empty regex");
  expect_usage_error({"analyze", "--row-limit", "abc", trace}, "option --row-limit needs a whole number from 1 to 1000000, got 'abc'");
  expect_usage_error({"analyze", "--row-limit", "0", trace}, "got '0'");
  expect_usage_error({"analyze", "--row-limit=-3", trace}, "got '-3'");
  expect_usage_error({"analyze", "--cross-thread=yes", trace}, "option --cross-thread takes no value");
  expect_usage_error({"analyze", "--graph-attribution", "replay", trace},
                     "option --graph-attribution must be 'capture' or 'launch', got 'replay'");

  const auto none = run_cli({});
  BOOST_TEST(none.exit_code == 2);
  BOOST_TEST(contains(none.err, "regionprof: missing command"));
  const auto unknown = run_cli({"analyse", trace});
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(contains(unknown.err, "regionprof: unknown command 'analyse'"));
}

BOOST_AUTO_TEST_CASE(input_errors_exit_1_naming_the_file) {
  const std::string missing = cli_test::data_file("does_not_exist.json");
  auto r = run_cli({"analyze", missing});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.out.empty());
  BOOST_TEST(r.err == "regionprof: " + missing + ": cannot open: No such file or directory\n");

  const std::string directory = cli_test::data_file("");  // the test data folder itself
  r = run_cli({"analyze", directory});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(r.err == "regionprof: " + directory + ": is a directory, not a trace (a Chrome trace JSON file, plain or gzip)\n");

  const std::string broken = cli_test::data_file("syntax_error.json");
  r = run_cli({"analyze", broken});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.err, "regionprof: " + broken + ": invalid JSON in traceEvents[1]"), r.err);
  BOOST_TEST(contains(r.err, "(at line 1, column 135, byte offset 134)"), r.err);

  const std::string truncated = cli_test::data_file("truncated.json.gz");
  r = run_cli({"analyze", truncated});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.err, "regionprof: " + truncated + ": truncated gzip stream"), r.err);

  const std::string no_events = cli_test::data_file("missing_trace_events.json");
  r = run_cli({"analyze", no_events});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.err, "no 'traceEvents' array"), r.err);
}

BOOST_AUTO_TEST_CASE(markdown_goes_to_stdout_without_o) {
  const auto r = run_cli({"analyze", "--run-marker", R"(ProfilerStep#\d+)", cli_test::data_file("basic.json")});
  BOOST_TEST(r.exit_code == 0, r.err);
  BOOST_TEST(r.err.empty());
  BOOST_TEST(contains(r.out, "ProfilerStep#\\d+"), r.out);  // the rule, in the report's config
  BOOST_TEST(contains(r.out, "500.000"), r.out);             // the run's 500 us
}

BOOST_AUTO_TEST_CASE(o_markdown_and_trace_write_their_files) {
  const std::string input = cli_test::data_file("basic.json.gz");
  const std::string json = cli_test::temp_path("report.json");
  const std::string markdown = cli_test::temp_path("report.md");
  const std::string chrome = cli_test::temp_path("trace.json");
  const auto r = run_cli({"analyze", "--run-marker", R"(ProfilerStep#\d+)", "--region", "aten::(.*)=op", "--region",
                          "cuda.*", "--row-limit", "2", "-o", json, "--markdown", markdown, "--trace", chrome, input});
  BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
  BOOST_TEST(r.out.empty());  // -o: nothing on stdout

  const boost::json::value report = boost::json::parse(cli_test::read_file(json));
  BOOST_TEST(report.at("schema_version").as_int64() == 1);
  BOOST_TEST(report.at("target").at("type").as_string() == "kineto_trace");
  BOOST_TEST(report.at("target").at("distributedInfo").at("rank").as_int64() == 3);  // kept for the target
  BOOST_TEST(report.at("target").at("deviceProperties").at(0).at("name").as_string() == "NVIDIA H100");
  const auto& rules = report.at("config").at("region_rules").as_array();
  BOOST_TEST(rules.size() == 2u);  // given rules replace the defaults
  const auto& runs = report.at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == 1u);
  BOOST_TEST(runs[0].at("timing").at("cpu_time_us").to_number<double>() == 500.0);
  // aten::mm (100.5 us) is the one op region; its launch's kernel (12.25 us) is its device time.
  const auto& regions = runs[0].at("regions").as_array();
  BOOST_TEST_REQUIRE(regions.size() == 1u);
  BOOST_TEST(regions[0].at("region_id").as_string() == "op:mm");
  BOOST_TEST(regions[0].at("calls").to_number<int>() == 1);
  BOOST_TEST(regions[0].at("cpu_time_us").to_number<double>() == 100.5);
  BOOST_TEST(regions[0].at("device_time_us").to_number<double>() == 12.25);
  BOOST_TEST(report.at("profiler").at("key_averages").at("cpu_time_total").at("events").as_array().size() <= 2u);

  BOOST_TEST(contains(cli_test::read_file(markdown), "op:mm"));
  // The trace written reads back to the same records.
  const regionprof::trace original = regionprof::import_kineto_trace(input);
  const regionprof::trace back = regionprof::import_kineto_trace(chrome);
  BOOST_TEST(back.intervals.size() == original.intervals.size());
  BOOST_TEST(back.device_ops.size() == original.device_ops.size());
  BOOST_TEST(back.target.type == "kineto_trace");
  BOOST_TEST(back.device_ops.at(0).end_ns == original.device_ops.at(0).end_ns);
  for (const auto& path : {json, markdown, chrome}) std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(an_output_that_cannot_be_written_is_an_error) {
  const std::string output = "/nonexistent-regionprof-dir/report.json";
  const auto r = run_cli({"analyze", "-o", output, cli_test::data_file("basic.json")});
  BOOST_TEST(r.exit_code == 1);
  BOOST_TEST(contains(r.err, "'" + output + "'"), r.err);
}

BOOST_AUTO_TEST_SUITE_END()
