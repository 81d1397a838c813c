// The importer, the analysis and the three report writers on hostile Kineto input (issue 11): every
// input gives a trace (with the right warnings) or an import_error naming the input and the problem;
// never a crash, a hang or a recursion that overflows the stack. The CLI side (exit codes, peak RSS)
// is tests/cli/test_cli_hostile_input.cpp; behaviour per input: docs/design.md, "Kineto import".
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/report/report.hpp"
#include "regionprof/trace/trace.hpp"
#include "support/hostile_traces.hpp"
#include "support/printing.hpp"

using namespace regionprof;
using hostile::complete_event;
using hostile::trace_of;

namespace {

constexpr std::int64_t us = 1000;  // ns per microsecond

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// The import_error of `bytes` (fails the test when it imports).
import_error error_of(std::string_view bytes, const kineto_import_options& options = {}) {
  try {
    (void)import_kineto_trace_text(bytes, "hostile.json", options);
  } catch (const import_error& e) {
    return e;
  }
  BOOST_FAIL("importing " << std::string(bytes.substr(0, 200)) << " should fail");
  throw std::logic_error("unreachable");
}

/// The error's problem contains `part`, its message names the input.
void expect_error(std::string_view bytes, std::string_view part) {
  const import_error e = error_of(bytes);
  BOOST_TEST(e.file() == "hostile.json");
  BOOST_TEST(std::string_view(e.what()).starts_with("hostile.json: "), e.what());
  BOOST_TEST(contains(e.problem(), part), e.what());
}

analysis_options step_runs(std::vector<name_rule> rules = default_region_rules()) {
  analysis_options options;
  options.run_marker = {match_kind::exact, "step", "region", ""};
  options.region_rules = std::move(rules);
  return options;
}

/// All three reports of `t`; their texts' sizes, for bounds.
struct report_sizes {
  std::size_t json = 0;
  std::size_t markdown = 0;
  std::size_t chrome = 0;
};

report_sizes write_reports(const trace& t, const analysis_result& result, const analysis_options& options) {
  report_sizes sizes;
  sizes.json = to_json(Profile(t, options, report_context{}, result)).size();
  sizes.markdown = to_markdown(Profile(t, options, report_context{}, result)).size();
  std::ostringstream chrome;
  write_chrome_trace(t, chrome);
  sizes.chrome = chrome.str().size();
  return sizes;
}

std::string temp_file(const std::string& name, std::string_view bytes) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("regionprof_hostile_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path.string();
}

std::vector<const warning*> warnings_of(const std::vector<warning>& all, warning_code code) {
  std::vector<const warning*> found;
  for (const warning& w : all) {
    if (w.code == code) found.push_back(&w);
  }
  return found;
}

const std::string small_trace = trace_of({complete_event("user_annotation", "step", "0", "100"),
                                          complete_event("cpu_op", "aten::mm", "10", "20"),
                                          complete_event("cpu_op", "aten::add", "40", "5")});

}  // namespace

BOOST_AUTO_TEST_SUITE(hostile_input)

BOOST_AUTO_TEST_CASE(empty_input_is_an_error) {
  expect_error("", "empty input");
  expect_error(" \n\t ", "empty input");
  const std::string path = temp_file("empty.json", "");
  try {
    (void)import_kineto_trace(path);
    BOOST_FAIL("an empty file imports");
  } catch (const import_error& e) {
    BOOST_TEST(e.file() == path);
    BOOST_TEST(contains(e.problem(), "empty input"), e.what());
  }
  std::filesystem::remove(path);
}

// Every proper prefix of a valid trace is an error, with windows so small that the cut falls in every
// state of the window logic.
BOOST_AUTO_TEST_CASE(every_truncation_is_an_error) {
  (void)import_kineto_trace_text(small_trace);
  for (const std::size_t window : {std::size_t{64}, std::size_t{256} << 10}) {
    kineto_import_options options;
    options.window_bytes = window;
    for (std::size_t n = 0; n < small_trace.size(); ++n) {
      BOOST_TEST_CONTEXT("window " << window << ", first " << n << " bytes") {
        const import_error e = error_of(std::string_view(small_trace).substr(0, n), options);
        BOOST_TEST(e.file() == "hostile.json");
        BOOST_TEST(!e.problem().empty());
      }
    }
  }
  expect_error(std::string_view(small_trace).substr(0, small_trace.size() - 1),
               "expected ',' or '}' in the top-level object, found the end of the input");
  expect_error(std::string_view(small_trace).substr(0, small_trace.size() - 2), "the input ends inside traceEvents");
  expect_error(std::string_view(small_trace).substr(0, 40), "unterminated string");
}

