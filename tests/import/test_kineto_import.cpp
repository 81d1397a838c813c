// The Kineto importer on hand-written snippets (tests/data/import): what becomes an interval or a
// device op, ids, exact timestamps, names, warnings, and an error with a message for each bad input.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "import_test_support.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/trace/trace.hpp"

using namespace regionprof;
using import_test::data_file;
using import_test::name_of;

namespace {

constexpr std::int64_t us = 1000;  // ns per microsecond

/// The import_error `path` throws (fails the test when it does not throw).
import_error error_of(const std::string& path) {
  try {
    (void)import_kineto_trace(path);
  } catch (const import_error& e) {
    return e;
  }
  BOOST_FAIL("importing " << path << " should fail");
  throw std::logic_error("unreachable");
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(kineto_import)

BOOST_AUTO_TEST_CASE(cpu_intervals_and_device_ops_of_a_small_trace) {
  const trace t = import_kineto_trace(data_file("basic.json"));

  BOOST_TEST_REQUIRE(t.threads.size() == 2u);  // CPU threads only: device rows are not threads
  BOOST_TEST(t.threads[0].pid == 100);
  BOOST_TEST(t.threads[0].tid == 101);
  BOOST_TEST(name_of(t, t.threads[0].name) == "main thread");
  BOOST_TEST(t.threads[1].pid == 100);
  BOOST_TEST(t.threads[1].tid == 102);
  BOOST_TEST(t.threads[1].name == 0u);

  BOOST_TEST_REQUIRE(t.intervals.size() == 5u);
  struct expected_interval {
    std::int64_t start, end;
    std::string_view name;
    thread_index thread;
    std::uint32_t correlation;
    interval_kind kind;
  };
  const expected_interval expected[] = {
      {1000 * us, 1500 * us, "ProfilerStep#1", 0, 0, interval_kind::range},
      {1010 * us, 1110 * us + 500, "aten::mm", 0, 0, interval_kind::cpu_op},
      {1020 * us, 1028 * us, "cudaLaunchKernel", 0, 41, interval_kind::runtime_api},
      {1040 * us, 1043 * us, "cuLaunchKernel", 1, 42, interval_kind::driver_api},
      {1039 * us, 1049 * us, "model.py(12): forward", 1, 0, interval_kind::python_function},
  };
  for (std::size_t i = 0; i < 5; ++i) {
    BOOST_TEST_CONTEXT("interval " << i) {
      const cpu_interval& got = t.intervals[i];
      BOOST_TEST(got.start_ns == expected[i].start);
      BOOST_TEST(got.end_ns == expected[i].end);
      BOOST_TEST(name_of(t, got.name) == expected[i].name);
      BOOST_TEST(got.thread == expected[i].thread);
      BOOST_TEST(got.correlation_id == expected[i].correlation);
      BOOST_TEST(got.domain == 0);
      BOOST_TEST(static_cast<int>(got.kind) == static_cast<int>(expected[i].kind));
    }
  }

  BOOST_TEST_REQUIRE(t.device_ops.size() == 3u);
  const device_op& kernel = t.device_ops[0];
  BOOST_TEST(kernel.start_ns == 1030 * us);
  BOOST_TEST(kernel.end_ns == 1042 * us + 250);
  BOOST_TEST(name_of(t, kernel.name) == "ampere_sgemm_32x32");
  BOOST_TEST(kernel.correlation_id == 41u);
  BOOST_TEST(kernel.device == 0);
  BOOST_TEST(kernel.stream == 7u);
  BOOST_TEST(kernel.bytes == 0u);
  BOOST_TEST(static_cast<int>(kernel.kind) == static_cast<int>(device_op_kind::kernel));
  const device_op& copy = t.device_ops[1];
  BOOST_TEST(copy.start_ns == 1050 * us);
  BOOST_TEST(copy.end_ns == 1052 * us);
  BOOST_TEST(copy.device == 1);
  BOOST_TEST(copy.stream == 9u);
  BOOST_TEST(copy.correlation_id == 43u);
  BOOST_TEST(copy.bytes == 4096u);
  BOOST_TEST(static_cast<int>(copy.kind) == static_cast<int>(device_op_kind::memcpy));
  const device_op& set = t.device_ops[2];
  BOOST_TEST(set.bytes == 64u);
  BOOST_TEST(set.correlation_id == 44u);
  BOOST_TEST(static_cast<int>(set.kind) == static_cast<int>(device_op_kind::memset));

  // gpu_user_annotation, the profiler's span, flows, instants and metadata are no loss: no warning.
  BOOST_TEST(t.warnings.empty());
  BOOST_TEST(t.device_tracing);
  BOOST_TEST(t.target.type == "kineto_trace");
  BOOST_TEST(t.run_wall_times_ns.empty());
  BOOST_TEST_REQUIRE(t.target.foreign.size() == 2u);  // Kineto's members are carried, not read
  const boost::json::value extra = boost::json::parse(test::members_json(t.target));
  BOOST_TEST(extra == boost::json::parse(R"({
      "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85520809984,
                            "computeMajor": 9, "computeMinor": 0}],
      "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8}})"));
}

