// The importer on the real torch.profiler traces of REGIONPROF_TRACES_DIR, checked record by record
// against an independent reading of the same file (zlib + Boost.JSON's DOM): intervals and device ops of
// two named traces, memory events of every trace in the folder. Skipped (exit 77) when the folder is not set.
#include <zlib.h>

#include <algorithm>
#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "import_test_support.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/trace/run_target_json.hpp"
#include "support/shared_traces.hpp"

using namespace regionprof;

namespace {


std::string gunzip_file(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  BOOST_TEST_REQUIRE(file != nullptr, "cannot open " << path);
  std::string text;
  char chunk[1 << 16];
  int got = 0;
  while ((got = gzread(file, chunk, sizeof chunk)) > 0) text.append(chunk, static_cast<std::size_t>(got));
  gzclose(file);
  return text;
}

/// ns from a DOM number that the trace writes as an integer or an integral-valued double (these
/// traces do: "ts": 1682725898236567, "dur": 68.0); anything else fails the test.
std::int64_t dom_ns(const boost::json::value& v) {
  if (v.is_int64()) return v.as_int64() * 1000;
  if (v.is_uint64()) return static_cast<std::int64_t>(v.as_uint64()) * 1000;
  const double d = v.as_double();
  BOOST_TEST_REQUIRE(d == std::floor(d), "expected an integral value, got " << d);
  return static_cast<std::int64_t>(d) * 1000;
}

void check_against_dom(const std::string& file, std::size_t intervals, std::size_t device_ops) {
  const std::string path = regionprof::test::shared_trace(file);
  const trace t = import_kineto_trace(path);
  const boost::json::value doc = boost::json::parse(gunzip_file(path));
  const auto& events = doc.at("traceEvents").as_array();

  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
  std::size_t next_interval = 0;
  std::size_t next_op = 0;
  for (const auto& value : events) {
    const auto& e = value.as_object();
    const std::string ph = e.contains("ph") ? std::string(e.at("ph").as_string()) : "";
    if (ph == "M" && e.at("name").as_string() == "thread_name") {
      thread_names[{e.at("pid").to_number<std::int64_t>(), e.at("tid").to_number<std::int64_t>()}] =
          std::string(e.at("args").at("name").as_string());
    }
    if (ph != "X") continue;
    const std::string cat(e.at("cat").as_string());
    const std::string name(e.at("name").as_string());
    const std::int64_t start = dom_ns(e.at("ts"));
    const std::int64_t end = start + dom_ns(e.at("dur"));
    if (cat == "cpu_op" || cat == "user_annotation" || cat == "python_function" || cat == "cuda_runtime" ||
        cat == "cuda_driver") {
      BOOST_TEST_REQUIRE(next_interval < t.intervals.size());
      const cpu_interval& got = t.intervals[next_interval++];
      BOOST_TEST_CONTEXT("interval " << next_interval - 1 << " " << name) {
        BOOST_TEST(got.start_ns == start);
        BOOST_TEST(got.end_ns == end);
        BOOST_TEST(import_test::name_of(t, got.name) == name);
        BOOST_TEST(t.threads[got.thread].pid == e.at("pid").as_int64());
        BOOST_TEST(t.threads[got.thread].tid == e.at("tid").as_int64());
        const bool api = cat == "cuda_runtime" || cat == "cuda_driver";
        BOOST_TEST(got.correlation_id == (api ? e.at("args").at("correlation").to_number<std::uint32_t>() : 0u));
      }
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      BOOST_TEST_REQUIRE(next_op < t.device_ops.size());
      const device_op& got = t.device_ops[next_op++];
      const auto& args = e.at("args").as_object();
      BOOST_TEST_CONTEXT("device op " << next_op - 1 << " " << name) {
        BOOST_TEST(got.start_ns == start);
        BOOST_TEST(got.end_ns == end);
        BOOST_TEST(import_test::name_of(t, got.name) == name);
        BOOST_TEST(got.device == args.at("device").to_number<std::uint16_t>());
        BOOST_TEST(got.stream == args.at("stream").to_number<std::uint32_t>());
        BOOST_TEST(got.correlation_id == args.at("correlation").to_number<std::uint32_t>());
        BOOST_TEST(got.bytes == (args.contains("bytes") ? args.at("bytes").to_number<std::uint64_t>() : 0u));
      }
    }
  }
  BOOST_TEST(next_interval == t.intervals.size());
  BOOST_TEST(next_op == t.device_ops.size());
  BOOST_TEST(t.intervals.size() == intervals);
  BOOST_TEST(t.device_ops.size() == device_ops);
  for (const thread_info& thread : t.threads) {
    BOOST_TEST(import_test::name_of(t, thread.name) == thread_names.at({thread.pid, thread.tid}));
  }
  // Nothing is unknown in these traces: cuda_sync waits and the profiler's span are known non-work.
  BOOST_TEST(t.warnings.empty());
  BOOST_TEST(t.device_tracing);
  BOOST_TEST(t.target.type == "kineto_trace");
  const boost::json::value* info = trace_detail::foreign_value(t.target, "distributedInfo");
  BOOST_TEST_REQUIRE(info != nullptr);
  BOOST_TEST(*info == doc.at("distributedInfo"));
}

/// A DOM `ts` (us) as ns and whether that is exact: an integral value is; another is the nearest ns of the
/// double, off by at most its resolution (256 ns at epoch times): the importer reads the text exactly.
std::pair<std::int64_t, bool> dom_ns_of_any(const boost::json::value& v) {
  if (!v.is_double() || v.as_double() == std::floor(v.as_double())) return {dom_ns(v), true};
  return {std::llround(v.as_double() * 1000.0), false};
}

/// A memory event as an independent reading finds it, its thread by (pid, tid).
struct dom_memory_event {
  std::int64_t time_ns = 0;
  bool exact_time = true;
  std::int64_t bytes = 0;
  std::int64_t total = memory_event::no_total;
  std::int64_t device = -1;
  memory_event_kind kind = memory_event_kind::allocation;
  std::int64_t pid = 0, tid = 0;
};

std::string kind_name(memory_event_kind kind) {
  switch (kind) {
    case memory_event_kind::allocation: return "allocation";
    case memory_event_kind::free: return "free";
    case memory_event_kind::out_of_memory: return "out_of_memory";
  }
  return "?";
}

/// The `[memory]` and `[OutOfMemory]` instants of `doc` that regionprof reads (Device Type 0 or 1, [memory]
/// of nonzero Bytes), in file order; `not_read` counts the others.
std::vector<dom_memory_event> dom_memory_events(const boost::json::value& doc, std::size_t& not_read) {
  const auto& events = doc.is_array() ? doc.as_array() : doc.at("traceEvents").as_array();
  std::vector<dom_memory_event> found;
  not_read = 0;
  for (const auto& value : events) {
    const auto& e = value.as_object();
    const auto* ph = e.if_contains("ph");
    const auto* name = e.if_contains("name");
    if (ph == nullptr || name == nullptr || !ph->is_string() || !name->is_string()) continue;
    if (ph->as_string() != "i" && ph->as_string() != "I") continue;
    const bool oom = name->as_string() == "[OutOfMemory]";
    if (!oom && name->as_string() != "[memory]") continue;
    const auto& args = e.at("args").as_object();
    const std::int64_t type = args.at("Device Type").to_number<std::int64_t>();
    const std::int64_t bytes = args.at("Bytes").to_number<std::int64_t>();
    if ((type != 0 && type != 1) || (!oom && bytes == 0)) {
      ++not_read;
      continue;
    }
    dom_memory_event event;
    std::tie(event.time_ns, event.exact_time) = dom_ns_of_any(e.at("ts"));
    event.bytes = bytes;
    if (const auto* total = args.if_contains("Total Allocated")) event.total = total->to_number<std::int64_t>();
    event.device = type == 1 ? args.at("Device Id").to_number<std::int64_t>() : -1;
    event.kind = oom ? memory_event_kind::out_of_memory
                     : (bytes > 0 ? memory_event_kind::allocation : memory_event_kind::free);
    event.pid = e.at("pid").to_number<std::int64_t>();
    event.tid = e.at("tid").to_number<std::int64_t>();
    found.push_back(event);
  }
  return found;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(real_traces)

// Every trace of the folder (issue 29 names a public training trace with 28,010 [memory] events on the CPU
// and CUDA, on its main and autograd threads): the importer's memory events are those an independent reading
// finds, one by one, and so are their counts per kind, device and thread.
BOOST_AUTO_TEST_CASE(memory_events_of_every_shared_trace_match_an_independent_reading) {
  const std::filesystem::path dir = regionprof::test::shared_trace("");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".json") || name.ends_with(".json.gz")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  BOOST_TEST_REQUIRE(!files.empty());
  std::size_t all = 0;
  for (const auto& file : files) {
    BOOST_TEST_CONTEXT(file.filename().string()) {
      const trace t = import_kineto_trace(file.string());
      std::size_t not_read = 0;
      const auto expected = dom_memory_events(boost::json::parse(gunzip_file(file.string())), not_read);
      BOOST_TEST_REQUIRE(t.memory_events.size() == expected.size());
      using count_key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>;  // kind, device, pid, tid
      std::map<count_key, std::size_t> counted, imported;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const dom_memory_event& want = expected[i];
        const memory_event& got = t.memory_events[i];
        const thread_info& thread = t.threads[got.thread];
        ++counted[{kind_name(want.kind), want.device, want.pid, want.tid}];
        ++imported[{kind_name(got.kind), got.device, thread.pid, thread.tid}];
        BOOST_TEST_CONTEXT("memory event " << i) {
          if (want.exact_time) {
            BOOST_TEST(got.time_ns == want.time_ns);
          } else {
            BOOST_TEST(std::abs(got.time_ns - want.time_ns) <= 512);
          }
          BOOST_TEST(got.bytes == want.bytes);
          BOOST_TEST(got.total_allocated == want.total);
          BOOST_TEST(got.device == want.device);
        }
      }
      BOOST_TEST((counted == imported));
      std::ostringstream summary;
      summary << file.filename().string() << ": " << expected.size() << " memory events";
      for (const auto& [key, n] : counted) {
        const auto& [kind, device, pid, tid] = key;
        summary << ", " << n << " " << kind << " on " << memory_device_key(static_cast<memory_device>(device))
                << " by " << pid << "/" << tid;
      }
      BOOST_TEST_MESSAGE(summary.str());
      // Those regionprof does not read are counted, never dropped silently.
      const bool warned = std::any_of(t.warnings.begin(), t.warnings.end(), [](const warning& w) {
        return w.code == warning_code::ignored_events && w.message.find("memory event") != std::string::npos;
      });
      BOOST_TEST(warned == (not_read != 0));
      all += expected.size();
    }
  }
  BOOST_TEST_MESSAGE(all << " memory events in " << files.size() << " traces");
}

BOOST_AUTO_TEST_CASE(alexnet_a100_matches_an_independent_reading) {
  check_against_dom("alexnet_a100_kineto.json.gz", 728, 98);
}

BOOST_AUTO_TEST_CASE(sampled_rank0_matches_an_independent_reading) {
  check_against_dom("sampled_rank0_kineto.json.gz", 3606, 1204);
}

BOOST_AUTO_TEST_SUITE_END()
