// The Kineto importer on torch.profiler's memory events (docs/design.md, "Kineto import"; rule 21): `[memory]`
// allocations and frees and `[OutOfMemory]` on the CPU and CUDA devices, from a hand-made snippet
// (tests/data/import/memory.json) and from a real trace of torch 2.15 on the CPU
// (tests/data/import/torch2_memory.json, tests/data/make_torch2_memory.py); what is counted as not read;
// an error naming the field for each bad arg.
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

struct expected_memory_event {
  std::int64_t time_ns, bytes, total_allocated;
  thread_index thread;
  memory_device device;
  memory_event_kind kind;
};

void expect_memory_events(const trace& t, const std::vector<expected_memory_event>& expected) {
  BOOST_TEST_REQUIRE(t.memory_events.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    BOOST_TEST_CONTEXT("memory event " << i) {
      const memory_event& got = t.memory_events[i];
      BOOST_TEST(got.time_ns == expected[i].time_ns);
      BOOST_TEST(got.bytes == expected[i].bytes);
      BOOST_TEST(got.total_allocated == expected[i].total_allocated);
      BOOST_TEST(got.thread == expected[i].thread);
      BOOST_TEST(got.device == expected[i].device);
      BOOST_TEST(static_cast<int>(got.kind) == static_cast<int>(expected[i].kind));
    }
  }
}

/// The import_error's problem of `text`, or "no error".
std::string problem_of(std::string_view text) {
  try {
    (void)import_kineto_trace_text(text, "snippet");
  } catch (const import_error& e) {
    return e.problem();
  }
  return "no error";
}

/// A one-event trace: a `name` instant on (1, 1) at ts 1 with `args` (a JSON object's members).
std::string instant(std::string_view name, std::string_view args) {
  return R"([{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": ")" + std::string(name) +
         R"(", "pid": 1, "tid": 1, "ts": 1, "args": {)" + std::string(args) + "}}]";
}

constexpr std::int64_t no_total = memory_event::no_total;

}  // namespace

BOOST_AUTO_TEST_SUITE(memory_events)