BOOST_AUTO_TEST_CASE(bare_list_of_events) {
  const trace t = import_kineto_trace(data_file("bare_list.json"));
  BOOST_TEST_REQUIRE(t.intervals.size() == 2u);
  BOOST_TEST(name_of(t, t.intervals[0].name) == "step");
  BOOST_TEST(t.intervals[1].start_ns == 11 * us);
  BOOST_TEST(t.target.type == "kineto_trace");
  BOOST_TEST(test::members_json(t.target) == "{}");
  BOOST_TEST(!t.device_tracing);
}

BOOST_AUTO_TEST_CASE(gzip_is_detected_by_content_and_gives_the_same_trace) {
  const trace plain = import_kineto_trace(data_file("basic.json"));
  import_test::expect_same_trace(import_kineto_trace(data_file("basic.json.gz")), plain);
  import_test::expect_same_trace(import_kineto_trace(data_file("gzip_without_gz_name.json")), plain);
  // Two gzip members (as `cat a.gz b.gz` makes), the JSON split in the middle of an event.
  import_test::expect_same_trace(import_kineto_trace(data_file("multi_member.json.gz")), plain);
  // The same bytes from memory.
  const std::string gz = import_test::read_file(data_file("basic.json.gz"));
  import_test::expect_same_trace(import_kineto_trace_text(gz, "memory"), plain);
}

BOOST_AUTO_TEST_CASE(numeric_string_and_negative_ids) {
  const trace t = import_kineto_trace(data_file("ids.json"));
  BOOST_TEST_REQUIRE(t.threads.size() == 4u);
  BOOST_TEST_REQUIRE(t.intervals.size() == 5u);
  const std::int64_t lowest = -(std::int64_t{1} << 47);
  const std::int64_t highest = -(std::int64_t{1} << 46);
  const auto& spans_profiler = t.threads[0];  // pid "Spans", tid "PyTorch Profiler"
  BOOST_TEST(spans_profiler.pid >= lowest);
  BOOST_TEST(spans_profiler.pid <= highest);
  BOOST_TEST(spans_profiler.tid >= lowest);
  BOOST_TEST(spans_profiler.tid <= highest);
  BOOST_TEST(spans_profiler.pid != spans_profiler.tid);
  BOOST_TEST(name_of(t, spans_profiler.name) == "PyTorch Profiler");  // the string tid names it
  BOOST_TEST(t.threads[1].pid == -5);
  BOOST_TEST(t.threads[1].tid == -1);
  BOOST_TEST(t.threads[2].pid == spans_profiler.pid);  // "Spans" is one number everywhere
  BOOST_TEST(t.threads[2].tid == 7);
  BOOST_TEST(name_of(t, t.threads[2].name) == "named by metadata");  // metadata wins, even after the events
  BOOST_TEST(t.threads[3].pid == std::numeric_limits<std::int64_t>::max());
  BOOST_TEST(t.threads[3].tid == std::numeric_limits<std::int64_t>::min());
  BOOST_TEST(t.intervals[0].thread == 0u);
  BOOST_TEST(t.intervals[1].thread == 1u);
  BOOST_TEST(t.intervals[2].thread == 2u);
  BOOST_TEST(t.intervals[3].thread == 0u);
  BOOST_TEST(t.intervals[4].thread == 3u);

  // Stable: the same strings map to the same numbers in another file, whatever their order.
  const trace other = import_kineto_trace_text(
      R"([{"ph": "X", "cat": "cpu_op", "name": "x", "pid": "PyTorch Profiler", "tid": "Spans", "ts": 1, "dur": 1}])");
  BOOST_TEST(other.threads.at(0).pid == spans_profiler.tid);
  BOOST_TEST(other.threads.at(0).tid == spans_profiler.pid);
}

