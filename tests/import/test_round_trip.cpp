// write_chrome_trace, then the Kineto importer, gives the same trace and the same profile: for every
// shared hand-built test trace (tests/support), records compared one by one and JSON reports compared
// whole (created_at aside); and the same memory events (rule 21), hand-built and from a real torch trace.
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "import_test_support.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/report/report.hpp"
#include "support/test_traces.hpp"

using namespace regionprof;
using import_test::name_of;

namespace {

/// The intervals of each (pid, tid), in input order.
std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const cpu_interval*>> by_thread(const trace& t) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const cpu_interval*>> threads;
  for (const cpu_interval& i : t.intervals) threads[{t.threads[i.thread].pid, t.threads[i.thread].tid}].push_back(&i);
  return threads;
}

/// Same records: threads that hold intervals (by pid and tid, with their names), each thread's
/// intervals in order, device ops in order, and everything else of the trace. Thread indices and name
/// ids may differ; the order of intervals across threads too (only per-thread order means anything).
void expect_equivalent(const trace& original, const trace& imported) {
  const auto a = by_thread(original);
  const auto b = by_thread(imported);
  BOOST_TEST_REQUIRE(a.size() == b.size());
  for (const auto& [id, intervals] : a) {
    BOOST_TEST_CONTEXT("thread " << id.first << "/" << id.second) {
      BOOST_TEST_REQUIRE(b.contains(id));
      const auto& other = b.at(id);
      BOOST_TEST(name_of(original, original.threads[intervals.front()->thread].name) ==
                 name_of(imported, imported.threads[other.front()->thread].name));
      BOOST_TEST_REQUIRE(intervals.size() == other.size());
      for (std::size_t k = 0; k < intervals.size(); ++k) {
        const cpu_interval& x = *intervals[k];
        const cpu_interval& y = *other[k];
        BOOST_TEST_CONTEXT("interval " << k << " " << name_of(original, x.name)) {
          BOOST_TEST(x.start_ns == y.start_ns);
          BOOST_TEST(x.end_ns == y.end_ns);
          BOOST_TEST(name_of(original, x.name) == name_of(imported, y.name));
          BOOST_TEST(x.correlation_id == y.correlation_id);
          BOOST_TEST(name_of(original, original.domains[x.domain]) == name_of(imported, imported.domains[y.domain]));
          BOOST_TEST(static_cast<int>(x.kind) == static_cast<int>(y.kind));
        }
      }
    }
  }
  import_test::expect_same_device_ops(original, imported);
  import_test::expect_same_trace_properties(original, imported);
}

/// Main (1, 10) with a marker and a range; a worker (1, 11) with a cpu_op; an allocator thread (2, 20) with
/// memory events only. Memory events on cpu, cuda:0 and cuda:3 of every kind, with and without a total,
/// out of time order, two at one instant.
trace memory_trace() {
  test::trace_builder builder;
  builder.thread(10, "main").marker(1'000, 9'000).range("layer", 2'000, 5'000);
  builder.thread(11, "worker").cpu_op("aten::empty", 3'000, 4'000);
  builder.thread(20, "allocator", 2);
  trace t = builder.build();
  const auto add = [&](std::int64_t time, std::int64_t bytes, std::int64_t total, thread_index thread,
                       memory_device device, memory_event_kind kind) {
    t.memory_events.push_back({.time_ns = time, .bytes = bytes, .total_allocated = total, .thread = thread,
                               .device = device, .kind = kind});
  };
  using enum memory_event_kind;
  add(2'500, 32'768, 32'768, 0, cpu_memory, allocation);
  add(3'500, 1 << 20, (1 << 20) + 512, 1, 0, allocation);
  add(2'400, 512, 512, 2, 0, allocation);  // earlier than the one before it, on another thread
  add(4'000, -32'768, 0, 0, cpu_memory, free);
  add(4'000, std::int64_t{1} << 40, (1 << 20) + 512, 1, 0, out_of_memory);  // at the free's instant
  add(4'500, 4'096, memory_event::no_total, 2, 3, allocation);
  add(6'001, -(1 << 20), 512, 1, 0, free);
  add(7'000, 0, memory_event::no_total, 0, cpu_memory, out_of_memory);  // a failed allocation of 0 bytes
  return t;
}

boost::json::value report_without_created_at(const trace& t, const analysis_options& options) {
  report_context context;
  context.created_at = "2026-01-01T00:00:00Z";
  boost::json::value report = boost::json::parse(to_json(Profile(t, options, context, analyze(t, options))));
  report.as_object().erase("created_at");
  return report;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(round_trip)

BOOST_AUTO_TEST_CASE(chrome_writer_then_importer_keeps_every_test_trace_and_its_profile) {
  const auto traces = test::test_traces();
  BOOST_TEST_REQUIRE(!traces.empty());
  for (const test::named_trace& named : traces) {
    BOOST_TEST_CONTEXT("test trace " << named.name) {
      std::ostringstream written;
      write_chrome_trace(named.value, written);
      const trace imported = import_kineto_trace_text(written.str(), named.name);
      expect_equivalent(named.value, imported);
      const boost::json::value before = report_without_created_at(named.value, named.options);
      const boost::json::value after = report_without_created_at(imported, named.options);
      BOOST_TEST(before == after, "report before:\n" << before << "\nafter:\n" << after);
      // And a second round gives the very same Chrome trace text.
      std::ostringstream again;
      write_chrome_trace(imported, again);
      BOOST_TEST(again.str() == written.str());
    }
  }
}

BOOST_AUTO_TEST_CASE(memory_events_come_back_exactly) {
  const trace original = memory_trace();
  std::ostringstream written;
  write_chrome_trace(original, written);
  const trace imported = import_kineto_trace_text(written.str(), "memory");
  expect_equivalent(original, imported);
  import_test::expect_same_memory_events(original, imported);
  // The allocator thread holds no interval: its memory events bring it, and its name, back.
  BOOST_TEST(imported.threads.size() == 3u);
  // The counter tracks are derived data: skipped, and nothing is counted as not read.
  BOOST_TEST(written.str().find("\"ph\":\"C\"") != std::string::npos);
  BOOST_TEST(imported.warnings.empty());
  std::ostringstream again;
  write_chrome_trace(imported, again);
  BOOST_TEST(again.str() == written.str());
}

BOOST_AUTO_TEST_CASE(a_real_torch_trace_with_memory_events_comes_back_exactly) {
  const trace original = import_kineto_trace(import_test::data_file("torch2_memory.json"));
  BOOST_TEST_REQUIRE(original.memory_events.size() == 3u);
  std::ostringstream written;
  write_chrome_trace(original, written);
  const trace imported = import_kineto_trace_text(written.str(), "torch2_memory");
  expect_equivalent(original, imported);
  import_test::expect_same_memory_events(original, imported);
}

BOOST_AUTO_TEST_SUITE_END()
