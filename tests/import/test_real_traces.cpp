// The importer on the real torch.profiler traces of REGIONPROF_TRACES_DIR, checked record by record
// against an independent reading of the same file (zlib + Boost.JSON's DOM). Skipped (exit 77) when
// the folder is not set.
#include <zlib.h>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

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

}  // namespace

BOOST_AUTO_TEST_SUITE(real_traces)

BOOST_AUTO_TEST_CASE(alexnet_a100_matches_an_independent_reading) {
  check_against_dom("alexnet_a100_kineto.json.gz", 728, 98);
}

BOOST_AUTO_TEST_CASE(sampled_rank0_matches_an_independent_reading) {
  check_against_dom("sampled_rank0_kineto.json.gz", 3606, 1204);
}

BOOST_AUTO_TEST_SUITE_END()