BOOST_AUTO_TEST_CASE(timestamps_are_exact_nanoseconds_from_the_text) {
  const trace t = import_kineto_trace(data_file("timestamps.json"));
  BOOST_TEST_REQUIRE(t.intervals.size() == 7u);
  const std::pair<std::int64_t, std::int64_t> expected[] = {
      {1682725898236567123, 1682725898236635123},  // 3 decimals on an epoch value, dur 68.0
      {1695835542514261000, 1695835585939544000},  // integers
      {1500000, 1502500},                          // 1.5e3 and 25E-1
      {2, 2},                                      // 0.0025 -> 2 (tie, even), dur 0.0005 -> 0
      {4, 6},                                      // 0.0035 -> 4 (tie, even), dur 0.0015 -> 2
      {-12500, -12500},                            // negative ts, zero dur
      {1682725898236567123, 1682725898236568124},  // .1234999 -> 123; dur 1.00050000001 -> 1001
  };
  for (std::size_t i = 0; i < 7; ++i) {
    BOOST_TEST_CONTEXT(name_of(t, t.intervals[i].name)) {
      BOOST_TEST(t.intervals[i].start_ns == expected[i].first);
      BOOST_TEST(t.intervals[i].end_ns == expected[i].second);
    }
  }
}

BOOST_AUTO_TEST_CASE(names_keep_escapes_and_non_ascii_text) {
  const trace t = import_kineto_trace(data_file("escapes.json"));
  BOOST_TEST_REQUIRE(t.intervals.size() == 4u);
  BOOST_TEST(name_of(t, t.intervals[0].name) == "quote\" backslash\\ slash/ tab\t newline\n");
  BOOST_TEST(name_of(t, t.intervals[1].name) == "caf\xc3\xa9 \xe2\x88\x91 \xf0\x9f\x98\x80");
  BOOST_TEST(t.intervals[2].name == t.intervals[1].name);  // \u escapes and raw UTF-8 are one name
  BOOST_TEST(name_of(t, t.intervals[3].name) == "## Gr\xc3\xb6\xc3\x9f" "e \xe8\xa8\x88\xe7\xae\x97 ##");
}

BOOST_AUTO_TEST_CASE(ignored_events_are_counted_in_warnings) {
  // Not read (IGNORED_EVENTS): unknown categories, B/E phases. Lost (DROPPED_HOST_RECORDS): a read
  // category with a negative dur. Skipped silently: cuda_sync, the counter.
  const trace t = import_kineto_trace(data_file("unknown_categories.json"));
  BOOST_TEST_REQUIRE(t.intervals.size() == 1u);  // "kept": its odd, unused args are nobody's business
  BOOST_TEST(name_of(t, t.intervals[0].name) == "kept");
  BOOST_TEST(t.device_ops.empty());  // cuda_sync is a known wait, not device work
  BOOST_TEST_REQUIRE(t.warnings.size() == 3u);
  for (const warning& w : t.warnings) {
    BOOST_TEST(static_cast<int>(w.source) == static_cast<int>(warning_source::import));
  }
  BOOST_TEST(static_cast<int>(t.warnings[0].code) == static_cast<int>(warning_code::ignored_events));
  BOOST_TEST(t.warnings[0].message.starts_with(
      "4 events of 3 categories were not read: (no category) 1, bar 1, foo 2 (regionprof reads the complete events of"));
  BOOST_TEST(static_cast<int>(t.warnings[1].code) == static_cast<int>(warning_code::ignored_events));
  BOOST_TEST(t.warnings[1].message.starts_with("2 events of 2 phases were not read: B 1, E 1 ("));
  BOOST_TEST(static_cast<int>(t.warnings[2].code) == static_cast<int>(warning_code::dropped_host_records));
  BOOST_TEST(t.warnings[2].message == "dropped 1 complete event of read categories with a negative 'dur'");
}

