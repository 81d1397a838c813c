// The JSON report (docs/report-schema.md, schema_version 1), parsed back and compared field by field.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "support/report_fixtures.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace report_test;

namespace {

json::object report_of(const analysis_result& result, const trace& source = trace{},
                       const analysis_options& options = analysis_options{},
                       const report_context& context = fixed_context()) {
  return parse(to_json(Profile(source, options, context, result))).as_object();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(json_report)

BOOST_AUTO_TEST_CASE(top_level_keys_in_schema_order) {
  const std::string text = to_json(Profile(trace{}, analysis_options{}, fixed_context(), device_result()));
  const json::object report = parse(text).as_object();
  const std::vector<std::string> expected{"schema_version", "created_at", "tool",     "config",   "target", "input",
                                          "runs",           "profiler",   "regions", "warnings", "region_summary",
                                          "run_summary"};
  BOOST_TEST(keys(report) == expected, boost::test_tools::per_element());
  BOOST_TEST(report.at("schema_version").as_int64() == 1);
  BOOST_TEST(str(report.at("tool").at("name")) == "regionprof");
  BOOST_TEST(str(report.at("tool").at("version")) == REGIONPROF_EXPECTED_VERSION);
  BOOST_TEST(keys(report.at("tool").as_object()) == (std::vector<std::string>{"name", "version"}),
             boost::test_tools::per_element());
  const json::object& input = report.at("input").as_object();
  BOOST_TEST(input.at("args_count").as_int64() == 0);
  BOOST_TEST(input.at("kwargs").as_array().empty());
  BOOST_TEST(text.back() == '\n');
}

BOOST_AUTO_TEST_CASE(created_at_is_iso8601_utc) {
  BOOST_TEST(str(report_of(device_result()).at("created_at")) == "2024-05-01T12:34:56Z");

  report_context now_context = fixed_context();
  now_context.created_at.clear();
  const std::time_t before = std::time(nullptr);
  const std::string created = str(report_of(device_result(), trace{}, analysis_options{}, now_context).at("created_at"));
  const std::time_t after = std::time(nullptr);
  BOOST_TEST_INFO("created_at = " << created);
  BOOST_TEST(std::regex_match(created, std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")));
  std::tm parsed{};
  BOOST_TEST(std::sscanf(created.c_str(), "%d-%d-%dT%d:%d:%dZ", &parsed.tm_year, &parsed.tm_mon, &parsed.tm_mday,
                         &parsed.tm_hour, &parsed.tm_min, &parsed.tm_sec) == 6);
  parsed.tm_year -= 1900;
  parsed.tm_mon -= 1;
  const std::time_t stamp = timegm(&parsed);  // UTC, so the `Z` is honest
  BOOST_TEST(stamp >= before);
  BOOST_TEST(stamp <= after);
}

BOOST_AUTO_TEST_CASE(config_from_options_and_context) {
  analysis_options options;
  options.run_marker = {match_kind::regex, "ProfilerStep#\\d+", "run", ""};
  options.region_rules = {{match_kind::regex, "## (.*) ##", "phase", ""}, {match_kind::prefix, "aot_module:", "aot_module", "regionprof"}};
  options.cross_thread = true;
  const json::object config = report_of(device_result(), trace{}, options).at("config").as_object();
  BOOST_TEST(keys(config) == (std::vector<std::string>{"warmup_runs", "measured_runs", "uses_inference_function",
                                                       "run_marker", "region_rules", "cross_thread"}),
             boost::test_tools::per_element());
  BOOST_TEST(config.at("warmup_runs").as_int64() == 3);
  BOOST_TEST(config.at("measured_runs").as_int64() == 2);  // context says 0: the number of runs found
  BOOST_TEST(config.at("uses_inference_function").as_bool());
  BOOST_TEST(str(config.at("run_marker")) == "ProfilerStep#\\d+");
  BOOST_TEST(config.at("cross_thread").as_bool());
  const json::array& rules = config.at("region_rules").as_array();
  BOOST_TEST_REQUIRE(rules.size() == 2u);
  BOOST_TEST(keys(rules[0].as_object()) == (std::vector<std::string>{"match", "pattern", "kind", "domain"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(rules[0].at("match")) == "regex");
  BOOST_TEST(str(rules[0].at("pattern")) == "## (.*) ##");
  BOOST_TEST(str(rules[0].at("kind")) == "phase");
  BOOST_TEST(str(rules[0].at("domain")) == "");
  BOOST_TEST(str(rules[1].at("match")) == "prefix");
  BOOST_TEST(str(rules[1].at("domain")) == "regionprof");

  report_context context = fixed_context();
  context.measured_runs = 10;
  BOOST_TEST(report_of(device_result(), trace{}, options, context).at("config").at("measured_runs").as_int64() == 10);
}

BOOST_AUTO_TEST_CASE(target_type_then_modelled_then_foreign_members) {
  trace source;
  source.target = test::target_of(
      "kineto_trace", R"({"deviceProperties": [{"id": 0, "name": "NVIDIA A100", "totalGlobalMem": 42297524224}],
                          "distributedInfo": {"rank": 3, "world_size": 8}, "pid": 77, "host": "node-2"})");
  const json::object target = report_of(device_result(), source).at("target").as_object();
  BOOST_TEST(keys(target) == (std::vector<std::string>{"type", "host", "pid", "deviceProperties", "distributedInfo"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(target.at("type")) == "kineto_trace");
  BOOST_TEST(str(target.at("host")) == "node-2");
  BOOST_TEST(target.at("pid").as_int64() == 77);
  BOOST_TEST(target.at("deviceProperties").at(0).at("totalGlobalMem").as_int64() == 42297524224);
  BOOST_TEST(str(target.at("deviceProperties").at(0).at("name")) == "NVIDIA A100");
  BOOST_TEST(target.at("distributedInfo").at("rank").as_int64() == 3);

  BOOST_TEST(keys(report_of(device_result()).at("target").as_object()) == std::vector<std::string>{"type"},
             boost::test_tools::per_element());
  BOOST_TEST(str(report_of(device_result()).at("target").at("type")) == "callable");
}

BOOST_AUTO_TEST_CASE(run_times_in_microseconds_and_fractions) {
  const std::string text = to_json(Profile(trace{}, analysis_options{}, fixed_context(), device_result()));
  // Exact decimals in the text itself, not `1.234567E3`.
  BOOST_TEST(text.find("\"cpu_time_us\": 1234.567") != std::string::npos);
  BOOST_TEST(text.find("\"wall_time_us\": 1500.0") != std::string::npos);
  const json::array runs = parse(text).at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == 2u);
  const json::object& run = runs[0].as_object();
  BOOST_TEST(keys(run) == (std::vector<std::string>{"run_index", "timing", "regions", "residual"}),
             boost::test_tools::per_element());
  BOOST_TEST(run.at("run_index").as_int64() == 0);
  const json::object& timing = run.at("timing").as_object();
  BOOST_TEST(keys(timing) == (std::vector<std::string>{"wall_time_us", "cpu_time_us", "device_time_us",
                                                       "device_busy_us", "device_span_us", "devices"}),
             boost::test_tools::per_element());
  // One device (0): its figures are the run's.
  BOOST_TEST(num(timing.at("devices").at(0).at("device")) == 0.0);
  BOOST_TEST_REQUIRE(timing.at("devices").as_array().size() == 1u);
  BOOST_TEST(num(timing.at("devices").at(0).at("device_time_us")) == 400.0);
  BOOST_TEST(num(timing.at("devices").at(0).at("device_busy_us")) == 300.0);
  BOOST_TEST(num(timing.at("devices").at(0).at("device_span_us")) == 500.0);
  BOOST_TEST(num(timing.at("wall_time_us")) == 1500.0);
  BOOST_TEST(num(timing.at("cpu_time_us")) == 1234.567);
  BOOST_TEST(num(timing.at("device_time_us")) == 400.0);
  BOOST_TEST(num(timing.at("device_busy_us")) == 300.0);
  BOOST_TEST(num(timing.at("device_span_us")) == 500.0);

  const json::array& regions = run.at("regions").as_array();
  BOOST_TEST_REQUIRE(regions.size() == 2u);
  const json::object& encoder = regions[0].as_object();
  BOOST_TEST(keys(encoder) == (std::vector<std::string>{"region_id", "calls", "cpu_time_us", "cpu_time_fraction",
                                                        "device_time_us", "device_time_fraction"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(encoder.at("region_id")) == "aot_module:encoder");
  BOOST_TEST(encoder.at("calls").as_int64() == 2);
  BOOST_TEST(num(encoder.at("cpu_time_us")) == 600.0);
  BOOST_TEST(num(encoder.at("cpu_time_fraction")) == 600000.0 / 1234567.0);
  BOOST_TEST(num(encoder.at("device_time_us")) == 250.0);
  BOOST_TEST(num(encoder.at("device_time_fraction")) == 0.625);  // 250 000 / 400 000
  const json::object& head = regions[1].as_object();
  BOOST_TEST(str(head.at("region_id")) == "untuned_module:head");
  BOOST_TEST(num(head.at("cpu_time_us")) == 34.567);
  BOOST_TEST(num(head.at("device_time_fraction")) == 0.125);  // 50 000 / 400 000

  const json::object& residual = run.at("residual").as_object();
  BOOST_TEST(keys(residual) == (std::vector<std::string>{"cpu_time_us", "cpu_time_fraction", "device_time_us",
                                                         "device_time_fraction"}),
             boost::test_tools::per_element());
  BOOST_TEST(num(residual.at("cpu_time_us")) == 600.0);
  BOOST_TEST(num(residual.at("device_time_us")) == 100.0);
  BOOST_TEST(num(residual.at("device_time_fraction")) == 0.25);
  // Per domain, region fractions + residual fraction = 1.
  const double cpu_sum = num(encoder.at("cpu_time_fraction")) + num(head.at("cpu_time_fraction")) +
                         num(residual.at("cpu_time_fraction"));
  BOOST_TEST(cpu_sum == 1.0, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(zero_length_run_has_no_fractions) {
  const json::object run = report_of(device_result()).at("runs").at(1).as_object();
  BOOST_TEST(run.at("run_index").as_int64() == 1);
  BOOST_TEST(num(run.at("timing").at("cpu_time_us")) == 0.0);
  BOOST_TEST(num(run.at("timing").at("device_time_us")) == 0.0);  // present (device data) but 0
  const json::object& region = run.at("regions").at(0).as_object();
  BOOST_TEST(keys(region) == (std::vector<std::string>{"region_id", "calls", "cpu_time_us", "device_time_us"}),
             boost::test_tools::per_element());
  BOOST_TEST(keys(run.at("residual").as_object()) == (std::vector<std::string>{"cpu_time_us", "device_time_us"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(no_device_data_means_absent_device_fields) {
  const std::string text = to_json(Profile(trace{}, analysis_options{}, fixed_context(), cpu_only_result()));
  for (const char* field : {"device_time", "device_busy", "device_span", "self_device", "CUDA"}) {
    BOOST_TEST_INFO(field);
    BOOST_TEST(text.find(field) == std::string::npos);  // absent: not null, not 0
  }
  BOOST_TEST(text.find("null") == std::string::npos);
  const json::object report = parse(text).as_object();
  const json::object& run = report.at("runs").at(0).as_object();
  BOOST_TEST(keys(run.at("timing").as_object()) == (std::vector<std::string>{"wall_time_us", "cpu_time_us"}),
             boost::test_tools::per_element());
  const json::object& region = run.at("regions").at(0).as_object();
  BOOST_TEST(keys(region) == (std::vector<std::string>{"region_id", "calls", "cpu_time_us", "cpu_time_fraction"}),
             boost::test_tools::per_element());
  BOOST_TEST(num(region.at("cpu_time_fraction")) == 0.7);
  BOOST_TEST(num(run.at("residual").at("cpu_time_fraction")) == 0.3);
  const json::object& profiler = report.at("profiler").as_object();
  BOOST_TEST(profiler.at("activities").as_array() == json::array{"CPU"});
  BOOST_TEST(keys(profiler.at("key_averages").as_object()) == std::vector<std::string>{"cpu_time_total"},
             boost::test_tools::per_element());
  BOOST_TEST(keys(profiler.at("key_averages").at("cpu_time_total").at("events").at(0).as_object()) ==
                 (std::vector<std::string>{"key", "device_type", "count", "self_cpu_time_total_us", "cpu_time_total_us"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(off_thread_time_only_where_present) {
  const json::object report = report_of(device_result());
  const json::object& head = report.at("runs").at(0).at("regions").at(1).as_object();
  BOOST_TEST(keys(head) == (std::vector<std::string>{"region_id", "calls", "cpu_time_us", "cpu_time_fraction",
                                                     "device_time_us", "device_time_fraction", "off_thread_cpu_time_us"}),
             boost::test_tools::per_element());
  BOOST_TEST(num(head.at("off_thread_cpu_time_us")) == 12.345);
  BOOST_TEST(!report.at("runs").at(0).at("regions").at(0).as_object().contains("off_thread_cpu_time_us"));
}

BOOST_AUTO_TEST_CASE(key_averages_shape_and_row_order) {
  const json::object profiler = report_of(device_result()).at("profiler").as_object();
  BOOST_TEST(keys(profiler) == (std::vector<std::string>{"activities", "key_averages"}), boost::test_tools::per_element());
  BOOST_TEST(profiler.at("activities").as_array() == (json::array{"CPU", "CUDA"}));
  const json::object& views = profiler.at("key_averages").as_object();
  BOOST_TEST(keys(views) == (std::vector<std::string>{"cpu_time_total", "device_time_total"}),
             boost::test_tools::per_element());

  const json::object& cpu = views.at("cpu_time_total").as_object();
  BOOST_TEST(keys(cpu) == (std::vector<std::string>{"sort_by", "row_limit", "events"}), boost::test_tools::per_element());
  BOOST_TEST(str(cpu.at("sort_by")) == "cpu_time_total");
  BOOST_TEST(cpu.at("row_limit").as_int64() == 20);
  const json::array& rows = cpu.at("events").as_array();
  BOOST_TEST_REQUIRE(rows.size() == 3u);
  std::vector<std::string> order;
  for (const json::value& row : rows) order.push_back(str(row.at("key")));
  BOOST_TEST(order == (std::vector<std::string>{"aten::mm", "aot_module:encoder", "cudaLaunchKernel"}),
             boost::test_tools::per_element());
  const json::object& mm = rows[0].as_object();
  BOOST_TEST(keys(mm) == (std::vector<std::string>{"key", "device_type", "count", "self_cpu_time_total_us",
                                                   "cpu_time_total_us", "self_device_time_total_us",
                                                   "device_time_total_us"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(mm.at("device_type")) == "CPU");
  BOOST_TEST(mm.at("count").as_int64() == 4);
  BOOST_TEST(num(mm.at("self_cpu_time_total_us")) == 100.0);
  BOOST_TEST(num(mm.at("cpu_time_total_us")) == 300.0);
  BOOST_TEST(num(mm.at("self_device_time_total_us")) == 0.0);
  BOOST_TEST(num(mm.at("device_time_total_us")) == 200.0);

  const json::object& device = views.at("device_time_total").as_object();
  BOOST_TEST(str(device.at("sort_by")) == "device_time_total");
  BOOST_TEST(device.at("row_limit").as_int64() == 5);
  BOOST_TEST(device.at("events").as_array().size() == 2u);
  BOOST_TEST(str(device.at("events").at(0).at("key")) == "gemm_kernel");
  BOOST_TEST(str(device.at("events").at(0).at("device_type")) == "CUDA");
  BOOST_TEST(num(device.at("events").at(1).at("device_time_total_us")) == 50.0);
}

BOOST_AUTO_TEST_CASE(regions_and_warnings_lists) {
  const json::object report = report_of(device_result());
  const json::array& regions = report.at("regions").as_array();
  BOOST_TEST_REQUIRE(regions.size() == 2u);
  BOOST_TEST(keys(regions[1].as_object()) == (std::vector<std::string>{"id", "name", "kind", "module_type"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(regions[0].at("id")) == "aot_module:encoder");
  BOOST_TEST(str(regions[0].at("module_type")) == "-");
  BOOST_TEST(str(regions[1].at("name")) == "head");
  BOOST_TEST(str(regions[1].at("kind")) == "untuned_module");
  BOOST_TEST(str(regions[1].at("module_type")) == "torch::nn::Linear");

  const json::array& warnings = report.at("warnings").as_array();
  BOOST_TEST_REQUIRE(warnings.size() == 2u);
  BOOST_TEST(keys(warnings[0].as_object()) == (std::vector<std::string>{"code", "message", "source"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(warnings[0].at("code")) == "UNCORRELATED_DEVICE_OPS");
  BOOST_TEST(str(warnings[0].at("source")) == "core");
  BOOST_TEST(str(warnings[0].at("message")) == "2 device ops have a correlation id that matches no API call");
  BOOST_TEST(str(warnings[1].at("code")) == "DROPPED_DEVICE_RECORDS");
  BOOST_TEST(str(warnings[1].at("source")) == "cupti");

  BOOST_TEST(report_of(cpu_only_result()).at("warnings").as_array().empty());
}

BOOST_AUTO_TEST_CASE(region_summary_across_runs) {
  const json::array summary = report_of(device_result()).at("region_summary").as_array();
  BOOST_TEST_REQUIRE(summary.size() == 2u);
  // encoder: CPU 600 000 and 0 ns, device 250 000 and 0 ns over the two runs; 2 + 1 calls.
  const json::object& encoder = summary[0].as_object();
  BOOST_TEST(keys(encoder) == (std::vector<std::string>{"region_id", "runs_present", "calls_total", "cpu_time_us",
                                                        "device_time_us"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(encoder.at("region_id")) == "aot_module:encoder");
  BOOST_TEST(encoder.at("runs_present").as_int64() == 2);
  BOOST_TEST(encoder.at("calls_total").as_int64() == 3);
  BOOST_TEST(keys(encoder.at("cpu_time_us").as_object()) ==
                 (std::vector<std::string>{"mean", "min", "max", "median", "stddev", "mad", "cv"}),
             boost::test_tools::per_element());
  BOOST_TEST(num(encoder.at("cpu_time_us").at("mean")) == 300.0);
  // {600, 0} us: median 300, sample stddev sqrt((300^2 + 300^2) / 1) = 300 sqrt(2), mad median(300, 300) = 300,
  // cv = 300 sqrt(2) / 300 = sqrt(2).
  BOOST_TEST(num(encoder.at("cpu_time_us").at("median")) == 300.0);
  BOOST_TEST(num(encoder.at("cpu_time_us").at("stddev")) == 300.0 * std::sqrt(2.0), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(num(encoder.at("cpu_time_us").at("mad")) == 300.0);
  BOOST_TEST(num(encoder.at("cpu_time_us").at("cv")) == std::sqrt(2.0), boost::test_tools::tolerance(1e-12));
  BOOST_TEST(num(encoder.at("cpu_time_us").at("min")) == 0.0);
  BOOST_TEST(num(encoder.at("cpu_time_us").at("max")) == 600.0);
  BOOST_TEST(num(encoder.at("device_time_us").at("mean")) == 125.0);
  // head appears in run 0 only: run 1 counts as 0.
  const json::object& head = summary[1].as_object();
  BOOST_TEST(head.at("runs_present").as_int64() == 1);
  BOOST_TEST(head.at("calls_total").as_int64() == 1);
  BOOST_TEST(num(head.at("cpu_time_us").at("mean")) == 17.2835);  // 34 567 / 2 ns
  BOOST_TEST(num(head.at("cpu_time_us").at("min")) == 0.0);
  BOOST_TEST(num(head.at("off_thread_cpu_time_us").at("max")) == 12.345);

  BOOST_TEST(!report_of(cpu_only_result()).at("region_summary").at(0).as_object().contains("device_time_us"));
}

BOOST_AUTO_TEST_CASE(run_summary_over_run_totals) {
  const json::object summary = report_of(device_result()).at("run_summary").as_object();
  BOOST_TEST(keys(summary) == (std::vector<std::string>{"runs", "wall_time_us", "cpu_time_us", "device_time_us",
                                                        "device_busy_us", "device_span_us", "residual_cpu_time_us",
                                                        "residual_device_time_us"}),
             boost::test_tools::per_element());
  BOOST_TEST(summary.at("runs").as_int64() == 2);
  // wall {1500, 1} us: median = mean = 750.5, min 1, max 1500, mad 749.5, stddev |1500 - 1| / sqrt(2).
  const json::object& wall = summary.at("wall_time_us").as_object();
  BOOST_TEST(num(wall.at("median")) == 750.5);
  BOOST_TEST(num(wall.at("mean")) == 750.5);
  BOOST_TEST(num(wall.at("min")) == 1.0);
  BOOST_TEST(num(wall.at("max")) == 1500.0);
  BOOST_TEST(num(wall.at("mad")) == 749.5);
  BOOST_TEST(num(wall.at("stddev")) == 1499.0 / std::sqrt(2.0), boost::test_tools::tolerance(1e-12));
  // device {400, 0} us.
  BOOST_TEST(num(summary.at("device_time_us").at("median")) == 200.0);
  // Residual CPU {600, 0} us: median = mean = 300, mad 300; residual device {100, 0} us: median 50, max 100.
  const json::object& residual = summary.at("residual_cpu_time_us").as_object();
  BOOST_TEST(num(residual.at("median")) == 300.0);
  BOOST_TEST(num(residual.at("mean")) == 300.0);
  BOOST_TEST(num(residual.at("mad")) == 300.0);
  BOOST_TEST(num(residual.at("min")) == 0.0);
  BOOST_TEST(num(summary.at("residual_device_time_us").at("median")) == 50.0);
  BOOST_TEST(num(summary.at("residual_device_time_us").at("max")) == 100.0);
  // CPU-only: no device keys; a zero mean leaves cv out.
  const json::object cpu_only = report_of(cpu_only_result()).at("run_summary").as_object();
  BOOST_TEST(keys(cpu_only) == (std::vector<std::string>{"runs", "wall_time_us", "cpu_time_us", "residual_cpu_time_us"}),
             boost::test_tools::per_element());
  analysis_result zero = cpu_only_result();
  zero.runs[0].cpu_time_ns = 0;
  BOOST_TEST(!report_of(zero).at("run_summary").at("cpu_time_us").as_object().contains("cv"));
}

BOOST_AUTO_TEST_CASE(odd_strings_stay_valid_json) {
  analysis_result result = cpu_only_result();
  result.regions[0].id = "region:a \"quoted\"\nname \xff é";
  result.warnings = {{warning_code::overlapping_ranges, warning_source::nvtx, "tab\there\x01"}};
  const json::object report = report_of(result);  // boost::json rejects invalid UTF-8: parsing is the check
  BOOST_TEST(str(report.at("regions").at(0).at("id")) == "region:a \"quoted\"\nname \xEF\xBF\xBD é");
  BOOST_TEST(str(report.at("runs").at(0).at("regions").at(0).at("region_id")) ==
             "region:a \"quoted\"\nname \xEF\xBF\xBD é");
  BOOST_TEST(str(report.at("warnings").at(0).at("message")) == "tab\there\x01");
  BOOST_TEST(str(report.at("warnings").at(0).at("source")) == "nvtx");
}

BOOST_AUTO_TEST_CASE(bad_region_index_is_a_clear_error) {
  analysis_result result = cpu_only_result();
  result.runs[0].regions[0].region = 5;
  BOOST_CHECK_EXCEPTION(to_json(Profile(trace{}, analysis_options{}, fixed_context(), result)), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).find("index 5") != std::string::npos;
                        });
  BOOST_CHECK_THROW(to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), result)), std::invalid_argument);
  // Rule 21: a memory index past result.memory, of a region or of a run, is one too.
  analysis_result memory = memory_result();
  memory.runs[0].regions[1].memory = 9;
  BOOST_CHECK_EXCEPTION(to_json(Profile(trace{}, analysis_options{}, fixed_context(), memory)), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).find("memory figures at index 9") != std::string::npos;
                        });
  memory = memory_result();
  memory.run_memory[1].residual = 7;
  BOOST_CHECK_THROW(to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), memory)), std::invalid_argument);
}

// docs/design.md, rule 20: `region_ops` last, one entry per region and the residual's, rows as the key
// averages' in the analysis's order; absent for a result without them (a profile saved before them).
BOOST_AUTO_TEST_CASE(region_ops_entries_and_rows) {
  const json::object report = report_of(device_result_with_ops());
  BOOST_TEST(keys(report).back() == "region_ops");
  const json::array& entries = report.at("region_ops").as_array();
  BOOST_TEST_REQUIRE(entries.size() == 3u);
  std::vector<std::string> owners;
  for (const json::value& entry : entries) {
    BOOST_TEST(keys(entry.as_object()) == (std::vector<std::string>{"region_id", "rows"}), boost::test_tools::per_element());
    owners.push_back(str(entry.at("region_id")));
  }
  BOOST_TEST(owners == (std::vector<std::string>{"aot_module:encoder", "untuned_module:head", "(residual)"}),
             boost::test_tools::per_element());
  const json::array& encoder = entries[0].at("rows").as_array();
  BOOST_TEST_REQUIRE(encoder.size() == 6u);
  std::vector<std::string> row_keys;
  for (const json::value& row : encoder) row_keys.push_back(str(row.at("key")));
  BOOST_TEST(row_keys == (std::vector<std::string>{"aten::mm", "gemm_kernel", "cudaLaunchKernel", "Memcpy HtoD",
                                                   "aten::add", "aten::relu"}),
             boost::test_tools::per_element());
  const json::object& mm = encoder[0].as_object();
  BOOST_TEST(keys(mm) == (std::vector<std::string>{"key", "device_type", "count", "self_cpu_time_total_us",
                                                   "cpu_time_total_us", "self_device_time_total_us",
                                                   "device_time_total_us"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(mm.at("device_type")) == "CPU");
  BOOST_TEST(mm.at("count").as_int64() == 4);
  BOOST_TEST(num(mm.at("self_cpu_time_total_us")) == 100.0);
  BOOST_TEST(num(mm.at("cpu_time_total_us")) == 300.0);
  BOOST_TEST(num(mm.at("device_time_total_us")) == 200.0);
  BOOST_TEST(str(encoder[1].at("device_type")) == "CUDA");
  BOOST_TEST(entries[1].at("rows").as_array().empty());
  BOOST_TEST(num(entries[2].at("rows").at(0).at("cpu_time_total_us")) == 0.5);

  BOOST_TEST(!report_of(device_result()).contains("region_ops"));
  analysis_result bad = device_result_with_ops();
  bad.region_ops[1].region = 7;
  BOOST_CHECK_EXCEPTION(to_json(Profile(trace{}, analysis_options{}, fixed_context(), bad)), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).find("region_ops has an entry for region index 7") !=
                                 std::string::npos;
                        });
}

namespace {

/// The keys and integer values of one device's figures in a run (`peak` absent: no key).
void check_device_figures(const json::object& figures, std::uint64_t allocated, std::uint64_t freed,
                          std::uint64_t allocations, std::uint64_t frees, std::optional<std::int64_t> peak) {
  std::vector<std::string> expected{"allocated_bytes", "freed_bytes", "allocations", "frees"};
  if (peak) expected.push_back("peak_allocated_bytes");
  BOOST_TEST(keys(figures) == expected, boost::test_tools::per_element());
  for (const auto& member : figures) BOOST_TEST(member.value().is_int64(), member.key() << " is an integer");
  BOOST_TEST(figures.at("allocated_bytes").to_number<std::uint64_t>() == allocated);
  BOOST_TEST(figures.at("freed_bytes").to_number<std::uint64_t>() == freed);
  BOOST_TEST(figures.at("allocations").to_number<std::uint64_t>() == allocations);
  BOOST_TEST(figures.at("frees").to_number<std::uint64_t>() == frees);
  if (peak) BOOST_TEST(figures.at("peak_allocated_bytes").to_number<std::int64_t>() == *peak);
}

/// The keys and values of one device's medians in a summary: doubles, whole or not.
void check_device_medians(const json::object& figures, double allocated, double freed, double allocations,
                          double frees, std::optional<double> peak) {
  std::vector<std::string> expected{"allocated_bytes", "freed_bytes", "allocations", "frees"};
  if (peak) expected.push_back("peak_allocated_bytes");
  BOOST_TEST(keys(figures) == expected, boost::test_tools::per_element());
  for (const auto& member : figures) BOOST_TEST(member.value().is_double(), member.key() << " is a double");
  BOOST_TEST(num(figures.at("allocated_bytes")) == allocated);
  BOOST_TEST(num(figures.at("freed_bytes")) == freed);
  BOOST_TEST(num(figures.at("allocations")) == allocations);
  BOOST_TEST(num(figures.at("frees")) == frees);
  if (peak) BOOST_TEST(num(figures.at("peak_allocated_bytes")) == *peak);
}

}  // namespace

// docs/design.md, rule 21: `memory` of runs, residuals and regions, keyed by device in ascending order,
// integers as the analysis counted them; absent where an owner has no figures (report_fixtures.hpp,
// memory_result, for the values).
BOOST_AUTO_TEST_CASE(memory_of_runs_residuals_and_regions) {
  const std::string text = to_json(Profile(trace{}, analysis_options{}, fixed_context(), memory_result()));
  BOOST_TEST(text.find("\"allocated_bytes\": 1049088,") != std::string::npos);  // an integer in the text
  const json::array runs = parse(text).at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == 2u);
  const json::object& run0 = runs[0].as_object();
  BOOST_TEST(keys(run0) == (std::vector<std::string>{"run_index", "timing", "regions", "residual", "memory"}),
             boost::test_tools::per_element());
  const json::object& memory0 = run0.at("memory").as_object();
  BOOST_TEST(keys(memory0) == (std::vector<std::string>{"cpu", "cuda:0"}), boost::test_tools::per_element());
  check_device_figures(memory0.at("cpu").as_object(), 4196, 1024, 3, 1, 9000);
  check_device_figures(memory0.at("cuda:0").as_object(), 1049088, 512, 2, 1, 3145728);

  const json::object& encoder = run0.at("regions").at(0).as_object();
  BOOST_TEST(keys(encoder).back() == "memory");
  BOOST_TEST(keys(encoder.at("memory").as_object()) == (std::vector<std::string>{"cpu", "cuda:0"}),
             boost::test_tools::per_element());
  check_device_figures(encoder.at("memory").at("cpu").as_object(), 4096, 1024, 2, 1, 8192);
  check_device_figures(encoder.at("memory").at("cuda:0").as_object(), 1048576, 0, 1, 0, 3145728);
  const json::object& head = run0.at("regions").at(1).as_object();
  BOOST_TEST(keys(head.at("memory").as_object()) == (std::vector<std::string>{"cuda:0"}),
             boost::test_tools::per_element());
  check_device_figures(head.at("memory").at("cuda:0").as_object(), 512, 512, 1, 1, std::nullopt);
  const json::object& residual0 = run0.at("residual").as_object();
  BOOST_TEST(keys(residual0).back() == "memory");
  check_device_figures(residual0.at("memory").at("cpu").as_object(), 100, 0, 1, 0, std::nullopt);

  // Run 1: the residual has no figures, so no `memory` key; the run's and its encoder's are one entry.
  const json::object& run1 = runs[1].as_object();
  BOOST_TEST(!run1.at("residual").as_object().contains("memory"));
  check_device_figures(run1.at("memory").at("cpu").as_object(), 2048, 2048, 1, 1, 6144);
  check_device_figures(run1.at("regions").at(0).at("memory").at("cpu").as_object(), 2048, 2048, 1, 1, 6144);

  // Four sums: regions + residual = run, per device (the fixture's invariant, as the analysis's).
  for (const char* sum : {"allocated_bytes", "freed_bytes", "allocations", "frees"}) {
    const auto figure = [sum](const json::object& owner, const char* device) {
      return owner.at("memory").at(device).at(sum).as_int64();
    };
    BOOST_TEST(figure(encoder, "cpu") + figure(residual0, "cpu") == figure(run0, "cpu"));
    BOOST_TEST(figure(encoder, "cuda:0") + figure(head, "cuda:0") == figure(run0, "cuda:0"));
  }

  // No figures, or an index to an empty list: no `memory` anywhere, the text as before.
  BOOST_TEST(to_json(Profile(trace{}, analysis_options{}, fixed_context(), device_result())).find("memory") ==
             std::string::npos);
  analysis_result empty = device_result();
  empty.memory = {{}};
  empty.run_memory = {{.run = 0, .residual = 0}};
  empty.runs[0].regions[0].memory = 0;
  BOOST_TEST(to_json(Profile(trace{}, analysis_options{}, fixed_context(), empty)) ==
             to_json(Profile(trace{}, analysis_options{}, fixed_context(), device_result())));
}

// Rule 21: `memory_timelines`, one entry per charted run: its samples per device as [offset_us,
// total_bytes], its topmost instances by region id, us since the run's start, and how many were left out
// (report_fixtures.hpp, memory_result).
BOOST_AUTO_TEST_CASE(memory_timelines_of_the_charted_runs) {
  const json::object report = report_of(memory_result());
  BOOST_TEST(keys(report).back() == "memory_timelines");
  const json::array& timelines = report.at("memory_timelines").as_array();
  BOOST_TEST_REQUIRE(timelines.size() == 1u);
  const json::object& timeline = timelines[0].as_object();
  BOOST_TEST(keys(timeline) == (std::vector<std::string>{"run_index", "devices", "spans", "spans_left_out"}),
             boost::test_tools::per_element());
  BOOST_TEST(timeline.at("run_index").as_int64() == 0);
  BOOST_TEST(timeline.at("spans_left_out").as_int64() == 2);
  const json::object& devices = timeline.at("devices").as_object();
  BOOST_TEST(keys(devices) == (std::vector<std::string>{"cpu", "cuda:0"}), boost::test_tools::per_element());
  const json::array& cpu = devices.at("cpu").as_array();
  BOOST_TEST_REQUIRE(cpu.size() == 2u);
  BOOST_TEST(num(cpu[0].at(0)) == 0.0);
  BOOST_TEST(cpu[0].at(1).as_int64() == 4500);
  BOOST_TEST(num(cpu[1].at(0)) == 1234.567);
  BOOST_TEST(cpu[1].at(1).as_int64() == 9000);
  BOOST_TEST(devices.at("cuda:0").as_array().size() == 1u);
  const json::array& spans = timeline.at("spans").as_array();
  BOOST_TEST_REQUIRE(spans.size() == 3u);
  BOOST_TEST(keys(spans[1].as_object()) == (std::vector<std::string>{"region_id", "start_us", "end_us"}),
             boost::test_tools::per_element());
  BOOST_TEST(str(spans[1].at("region_id")) == "untuned_module:head");
  BOOST_TEST(num(spans[1].at("start_us")) == 100.0);
  BOOST_TEST(num(spans[1].at("end_us")) == 200.0);
  BOOST_TEST(str(spans[2].at("region_id")) == "untuned_module:head");
  BOOST_TEST(num(spans[2].at("end_us")) == 1234.567);
  BOOST_TEST(!report_of(device_result()).contains("memory_timelines"));
}

// Rule 21 in region_summary and run_summary: per device the median over all runs of each sum (a run
// without the region, or without an event on the device, counting as 0, as the times do), the peak's
// median over the runs that have one; doubles, the mean of the two middle values for an even count.
BOOST_AUTO_TEST_CASE(memory_medians_in_the_summaries) {
  const json::object report = report_of(memory_result());
  const json::array& summary = report.at("region_summary").as_array();
  BOOST_TEST_REQUIRE(summary.size() == 2u);
  const json::object& encoder = summary[0].as_object();
  BOOST_TEST(keys(encoder).back() == "memory");
  BOOST_TEST(keys(encoder.at("memory").as_object()) == (std::vector<std::string>{"cpu", "cuda:0"}),
             boost::test_tools::per_element());
  // cpu: allocated {4096, 2048}, freed {1024, 2048}, allocations {2, 1}, frees {1, 1}, peaks {8192, 6144}.
  check_device_medians(encoder.at("memory").at("cpu").as_object(), 3072, 1536, 1.5, 1, 7168);
  // cuda:0 only in run 0: {1048576, 0}, {0, 0}, {1, 0}, {0, 0}; the peak of run 0 alone.
  check_device_medians(encoder.at("memory").at("cuda:0").as_object(), 524288, 0, 0.5, 0, 3145728);
  // head: run 1 lacks the region: {512, 0}, {512, 0}, {1, 0}, {1, 0}; no peak in any run.
  check_device_medians(summary[1].at("memory").at("cuda:0").as_object(), 256, 256, 0.5, 0.5, std::nullopt);

  const json::object& runs = report.at("run_summary").as_object();
  BOOST_TEST(keys(runs) == (std::vector<std::string>{"runs", "wall_time_us", "cpu_time_us", "device_time_us",
                                                     "device_busy_us", "device_span_us", "residual_cpu_time_us",
                                                     "residual_device_time_us", "memory", "residual_memory"}),
             boost::test_tools::per_element());
  // cpu {4196, 2048}, {1024, 2048}, {3, 1}, {1, 1}, peaks {9000, 6144}; cuda:0 in run 0 only.
  check_device_medians(runs.at("memory").at("cpu").as_object(), 3122, 1536, 2, 1, 7572);
  check_device_medians(runs.at("memory").at("cuda:0").as_object(), 524544, 256, 1, 0.5, 3145728);
  // The residuals: cpu {100, 0}, {0, 0}, {1, 0}, {0, 0}; never a peak.
  BOOST_TEST(keys(runs.at("residual_memory").as_object()) == (std::vector<std::string>{"cpu"}),
             boost::test_tools::per_element());
  check_device_medians(runs.at("residual_memory").at("cpu").as_object(), 50, 0, 0.5, 0, std::nullopt);

  // Without figures: no `memory` in either summary.
  const json::object plain = report_of(device_result());
  BOOST_TEST(!plain.at("region_summary").at(0).as_object().contains("memory"));
  BOOST_TEST(!plain.at("run_summary").as_object().contains("memory"));
  BOOST_TEST(!plain.at("run_summary").as_object().contains("residual_memory"));
}

// memory_rows (report.hpp), the rows of Python's to_pandas("memory"): per run its regions in order, the
// residual, the run total, each owner's devices ascending; none for an owner without figures.
BOOST_AUTO_TEST_CASE(memory_rows_per_run_owner_and_device) {
  const Profile profile(trace{}, analysis_options{}, fixed_context(), memory_result());
  const std::vector<memory_row> rows = memory_rows(profile);
  std::vector<std::string> shown;
  for (const memory_row& row : rows) {
    shown.push_back(std::to_string(row.run_index) + " " + std::string(row.owner) + " " +
                    memory_device_key(row.figures.device) + " " + std::to_string(row.figures.allocated_bytes));
  }
  BOOST_TEST(shown == (std::vector<std::string>{"0 aot_module:encoder cpu 4096", "0 aot_module:encoder cuda:0 1048576",
                                                "0 untuned_module:head cuda:0 512", "0 (residual) cpu 100",
                                                "0 (run total) cpu 4196", "0 (run total) cuda:0 1049088",
                                                "1 aot_module:encoder cpu 2048", "1 (run total) cpu 2048"}),
             boost::test_tools::per_element());
  BOOST_TEST((rows[1].figures == memory_result().memory[1][1]));
  BOOST_TEST(!rows[2].figures.peak_allocated_bytes.has_value());
  BOOST_TEST(memory_rows(Profile(trace{}, analysis_options{}, fixed_context(), device_result())).empty());
}

BOOST_AUTO_TEST_CASE(empty_analysis_is_a_valid_report) {
  analysis_result empty;
  empty.cpu_time_total.sort_by = "cpu_time_total";
  const json::object report = report_of(empty);
  BOOST_TEST(report.at("runs").as_array().empty());
  BOOST_TEST(report.at("regions").as_array().empty());
  BOOST_TEST(report.at("region_summary").as_array().empty());
  BOOST_TEST(report.at("run_summary").as_object().empty());
  BOOST_TEST(report.at("config").at("measured_runs").as_int64() == 0);
  BOOST_TEST(report.at("profiler").at("key_averages").at("cpu_time_total").at("events").as_array().empty());
  const std::string markdown = to_markdown(Profile(trace{}, analysis_options{}, fixed_context(), empty));
  BOOST_TEST(markdown.find("## Runs\n\nNo runs.\n") != std::string::npos);
  BOOST_TEST(markdown.find("No region owned time in any run.") != std::string::npos);
  BOOST_TEST(markdown.find("No events.") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