BOOST_AUTO_TEST_CASE(allocations_frees_and_failed_allocations_on_cpu_and_cuda) {
  const trace t = import_kineto_trace(data_file("memory.json"));
  // Threads in order of first use: main (its cpu_op), autograd (its first [memory]), and (7, 72), which
  // holds only a memory event. The instant on ("Traces", ...) is no memory event and makes no thread.
  BOOST_TEST_REQUIRE(t.threads.size() == 3u);
  BOOST_TEST(t.threads[0].tid == 70);
  BOOST_TEST(name_of(t, t.threads[0].name) == "main");
  BOOST_TEST(t.threads[1].tid == 71);
  BOOST_TEST(name_of(t, t.threads[1].name) == "autograd");
  BOOST_TEST(t.threads[2].pid == 7);
  BOOST_TEST(t.threads[2].tid == 72);
  BOOST_TEST(t.threads[2].name == 0u);
  BOOST_TEST(t.intervals.size() == 2u);
  // ts 105.25 us is 105,250 ns (the interval's conversion); CPU memory is `cpu` whatever its Device Id
  // (torch writes -1); CUDA's Device Id is the ordinal; no Total Allocated (older torch): no_total.
  expect_memory_events(t, {
                              {105'250, 32'768, 32'768, 0, cpu_memory, memory_event_kind::allocation},
                              {120'500, 1'048'576, 1'048'576, 1, 0, memory_event_kind::allocation},
                              {130'001, -32'768, 0, 0, cpu_memory, memory_event_kind::free},
                              {140'000, 17'179'869'184, 42'949'672'960, 1, 1, memory_event_kind::out_of_memory},
                              {160'000, -1'048'576, no_total, 2, 0, memory_event_kind::free},
                          });
  // Memory events are CPU-side instants: they do not make a trace device-traced.
  BOOST_TEST(!t.device_tracing);
  // The 0-byte [memory] and the one on Device Type 13 are counted; the counter ("C") and the other instant
  // are skipped silently.
  BOOST_TEST_REQUIRE(t.warnings.size() == 1u);
  BOOST_TEST(static_cast<int>(t.warnings[0].code) == static_cast<int>(warning_code::ignored_events));
  BOOST_TEST(static_cast<int>(t.warnings[0].source) == static_cast<int>(warning_source::import));
  BOOST_TEST(t.warnings[0].message ==
             "2 memory events were not read: 1 [memory] event of 0 bytes, 1 of Device Type 13 (regionprof reads "
             "the [memory] and [OutOfMemory] events of CPU memory, Device Type 0, and CUDA memory, Device Type 1; a "
             "[memory] event of 0 bytes allocates and frees nothing)");
}

BOOST_AUTO_TEST_CASE(memory_events_not_read_are_counted_per_device_type) {
  const trace t = import_kineto_trace_text(R"([
      {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": {"Device Type": 13, "Bytes": "odd"}},
      {"ph": "i", "name": "[OutOfMemory]", "args": {"Device Type": 12}},
      {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 2, "args": {"Device Type": 13, "Bytes": 8}},
      {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 3, "args": {"Device Type": 1, "Device Id": 0,
                                                                            "Bytes": 0}},
      {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 4, "args": {"Device Type": 0, "Bytes": 0}},
      {"ph": "i", "name": "other", "pid": [], "args": {"Device Type": "x", "Bytes": []}}])");
  BOOST_TEST(t.memory_events.empty());
  BOOST_TEST(t.threads.empty());
  BOOST_TEST_REQUIRE(t.warnings.size() == 1u);
  BOOST_TEST(t.warnings[0].message.starts_with(
      "5 memory events were not read: 2 [memory] events of 0 bytes, 1 of Device Type 12, 2 of Device Type 13 ("));
  const trace one = import_kineto_trace_text(instant("[memory]", R"("Device Type": 20, "Bytes": 8)"));
  BOOST_TEST_REQUIRE(one.warnings.size() == 1u);
  BOOST_TEST(one.warnings[0].message.starts_with("1 memory event was not read: 1 of Device Type 20 ("));
}

BOOST_AUTO_TEST_CASE(bad_args_are_errors_naming_the_event_and_the_field) {
  const std::string_view cpu = R"("Device Type": 0, "Device Id": -1)";
  const auto args = [&](std::string_view more) { return std::string(cpu) + ", " + std::string(more); };
  const std::string bytes_rule = "traceEvents[0]: 'args.Bytes' must be an integer";
  BOOST_TEST(problem_of(instant("[memory]", args(R"("Bytes": "8")"))) == bytes_rule);
  BOOST_TEST(problem_of(instant("[memory]", args(R"("Bytes": 8.5)"))) == bytes_rule);
  BOOST_TEST(problem_of(instant("[memory]", R"("Device Type": "CPU", "Bytes": 8)")) ==
             "traceEvents[0]: 'args.Device Type' must be an integer");
  BOOST_TEST(problem_of(instant("[memory]", R"("Device Id": -1, "Bytes": 8)")) ==
             "traceEvents[0]: a [memory] event without 'args.Device Type'");
  BOOST_TEST(problem_of(R"([{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1}])") ==
             "traceEvents[0]: a [memory] event without 'args.Device Type'");
  BOOST_TEST(problem_of(R"([{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": 3}])") ==
             "traceEvents[0]: 'args' must be an object");
  BOOST_TEST(problem_of(instant("[memory]", cpu)) == "traceEvents[0]: a [memory] event without 'args.Bytes'");
  BOOST_TEST(problem_of(instant("[OutOfMemory]", R"("Device Type": 1, "Bytes": 8)")) ==
             "traceEvents[0]: an [OutOfMemory] event of CUDA memory without 'args.Device Id'");
  BOOST_TEST(problem_of(instant("[memory]", R"("Device Type": 1, "Device Id": -1, "Bytes": 8)")) ==
             "traceEvents[0]: 'args.Device Id' -1 of a [memory] event of CUDA memory is out of range (0..32767)");
  BOOST_TEST(problem_of(instant("[memory]", R"("Device Type": 1, "Device Id": 32768, "Bytes": 8)")) ==
             "traceEvents[0]: 'args.Device Id' 32768 of a [memory] event of CUDA memory is out of range (0..32767)");
  BOOST_TEST(problem_of(instant("[memory]", R"("Device Type": 1, "Device Id": "0", "Bytes": 8)")) ==
             "traceEvents[0]: 'args.Device Id' must be an integer");
  BOOST_TEST(problem_of(instant("[memory]", args(R"("Bytes": 8, "Total Allocated": -1)"))) ==
             "traceEvents[0]: 'args.Total Allocated' must be a non-negative integer");
  BOOST_TEST(problem_of(instant("[memory]", args(R"("Bytes": 8, "Total Allocated": 9223372036854775808)"))) ==
             "traceEvents[0]: 'args.Total Allocated' 9223372036854775808 of a [memory] event does not fit in int64");
  BOOST_TEST(problem_of(instant("[OutOfMemory]", args(R"("Bytes": -8)"))) ==
             "traceEvents[0]: 'args.Bytes' -8 of an [OutOfMemory] event must be the bytes asked for, not negative");
  BOOST_TEST(problem_of(instant("[memory]", args(R"("Bytes": -9223372036854775808)"))) ==
             "traceEvents[0]: 'args.Bytes' -9223372036854775808 of a [memory] event is out of range (a free of more "
             "than 2^63 - 1 bytes)");
  BOOST_TEST(problem_of(instant("[memory]", args(R"("Bytes": 9223372036854775808)"))) == bytes_rule);
  const std::string_view one = R"("args": {"Device Type": 0, "Bytes": 8}})";
  BOOST_TEST(problem_of(R"([{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, )" + std::string(one) + "]") ==
             "traceEvents[0]: a [memory] event without 'ts'");
  BOOST_TEST(problem_of(R"([{"ph": "i", "name": "[memory]", "pid": 1, "ts": 1, )" + std::string(one) + "]") ==
             "traceEvents[0]: a [memory] event without 'tid'");
  BOOST_TEST(problem_of(R"([{"ph": "i", "name": "[memory]", "tid": 1, "ts": 1, )" + std::string(one) + "]") ==
             "traceEvents[0]: a [memory] event without 'pid'");
  BOOST_TEST(problem_of(R"([{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": "1",
                            "args": {"Device Type": 0, "Bytes": 8}}])") ==
             "traceEvents[0]: 'ts' must be a number (microseconds)");
  BOOST_TEST(problem_of(R"([{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1e400,
                            "args": {"Device Type": 0, "Bytes": 8}}])") ==
             "traceEvents[0]: 'ts' '1e400' is not a number of microseconds that fits in int64 ns");
  // Args nobody reads may be anything: Addr, Total Reserved, and Device Id on the CPU.
  BOOST_TEST(problem_of(instant("[memory]", R"("Device Type": 0, "Device Id": "cpu", "Addr": "0x10", "Bytes": 8,
                                               "Total Reserved": [1])")) == "no error");
}

BOOST_AUTO_TEST_CASE(a_bad_arg_in_a_file_names_the_file_and_the_place) {
  const std::string path = data_file("memory_bad_bytes.json");
  try {
    (void)import_kineto_trace(path);
    BOOST_FAIL("importing " << path << " should fail");
  } catch (const import_error& e) {
    BOOST_TEST(e.file() == path);
    BOOST_TEST(e.problem() == "traceEvents[1]: 'args.Bytes' must be an integer");
    BOOST_TEST_REQUIRE(e.offset().has_value());
    BOOST_TEST(*e.offset() == 114u);  // the event's first byte: line 3, column 1
    BOOST_TEST(e.line() == 3u);
    BOOST_TEST(e.column() == 1u);
    BOOST_TEST(std::string(e.what()) ==
               path + ": traceEvents[1]: 'args.Bytes' must be an integer (at line 3, column 1, byte offset 114)");
  }
}

// torch 2.15 on the CPU with profile_memory=True (tests/data/make_torch2_memory.py): under no_grad,
// torch.nn.Linear(256, 256) on a 32 x 256 float32 input allocates its output, 32 x 256 x 4 = 32,768 bytes on
// the CPU, inside aten::addmm; `del` frees it after the "linear" range; torch.empty(2^50 bytes) fails inside
// aten::empty. Times are the file's own ts (us, 3 decimals) as ns.
BOOST_AUTO_TEST_CASE(real_torch_cpu_trace_allocates_the_linear_output) {
  const trace t = import_kineto_trace(data_file("torch2_memory.json"));
  BOOST_TEST(t.warnings.empty());
  BOOST_TEST(!t.device_tracing);
  BOOST_TEST_REQUIRE(t.threads.size() == 1u);  // the Spans and Traces rows hold no interval or memory event
  BOOST_TEST(t.threads[0].pid == 18121);
  BOOST_TEST(t.threads[0].tid == 18121);
  constexpr std::int64_t output_bytes = 32 * 256 * 4;
  BOOST_TEST(output_bytes == 32'768);
  expect_memory_events(t, {
                              {5'635'756'428'291'240, output_bytes, output_bytes, 0, cpu_memory,
                               memory_event_kind::allocation},
                              {5'635'756'433'890'624, -output_bytes, 0, 0, cpu_memory, memory_event_kind::free},
                              {5'635'756'434'366'607, std::int64_t{1} << 50, 0, 0, cpu_memory,
                               memory_event_kind::out_of_memory},
                          });
  const auto interval_named = [&](std::string_view name) -> const cpu_interval& {
    for (const cpu_interval& interval : t.intervals) {
      if (name_of(t, interval.name) == name) return interval;
    }
    BOOST_FAIL("no interval " << name);
    return t.intervals.front();
  };
  const cpu_interval& linear = interval_named("linear");
  const cpu_interval& addmm = interval_named("aten::addmm");
  const cpu_interval& empty = interval_named("aten::empty");
  BOOST_TEST(addmm.start_ns <= t.memory_events[0].time_ns);
  BOOST_TEST(t.memory_events[0].time_ns <= addmm.end_ns);
  BOOST_TEST(linear.end_ns < t.memory_events[1].time_ns);
  BOOST_TEST(empty.start_ns <= t.memory_events[2].time_ns);
  BOOST_TEST(t.memory_events[2].time_ns <= empty.end_ns);
}

BOOST_AUTO_TEST_SUITE_END()