BOOST_AUTO_TEST_CASE(regionprof_object_and_domains_restore_what_kineto_cannot_say) {
  const trace t = import_kineto_trace(data_file("regionprof_object.json"));
  BOOST_TEST_REQUIRE(t.intervals.size() == 3u);
  BOOST_TEST(name_of(t, t.domains[t.intervals[0].domain]) == "regionprof");
  BOOST_TEST(name_of(t, t.domains[t.intervals[1].domain]) == "torch");
  BOOST_TEST(t.intervals[2].domain == 0);
  BOOST_TEST(t.target.type == "callable");
  BOOST_TEST(!t.device_tracing);
  BOOST_TEST((t.run_wall_times_ns == std::vector<std::int64_t>{9500, 10250}));
  BOOST_TEST(t.module_types.size() == 1u);
  BOOST_TEST(t.module_types.at("aot_module:encoder") == "Encoder");
  BOOST_TEST(test::members_json(t.target) == "{}");
  BOOST_TEST_REQUIRE(t.warnings.size() == 2u);
  BOOST_TEST(static_cast<int>(t.warnings[0].code) == static_cast<int>(warning_code::dropped_host_records));
  BOOST_TEST(static_cast<int>(t.warnings[0].source) == static_cast<int>(warning_source::nvtx));
  BOOST_TEST(t.warnings[0].message == "dropped 3 ranges past the 1 MiB cap");
  BOOST_TEST(static_cast<int>(t.warnings[1].code) == static_cast<int>(warning_code::clock_anomaly));
  BOOST_TEST(static_cast<int>(t.warnings[1].source) == static_cast<int>(warning_source::cupti));
}

BOOST_AUTO_TEST_CASE(events_of_a_thread_keep_file_order) {
  // Equal intervals: the earlier in input order is the parent (rule 1), so order must survive.
  const trace t = import_kineto_trace_text(R"({"traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "outer", "pid": 1, "tid": 1, "ts": 5, "dur": 3},
      {"ph": "X", "cat": "cpu_op", "name": "other thread", "pid": 1, "tid": 2, "ts": 1, "dur": 1},
      {"ph": "X", "cat": "user_annotation", "name": "inner", "pid": 1, "tid": 1, "ts": 5, "dur": 3},
      {"ph": "X", "cat": "cpu_op", "name": "earlier in time", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})");
  BOOST_TEST_REQUIRE(t.intervals.size() == 4u);
  BOOST_TEST(name_of(t, t.intervals[0].name) == "outer");
  BOOST_TEST(name_of(t, t.intervals[1].name) == "other thread");
  BOOST_TEST(name_of(t, t.intervals[2].name) == "inner");
  BOOST_TEST(name_of(t, t.intervals[3].name) == "earlier in time");
}

BOOST_AUTO_TEST_CASE(device_and_stream_fall_back_to_pid_and_tid) {
  const trace t = import_kineto_trace_text(R"([
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 3, "tid": 21, "ts": 1, "dur": 1, "args": {"correlation": 9}},
      {"ph": "X", "cat": "cat_comes_later", "name": "ignored", "pid": 3, "tid": 21, "ts": 1, "dur": 1},
      {"name": "c", "args": {"bytes": 12, "correlation": 10}, "dur": 1, "ts": 2, "tid": 22, "pid": 4, "cat": "gpu_memcpy", "ph": "X"}])");
  BOOST_TEST_REQUIRE(t.device_ops.size() == 2u);
  BOOST_TEST(t.device_ops[0].device == 3);
  BOOST_TEST(t.device_ops[0].stream == 21u);
  BOOST_TEST(t.device_ops[0].correlation_id == 9u);
  BOOST_TEST(t.device_ops[1].device == 4);  // fields in any order
  BOOST_TEST(t.device_ops[1].stream == 22u);
  BOOST_TEST(t.device_ops[1].bytes == 12u);
  BOOST_TEST(t.device_ops[1].correlation_id == 10u);
  BOOST_TEST(t.threads.empty());
}

