// Rule 18 (docs/design.md): the work region instances declare, summed per run and region, on
// tests/support's declared_work_trace (its comment gives every interval); expectations by hand below.
#include <cstdint>
#include <limits>
#include <optional>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "support/analysis_queries.hpp"
#include "support/test_traces.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

const region_aggregate* region_in(const analysis_result& result, std::size_t run, const std::string& id) {
  for (const region_aggregate& a : result.runs.at(run).regions) {
    if (result.regions.at(a.region).id == id) return &a;
  }
  return nullptr;
}

/// The work of region `id` in `run`; fails the test when the region or its work is absent.
const declared_work& work_in(const analysis_result& result, std::size_t run, const std::string& id) {
  const region_aggregate* aggregate = region_in(result, run, id);
  BOOST_TEST_REQUIRE(aggregate != nullptr, id);
  const declared_work* work = work_of(result, *aggregate);
  BOOST_TEST_REQUIRE(work != nullptr, id);
  return *work;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(declared_work)

BOOST_AUTO_TEST_CASE(instances_of_a_region_in_one_run_sum) {
  const analysis_result r = analyze(declared_work_trace(true), analysis_options{});
  BOOST_TEST_REQUIRE(r.runs.size() == 3u);
  const region_aggregate* copy = region_in(r, 0, "aot_module:copy");
  BOOST_TEST_REQUIRE(copy != nullptr);
  BOOST_TEST(copy->calls == 2u);
  BOOST_TEST(copy->cpu_time_ns == 300);  // [100, 300] + [400, 500]
  const regionprof::declared_work& work = work_in(r, 0, "aot_module:copy");
  BOOST_TEST(work.bytes.value_or(0) == 1500u);  // 1000 + 500
  BOOST_TEST(work.flops.value_or(0) == 4000u);  // the first instance only
  BOOST_TEST(!work.items.has_value());          // never declared
  // Runs keep their own work.
  BOOST_TEST(work_in(r, 1, "aot_module:copy").bytes.value_or(0) == 1500u);
  BOOST_TEST(work_in(r, 2, "aot_module:copy").bytes.value_or(0) == 1000u);
  BOOST_TEST(!work_in(r, 1, "aot_module:copy").flops.has_value());
  // A zero-length instance keeps its work (its throughput is what is absent, report_detail).
  const region_aggregate* idle = region_in(r, 0, "aot_module:idle");
  BOOST_TEST_REQUIRE(idle != nullptr);
  BOOST_TEST(idle->cpu_time_ns == 0);
  BOOST_TEST(work_in(r, 0, "aot_module:idle").items.value_or(0) == 7u);
}

BOOST_AUTO_TEST_CASE(a_nested_region_work_is_not_its_topmost_regions) {
  // aot_module:inner [120, 140] (bytes 99) lies inside copy [100, 300]: rule 4 gives it no aggregate,
  // and its work does not go to copy (copy's bytes stay 1000 + 500).
  const analysis_result r = analyze(declared_work_trace(false), analysis_options{});
  BOOST_TEST(region_in(r, 0, "aot_module:inner") == nullptr);
  BOOST_TEST(work_in(r, 0, "aot_module:copy").bytes.value_or(0) == 1500u);
}

BOOST_AUTO_TEST_CASE(regions_without_declared_work_have_none) {
  const trace t = trace_builder().thread(1).marker(0, 100).range("aot_module:a", 10, 20).build();
  const analysis_result r = analyze(t, analysis_options{});
  BOOST_TEST_REQUIRE(r.runs.at(0).regions.size() == 1u);
  BOOST_TEST(work_of(r, r.runs[0].regions[0]) == nullptr);
  BOOST_TEST(r.work.empty());
}

BOOST_AUTO_TEST_CASE(work_outside_every_run_and_on_a_skipped_run_counts_nowhere) {
  // A region outside the marker owns nothing (UNMAPPED_REGION_EVENTS); one in a skipped warm-up run
  // neither: only the measured run's instance (bytes 5) is in the result.
  const trace t = trace_builder()
                      .thread(1)
                      .range("aot_module:a", 0, 10).work({.bytes = 1})
                      .marker(100, 200).range("aot_module:a", 110, 120).work({.bytes = 2})
                      .marker(300, 400).range("aot_module:a", 310, 320).work({.bytes = 5})
                      .build();
  analysis_options options;
  options.skip_runs = 1;
  const analysis_result r = analyze(t, options);
  BOOST_TEST_REQUIRE(r.runs.size() == 1u);
  BOOST_TEST(work_in(r, 0, "aot_module:a").bytes.value_or(0) == 5u);
}

BOOST_AUTO_TEST_CASE(sums_saturate_instead_of_wrapping) {
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const trace t = trace_builder()
                      .thread(1)
                      .marker(0, 100)
                      .range("aot_module:a", 10, 20).work({.bytes = max - 1})
                      .range("aot_module:a", 30, 40).work({.bytes = 5})
                      .build();
  const analysis_result r = analyze(t, analysis_options{});
  BOOST_TEST(work_in(r, 0, "aot_module:a").bytes.value_or(0) == max);
}

BOOST_AUTO_TEST_SUITE_END()