BOOST_AUTO_TEST_CASE(random_bytes_are_an_error) {
  std::mt19937_64 random(11);
  for (int round = 0; round < 300; ++round) {
    std::string bytes(1 + random() % 4096, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    // Half of them after a valid start, so that they reach the event parser.
    if (round % 2 == 1) bytes = "{\"traceEvents\":[" + bytes;
    BOOST_TEST_CONTEXT("round " << round) { (void)error_of(bytes); }
  }
}

BOOST_AUTO_TEST_CASE(truncated_gzip_is_an_error) {
  const std::string compressed = hostile::gzip(small_trace);
  BOOST_TEST(import_kineto_trace_text(compressed).intervals.size() == 3u);
  for (std::size_t n = 2; n < compressed.size(); ++n) {
    BOOST_TEST_CONTEXT("first " << n << " of " << compressed.size() << " bytes") {
      const import_error e = error_of(std::string_view(compressed).substr(0, n));
      BOOST_TEST((contains(e.problem(), "truncated gzip stream") || contains(e.problem(), "corrupt gzip data")),
                 e.what());
    }
  }
  expect_error(std::string_view(compressed).substr(0, compressed.size() - 4), "truncated gzip stream");
  // A file goes through the prefetching thread: its error comes back the same.
  const std::string path = temp_file("truncated.json.gz", std::string_view(compressed).substr(0, compressed.size() / 2));
  try {
    (void)import_kineto_trace(path);
    BOOST_FAIL("a truncated gzip file imports");
  } catch (const import_error& e) {
    BOOST_TEST(e.file() == path);
    BOOST_TEST(contains(e.problem(), "truncated gzip stream"), e.what());
  }
  std::filesystem::remove(path);
}

BOOST_AUTO_TEST_CASE(fake_gzip_is_an_error) {
  std::mt19937_64 random(3);
  std::string fake = "\x1f\x8b";
  for (int i = 0; i < 1000; ++i) fake += static_cast<char>(random());
  expect_error(fake, "corrupt gzip data");
  // A valid header with a broken deflate body.
  std::string broken = hostile::gzip(small_trace);
  for (std::size_t i = 12; i < broken.size() - 8; ++i) broken[i] = static_cast<char>(0xff);
  expect_error(broken, "corrupt gzip data");
  expect_error(hostile::gzip(small_trace) + "garbage", "unexpected data after the end of the gzip stream");
  expect_error("\x1f\x8b", "truncated gzip stream");
}

BOOST_AUTO_TEST_CASE(wrong_types_are_errors_naming_the_field) {
  expect_error(R"({"traceEvents": 5})", "'traceEvents' must be an array of events, found '5'");
  expect_error(R"({"traceEvents": "x"})", "'traceEvents' must be an array of events");
  expect_error(R"({"traceEvents": {}})", "'traceEvents' must be an array of events, found an object");
  expect_error(R"({"traceEvents": null})", "'traceEvents' must be an array of events");
  expect_error("5", "not a Kineto trace");
  expect_error(R"({"traceEvents": [5]})", "traceEvents[0]: an event must be an object, found a number");
  expect_error(trace_of({complete_event("cpu_op", "a", "\"12\"", "1")}), "traceEvents[0]: 'ts' must be a number");
  expect_error(trace_of({complete_event("cpu_op", "a", "1", "true")}), "traceEvents[0]: 'dur' must be a number");
  expect_error(trace_of({R"({"ph":"X","cat":"cpu_op","name":7,"pid":1,"tid":1,"ts":1,"dur":1})"}),
               "traceEvents[0]: 'name' must be a string");
  expect_error(trace_of({R"({"ph":"X","cat":"cpu_op","name":"a","pid":1.5,"tid":1,"ts":1,"dur":1})"}),
               "traceEvents[0]: 'pid' must be an integer or a string");
  expect_error(trace_of({R"({"ph":"X","cat":"user_annotation","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":[]})"}),
               "traceEvents[0]: 'args' must be an object");
  expect_error(trace_of({R"({"ph":5})"}), "traceEvents[0]: 'ph' must be a string");
  expect_error(trace_of({complete_event("kernel", "k", "1", "1", 7, R"("args":{"device":-1})")}),
               "traceEvents[0]: 'args.device' must be a non-negative integer");
}

BOOST_AUTO_TEST_CASE(nan_infinity_and_huge_numbers) {
  // What is not a JSON value fails the parse; what on-demand reads as a number token (it starts with
  // '-' or a digit) fails the exact conversion; 'nan' starts like null.
  for (const char* text : {"NaN", "Infinity"}) {
    BOOST_TEST_CONTEXT(text) {
      expect_error(trace_of({complete_event("cpu_op", "a", text, "1")}), "invalid JSON in traceEvents[0]");
    }
  }
  for (const std::string text : {"-Infinity", "1e", "--1", "0x10", "1.", "01"}) {
    BOOST_TEST_CONTEXT(text) {
      expect_error(trace_of({complete_event("cpu_op", "a", text, "1")}),
                   "traceEvents[0]: 'ts' '" + text + "' is not a number of microseconds that fits in int64 ns");
    }
  }
  expect_error(trace_of({complete_event("cpu_op", "a", "nan", "1")}), "traceEvents[0]: 'ts' must be a number");
  expect_error(trace_of({complete_event("cpu_op", "a", "1e400", "1")}),
               "'ts' '1e400' is not a number of microseconds that fits in int64 ns");
  expect_error(trace_of({complete_event("cpu_op", "a", "9223372036854776", "1")}), "'ts' '9223372036854776' is not");
  expect_error(trace_of({complete_event("cpu_op", "a", "1", "123456789012345678901234567890")}), "'dur' '1234567890");
  expect_error(trace_of({complete_event("cpu_op", "a", "9000000000000000", "900000000000000")}),
               "'ts' + 'dur' overflows int64 ns");
  expect_error(trace_of({complete_event("kernel", "k", "1", "1", 7, R"("args":{"correlation":18446744073709551616})")}),
               "'args.correlation' must be a non-negative integer");
  expect_error(trace_of({complete_event("kernel", "k", "1", "1", 7, R"("args":{"device":0,"stream":4294967296})")}),
               "stream 4294967296 is out of range");
  // Extreme but valid times import exactly when they are near each other; far apart, or with durations
  // adding up past 2^62 ns, no sum of the analysis would fit int64 ns: refused (trace::time_range_problem).
  const trace low = import_kineto_trace_text(
      trace_of({complete_event("cpu_op", "aten::mm", "-9223372036854775.808", "0"),
                complete_event("cpu_op", "aten::mm", "-9223372036854775.807", "0.001", 3)}));
  BOOST_TEST_REQUIRE(low.intervals.size() == 2u);
  BOOST_TEST(low.intervals[0].start_ns == std::numeric_limits<std::int64_t>::min());
  BOOST_TEST(low.intervals[1].end_ns == std::numeric_limits<std::int64_t>::min() + 2);
  const trace high = import_kineto_trace_text(trace_of({complete_event("user_annotation", "step", "9223372036854774", "1")}));
  BOOST_TEST_REQUIRE(high.intervals.size() == 1u);
  BOOST_TEST(high.intervals[0].end_ns == 9223372036854775000);
  const trace tiny = import_kineto_trace_text(trace_of({complete_event("cpu_op", "aten::mm", "1e-400", "0")}));
  BOOST_TEST_REQUIRE(tiny.intervals.size() == 1u);
  BOOST_TEST(tiny.intervals[0].start_ns == 0);  // 1e-400 us rounds to 0 ns
  expect_error(trace_of({complete_event("user_annotation", "step", "-9223372036854775", "9223372036854775"),
                         complete_event("user_annotation", "step", "0", "9223372036854775", 2)}),
               "the durations of its intervals and device ops add up to more than 2^62 ns");
  expect_error(trace_of({complete_event("cpu_op", "a", "-9223372036854775", "0"),
                         complete_event("cpu_op", "a", "9223372036854775", "0")}),
               "its times span more than 2^62 ns");
}

BOOST_AUTO_TEST_CASE(negative_durations_are_dropped_and_counted) {
  const trace t = import_kineto_trace_text(trace_of({
      complete_event("user_annotation", "step", "0", "100"),
      complete_event("cpu_op", "aten::mm", "10", "-5"),
      complete_event("kernel", "k", "10", "-0.001", 7, R"("args":{"device":0,"stream":7})"),
      complete_event("cpu_op", "aten::add", "20", "-0"),  // -0 is 0: kept
  }));
  BOOST_TEST(t.intervals.size() == 2u);
  BOOST_TEST(t.device_ops.empty());
  BOOST_TEST_REQUIRE(t.warnings.size() == 1u);
  BOOST_TEST(t.warnings[0].code == warning_code::dropped_host_records);
  BOOST_TEST(t.warnings[0].source == warning_source::import);
  BOOST_TEST(t.warnings[0].message == "dropped 2 complete events of read categories with a negative 'dur'");
}

BOOST_AUTO_TEST_CASE(missing_fields) {
  expect_error(trace_of({R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"dur":3})"}),
               "traceEvents[0]: complete event ('ph': 'X') without 'ts'");
  expect_error(trace_of({R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":3})"}),
               "traceEvents[0]: complete event ('ph': 'X') without 'dur'");
  expect_error(trace_of({R"({"ph":"X","cat":"cpu_op","name":"a","tid":1,"ts":3,"dur":1})"}),
               "traceEvents[0]: complete event without 'pid'");
  expect_error(trace_of({R"({"ph":"X","cat":"cpu_op","name":"a","pid":1,"ts":3,"dur":1})"}),
               "traceEvents[0]: complete event without 'tid'");
  expect_error(trace_of({R"({"ph":"X","cat":"kernel","name":"k","pid":"gpu","tid":1,"ts":3,"dur":1})"}),
               "device event without 'args.device' and without a non-negative integer 'pid'");
  // No ph, no cat: counted; no name: an unnamed interval; {} alone: no ph.
  const trace t = import_kineto_trace_text(trace_of({
      R"({"cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":3,"dur":1})",
      R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":3,"dur":1})",
      R"({"ph":"X","cat":"cpu_op","pid":1,"tid":1,"ts":3,"dur":1})",
      R"({})",
  }));
  BOOST_TEST_REQUIRE(t.intervals.size() == 1u);
  BOOST_TEST(t.intervals[0].name == 0u);
  BOOST_TEST_REQUIRE(t.warnings.size() == 2u);
  BOOST_TEST((t.warnings[0].code == warning_code::ignored_events));
  BOOST_TEST(t.warnings[0].message.starts_with("1 event of 1 category was not read: (no category) 1"),
             t.warnings[0].message);
  BOOST_TEST((t.warnings[1].code == warning_code::ignored_events));
  BOOST_TEST(t.warnings[1].message.starts_with("2 events of 1 phase were not read: (no phase) 2"), t.warnings[1].message);
}

// JSON text must be UTF-8 (RFC 8259): an invalid sequence anywhere, even in args that are skipped, is
// an error at its byte offset, in a small input and deep in a file read in windows.
BOOST_AUTO_TEST_CASE(invalid_utf8_in_names_is_an_error_at_its_offset) {
  for (const std::string_view bad : {"\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80"}) {
    const std::string text = trace_of({complete_event("user_annotation", "step" + std::string(bad), "0", "5")});
    BOOST_TEST_CONTEXT("bytes " << text.find("step") + 4) {
      const import_error e = error_of(text);
      BOOST_TEST(contains(e.problem(), "invalid UTF-8 byte sequence"), e.what());
      BOOST_TEST(e.offset().value_or(0) == text.find("step") + 4);
    }
  }
  std::vector<std::string> events(20000, complete_event("cpu_op", "aten::mm", "1", "1"));
  events[15000] = complete_event("cpu_op", "aten::mm", "1", "1", 1, "\"args\":{\"x\":\"\xff\"}");
  const std::string big = trace_of(events);
  const std::string path = temp_file("bad_utf8.json", big);
  try {
    (void)import_kineto_trace(path);
    BOOST_FAIL("invalid UTF-8 imports");
  } catch (const import_error& e) {
    BOOST_TEST(contains(e.problem(), "invalid UTF-8 byte sequence"), e.what());
    BOOST_TEST(e.offset().value_or(0) == big.find('\xff'));
  }
  std::filesystem::remove(path);
}

// 200,000 nested arrays inside an event's args: skipped (cpu_op) or walked over (kernel) without
// recursion; the events import.
BOOST_AUTO_TEST_CASE(deep_arrays_inside_args) {
  const std::string deep = hostile::nested_array(200000);
  const trace t = import_kineto_trace_text(trace_of({
      complete_event("user_annotation", "step", "0", "100"),
      complete_event("cpu_op", "aten::mm", "1", "2", 1, "\"args\":{\"x\":" + deep + "}"),
      complete_event("kernel", "k", "3", "2", 7, "\"args\":{\"device\":0,\"x\":" + deep + ",\"stream\":7}"),
      complete_event("user_annotation", "r", "5", "2", 1, "\"args\":{\"x\":" + deep + "}"),
  }));
  BOOST_TEST(t.intervals.size() == 3u);
  BOOST_TEST_REQUIRE(t.device_ops.size() == 1u);
  BOOST_TEST(t.device_ops[0].stream == 7u);
  BOOST_TEST(t.warnings.empty());
}

// At the top level and as events: errors, never a recursion.
BOOST_AUTO_TEST_CASE(deep_arrays_at_top_level) {
  const std::string deep = hostile::nested_array(200000);
  expect_error(deep, "traceEvents[0]: an event must be an object, found an array");
  expect_error("{\"traceEvents\":[" + deep + "]}", "traceEvents[0]: an event must be an object, found an array");
  expect_error(std::string(200000, '['), "traceEvents[0]: an event must be an object, found an array");
  expect_error("{\"traceEvents\":[], \"deviceProperties\":" + deep + "}",
               "'deviceProperties' nests deeper than 32 levels");
  expect_error("{\"other\":" + deep + ", \"traceEvents\":[]}", "'other' nests deeper than 32 levels");
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  expect_error("{\"traceEvents\":[], \"distributedInfo\":" + objects + "1" + std::string(100000, '}') + "}",
               "'distributedInfo' nests deeper than 32 levels");
}

// 100,000 ranges nested on one thread: import, analysis (the CPU-parent tree) and the three writers
// keep their own stacks; figures by hand (hostile_traces.hpp): step lasts 2n + 10 us, r1 2n + 8 us.
BOOST_AUTO_TEST_CASE(hundred_thousand_nested_ranges) {
  constexpr std::size_t n = 100000;
  const trace t = import_kineto_trace_text(hostile::nested_ranges_trace(n));
  BOOST_TEST_REQUIRE(t.intervals.size() == n);
  for (const auto& rules : {default_region_rules(), std::vector<name_rule>{{match_kind::prefix, "r", "r", ""}}}) {
    const analysis_options options = step_runs(rules);
    const analysis_result result = analyze(t, options);
    BOOST_TEST_REQUIRE(result.runs.size() == 1u);
    const run_result& run = result.runs[0];
    BOOST_TEST(run.cpu_time_ns == static_cast<std::int64_t>(2 * n + 10) * us);
    if (rules.size() == 1) {
      // Only the outermost r owns time; the 99,998 inside it add nothing of their own.
      BOOST_TEST_REQUIRE(result.regions.size() == 1u);
      BOOST_TEST(result.regions[0].id == "r:1");
      BOOST_TEST_REQUIRE(run.regions.size() == 1u);
      BOOST_TEST(run.regions[0].calls == 1u);
      BOOST_TEST(run.regions[0].cpu_time_ns == static_cast<std::int64_t>(2 * n + 8) * us);
      BOOST_TEST(run.residual_cpu_ns == 2 * us);
    } else {
      BOOST_TEST(result.regions.empty());
      BOOST_TEST(run.residual_cpu_ns == run.cpu_time_ns);
    }
    const report_sizes sizes = write_reports(t, result, options);
    BOOST_TEST(sizes.markdown < std::size_t{64} << 10);
  }
  // The Chrome trace reads back whole.
  std::ostringstream chrome;
  write_chrome_trace(t, chrome);
  BOOST_TEST(import_kineto_trace_text(chrome.str()).intervals.size() == n);
}

// Names of 64 KiB and 30 MB: kept whole in the trace and the JSON report, cut in the Markdown, through
// the default rules and through a rule that makes the name a region id (a prefix rule: the std::regex
// path is tested through the CLI, see tests/cli/test_cli_hostile_input.cpp).
BOOST_AUTO_TEST_CASE(names_of_64_kib_and_30_mb) {
  for (const std::size_t bytes : {std::size_t{64} << 10, std::size_t{30} << 20}) {
    BOOST_TEST_CONTEXT(bytes << "-byte name") {
      const trace t = import_kineto_trace_text(hostile::long_name_trace(bytes));
      BOOST_TEST_REQUIRE(t.intervals.size() == 3u);
      BOOST_TEST(t.strings.view(t.intervals[1].name).size() == bytes);
      for (const auto& rules : {default_region_rules(), std::vector<name_rule>{{match_kind::prefix, "r", "r", ""}}}) {
        const analysis_options options = step_runs(rules);
        const analysis_result result = analyze(t, options);
        BOOST_TEST_REQUIRE(result.runs.size() == 1u);
        BOOST_TEST(result.runs[0].cpu_time_ns == 100 * us);
        BOOST_TEST(result.warnings.empty());
        if (rules.size() == 1) {
          BOOST_TEST_REQUIRE(result.regions.size() == 1u);
          BOOST_TEST(result.regions[0].id.size() == bytes + 1);  // "r:" + the name without its "r"
          BOOST_TEST(result.runs[0].regions.at(0).cpu_time_ns == 20 * us);
        }
        const report_sizes sizes = write_reports(t, result, options);
        BOOST_TEST(sizes.json > bytes);
        BOOST_TEST(sizes.chrome > bytes);
        BOOST_TEST(sizes.markdown < std::size_t{16} << 10);  // names and region ids are cut
      }
    }
  }
}

// The first launch with a correlation id owns its device ops; the second one with the same id owns
// none. (The analysis counts such duplicates but reports no warning for them: left to the analysis.)
BOOST_AUTO_TEST_CASE(duplicate_correlation_ids) {
  const trace t = import_kineto_trace_text(trace_of({
      complete_event("user_annotation", "step", "0", "100"),
      complete_event("user_annotation", "r_first", "5", "10"),
      complete_event("cuda_runtime", "cudaLaunchKernel", "10", "2", 1, R"("args":{"correlation":7})"),
      complete_event("user_annotation", "r_second", "20", "10"),
      complete_event("cuda_runtime", "cudaLaunchKernel", "25", "2", 1, R"("args":{"correlation":7})"),
      complete_event("kernel", "k", "30", "4", 7, R"("args":{"device":0,"stream":7,"correlation":7})"),
      complete_event("kernel", "k", "40", "4", 7, R"("args":{"device":0,"stream":7,"correlation":7})"),
  }));
  BOOST_TEST(t.intervals.size() == 5u);
  BOOST_TEST(t.device_ops.size() == 2u);
  const analysis_options options = step_runs({{match_kind::prefix, "r_", "r", ""}});
  const analysis_result result = analyze(t, options);
  BOOST_TEST_REQUIRE(result.runs.size() == 1u);
  const run_result& run = result.runs[0];
  BOOST_TEST_REQUIRE(run.regions.size() == 2u);
  BOOST_TEST(result.regions[run.regions[0].region].id == "r:first");
  BOOST_TEST(run.regions[0].device_time_ns.value_or(-1) == 8 * us);
  BOOST_TEST(run.regions[1].device_time_ns.value_or(-1) == 0);
  BOOST_TEST_REQUIRE(result.warnings.size() == 1u);
  BOOST_TEST((result.warnings[0].code == warning_code::duplicate_correlation_ids));
  (void)write_reports(t, result, options);
}

BOOST_AUTO_TEST_CASE(kernel_starting_before_its_launch_is_a_clock_anomaly) {
  const trace t = import_kineto_trace_text(trace_of({
      complete_event("user_annotation", "step", "0", "100"),
      complete_event("cuda_runtime", "cudaLaunchKernel", "10", "5", 1, R"("args":{"correlation":7})"),
      complete_event("kernel", "k", "5", "5", 7, R"("args":{"device":0,"stream":7,"correlation":7})"),
  }));
  const analysis_options options = step_runs();
  const analysis_result result = analyze(t, options);
  const auto anomalies = warnings_of(result.warnings, warning_code::clock_anomaly);
  BOOST_TEST_REQUIRE(result.warnings.size() == 1u);
  BOOST_TEST_REQUIRE(anomalies.size() == 1u);
  BOOST_TEST(anomalies[0]->message.starts_with("1 device op(s) start before the API call that launched them (by up to "
                                               "5000 ns)"),
             anomalies[0]->message);
  BOOST_TEST(result.runs.at(0).device_time_ns.value_or(-1) == 5 * us);
  (void)write_reports(t, result, options);
}

BOOST_AUTO_TEST_SUITE_END()