BOOST_AUTO_TEST_CASE(errors_name_the_file_the_problem_and_the_place) {
  struct expected_error {
    std::string_view file;
    std::string_view problem;
    std::uint64_t offset, line, column;  // offset UINT64_MAX: no position
  };
  constexpr auto none = ~std::uint64_t{0};
  const expected_error cases[] = {
      {"syntax_error.json", "invalid JSON in traceEvents[1]", 134, 1, 135},  // the key after a missing comma
      {"missing_trace_events.json", "no 'traceEvents' array in the top-level object", 0, 1, 1},
      {"trace_events_not_array.json", "'traceEvents' must be an array of events, found an object", 16, 1, 17},
      {"wrong_ts_type.json", "traceEvents[0]: 'ts' must be a number (microseconds)", 20, 2, 3},
      {"wrong_pid_type.json", "traceEvents[0]: 'pid' must be an integer or a string", 20, 2, 3},
      {"truncated.json", "the input ends inside traceEvents[1] (truncated file?)", 105, 3, 3},
      {"not_json.json", "not a Kineto trace: expected a JSON object with traceEvents or a list of events", 0, 1, 1},
      {"empty.json", "empty input", 0, 1, 1},
      {"trailing_garbage.json", "unexpected 'x' after the end of the JSON document", 84, 1, 85},
      {"truncated.json.gz", "truncated gzip stream: the compressed data ends at byte 300", none, 0, 0},
      {"corrupt.json.gz", "corrupt gzip data near compressed byte", none, 0, 0},
      {"does_not_exist.json", "cannot open: No such file or directory", none, 0, 0},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.file) {
      const std::string path = data_file(c.file);
      const import_error e = error_of(path);
      BOOST_TEST(e.file() == path);
      BOOST_TEST(contains(e.problem(), c.problem), "problem: " << e.problem());
      BOOST_TEST(contains(e.what(), path + ": "), "message: " << e.what());
      if (c.offset == none) {
        BOOST_TEST(!e.offset().has_value());
      } else {
        BOOST_TEST_REQUIRE(e.offset().has_value());
        BOOST_TEST(*e.offset() == c.offset);
        BOOST_TEST(e.line() == c.line);
        BOOST_TEST(e.column() == c.column);
        BOOST_TEST(contains(e.what(), "(at line " + std::to_string(c.line) + ", column " + std::to_string(c.column) +
                                          ", byte offset " + std::to_string(c.offset) + ")"));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(wrong_types_are_errors_only_where_the_field_is_used) {
  const auto problem_of = [](std::string_view text) -> std::string {
    try {
      (void)import_kineto_trace_text(text, "snippet");
    } catch (const import_error& e) {
      return e.problem();
    }
    return "no error";
  };
  BOOST_TEST(problem_of(R"([{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
      "ts": 1, "dur": 1, "args": {"correlation": "7"}}])") == "traceEvents[0]: 'args.correlation' must be a non-negative integer");
  BOOST_TEST(problem_of(R"([{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"device": -1, "stream": 7}}])") ==
             "traceEvents[0]: 'args.device' must be a non-negative integer");
  BOOST_TEST(problem_of(R"([{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "pid": "GPU", "args": {"stream": 7}}])") ==
             "traceEvents[0]: device event without 'args.device' and without a non-negative integer 'pid'");
  BOOST_TEST(problem_of(R"([{"ph": "X", "cat": "cpu_op", "name": 3, "pid": 1, "tid": 1, "ts": 1, "dur": 1}])") ==
             "traceEvents[0]: 'name' must be a string");
  BOOST_TEST(problem_of(R"([{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1}])") ==
             "traceEvents[0]: complete event ('ph': 'X') without 'dur'");
  BOOST_TEST(problem_of(R"([{"ph": "X", "cat": "cpu_op", "name": "a", "tid": 1, "ts": 1, "dur": 1}])") ==
             "traceEvents[0]: complete event without 'pid'");
  BOOST_TEST(problem_of(R"([{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1e400, "dur": 1}])") ==
             "traceEvents[0]: 'ts' '1e400' is not a number of microseconds that fits in int64 ns");
  BOOST_TEST(problem_of(R"([1, 2])") == "traceEvents[0]: an event must be an object, found a number");
  BOOST_TEST(problem_of(R"({"traceEvents": [], "traceEvents": []})") == "the top-level object has 'traceEvents' twice");
  BOOST_TEST(problem_of(R"({"traceEvents": [], "regionprof": {"schema_version": 2}})") ==
             "'regionprof' object: unsupported schema_version 2 (this reader knows 1)");
  BOOST_TEST(problem_of(R"({"traceEvents": [], "regionprof": {"warnings": [{"code": "NOPE", "source": "core", "message": ""}]}})") ==
             "'regionprof' object: unknown warning code 'NOPE'");
  BOOST_TEST(problem_of("[{\"ph\": \"X\", \"name\": \"bad \xff byte\"}]") == "invalid JSON in traceEvents: invalid UTF-8 byte sequence");
  BOOST_TEST(problem_of("[{\"ph\": \"X\", \"name\": \"raw\ttab\"}]").starts_with("invalid JSON in traceEvents: unescaped control character"));
  BOOST_TEST(problem_of(R"({"traceEvents": [], "deviceProperties": [1, 2,]})").starts_with("invalid JSON: "));
  // Metadata and unknown categories may carry anything: they are not read.
  BOOST_TEST(problem_of(R"([{"ph": "M", "name": "process_labels", "pid": 1.5, "args": {"labels": 3}},
      {"ph": "X", "cat": "foo", "ts": "x", "pid": [], "args": 1}])") == "no error");
}

BOOST_AUTO_TEST_SUITE_END()
