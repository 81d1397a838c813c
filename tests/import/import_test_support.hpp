// Helpers of the importer tests: test data paths, reading files, comparing traces record by record.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "regionprof/trace/trace.hpp"
#include "support/trace_builder.hpp"

namespace import_test {

/// tests/data/import/<name> (REGIONPROF_TEST_DATA is set by the test's ENVIRONMENT).
inline std::string data_file(std::string_view name) {
  const char* root = std::getenv("REGIONPROF_TEST_DATA");
  if (root == nullptr) throw std::runtime_error("REGIONPROF_TEST_DATA is not set (run the tests through ctest)");
  return std::string(root) + "/import/" + std::string(name);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

inline std::string name_of(const regionprof::trace& t, regionprof::name_id id) { return std::string(t.strings.view(id)); }

/// Same device ops, in order, names compared as text.
inline void expect_same_device_ops(const regionprof::trace& a, const regionprof::trace& b) {
  BOOST_TEST_REQUIRE(a.device_ops.size() == b.device_ops.size());
  for (std::size_t i = 0; i < a.device_ops.size(); ++i) {
    const auto& x = a.device_ops[i];
    const auto& y = b.device_ops[i];
    BOOST_TEST_CONTEXT("device op " << i) {
      BOOST_TEST(x.start_ns == y.start_ns);
      BOOST_TEST(x.end_ns == y.end_ns);
      BOOST_TEST(x.bytes == y.bytes);
      BOOST_TEST(name_of(a, x.name) == name_of(b, y.name));
      BOOST_TEST(x.correlation_id == y.correlation_id);
      BOOST_TEST(x.stream == y.stream);
      BOOST_TEST(x.device == y.device);
      BOOST_TEST(static_cast<int>(x.kind) == static_cast<int>(y.kind));
    }
  }
}

/// Same trace-level facts: device tracing, run wall times, module types, target, warnings in order.
/// The targets are compared member by member.
inline void expect_same_trace_properties(const regionprof::trace& a, const regionprof::trace& b) {
  BOOST_TEST(a.device_tracing == b.device_tracing);
  BOOST_TEST(a.run_wall_times_ns == b.run_wall_times_ns);
  BOOST_TEST((a.module_types == b.module_types));
  BOOST_TEST(a.target.type == b.target.type);
  BOOST_TEST(regionprof::test::members_json(a.target) == regionprof::test::members_json(b.target));
  BOOST_TEST_REQUIRE(a.warnings.size() == b.warnings.size());
  for (std::size_t i = 0; i < a.warnings.size(); ++i) {
    BOOST_TEST(static_cast<int>(a.warnings[i].code) == static_cast<int>(b.warnings[i].code));
    BOOST_TEST(static_cast<int>(a.warnings[i].source) == static_cast<int>(b.warnings[i].source));
    BOOST_TEST(a.warnings[i].message == b.warnings[i].message);
  }
}

/// Same memory events in order: each field, and its thread by (pid, tid) and name (indices may differ).
inline void expect_same_memory_events(const regionprof::trace& original, const regionprof::trace& imported) {
  BOOST_TEST_REQUIRE(original.memory_events.size() == imported.memory_events.size());
  for (std::size_t i = 0; i < original.memory_events.size(); ++i) {
    const regionprof::memory_event& x = original.memory_events[i];
    const regionprof::memory_event& y = imported.memory_events[i];
    BOOST_TEST_CONTEXT("memory event " << i) {
      BOOST_TEST(x.time_ns == y.time_ns);
      BOOST_TEST(x.bytes == y.bytes);
      BOOST_TEST(x.total_allocated == y.total_allocated);
      BOOST_TEST(x.device == y.device);
      BOOST_TEST(static_cast<int>(x.kind) == static_cast<int>(y.kind));
      const regionprof::thread_info& a = original.threads[x.thread];
      const regionprof::thread_info& b = imported.threads[y.thread];
      BOOST_TEST(a.pid == b.pid);
      BOOST_TEST(a.tid == b.tid);
      BOOST_TEST(name_of(original, a.name) == name_of(imported, b.name));
    }
  }
}

/// Every record of `a` and `b` (threads, intervals, device ops, memory events) is the same, names compared as
/// text (ids may differ); thread indices compared as they are, domain indices through what they point at.
inline void expect_same_trace(const regionprof::trace& a, const regionprof::trace& b) {
  BOOST_TEST_REQUIRE(a.threads.size() == b.threads.size());
  for (std::size_t i = 0; i < a.threads.size(); ++i) {
    BOOST_TEST(a.threads[i].pid == b.threads[i].pid);
    BOOST_TEST(a.threads[i].tid == b.threads[i].tid);
    BOOST_TEST(name_of(a, a.threads[i].name) == name_of(b, b.threads[i].name));
  }
  BOOST_TEST_REQUIRE(a.intervals.size() == b.intervals.size());
  for (std::size_t i = 0; i < a.intervals.size(); ++i) {
    const auto& x = a.intervals[i];
    const auto& y = b.intervals[i];
    BOOST_TEST_CONTEXT("interval " << i) {
      BOOST_TEST(x.start_ns == y.start_ns);
      BOOST_TEST(x.end_ns == y.end_ns);
      BOOST_TEST(name_of(a, x.name) == name_of(b, y.name));
      BOOST_TEST(x.thread == y.thread);
      BOOST_TEST(x.correlation_id == y.correlation_id);
      BOOST_TEST(name_of(a, a.domains[x.domain]) == name_of(b, b.domains[y.domain]));
      BOOST_TEST(static_cast<int>(x.kind) == static_cast<int>(y.kind));
    }
  }
  expect_same_device_ops(a, b);
  expect_same_memory_events(a, b);
  expect_same_trace_properties(a, b);
}

}  // namespace import_test
