// Rule 20 (ops per region) on hand-built traces; the random traces of test_reference.cpp check it against
// the naive reference.
//
// The "key_averages" test trace (drawn in test_key_averages.cpp): region L in run 0 owns aten::linear
// [110,400] > aten::addmm [120,300] > launch c1 (gemm 200), launch c2 [310,320] (bias 20) under
// aten::linear, aten::relu [410,480] > launch c3 (relu_k 10). Run 1 has no region: its aten::linear
// [2100,2300] > aten::addmm [2110,2250] > launch c4 (gemm 100) are the residual's.
//
//   L:          aten::linear  CPU  1  self 290-180-10=100  total 290  dev self 0    total 200+20=220
//               gemm          CUDA 1                                  dev 200
//               aten::addmm   CPU  1  self 180-10=170      total 180  dev self 0    total 200
//               aten::relu    CPU  1  self 70-10=60        total 70   dev self 0    total 10
//               cudaLaunch... CPU  3  self 30              total 30   dev self 230  total 230
//               bias          CUDA 1                                  dev 20
//               relu_k        CUDA 1                                  dev 10
//   (residual): aten::linear  CPU  1  self 200-140=60      total 200  dev self 0    total 100
//               aten::addmm   CPU  1  self 140-10=130      total 140  dev self 0    total 100
//               gemm          CUDA 1                                  dev 100
//               cudaLaunch... CPU  1  self 10              total 10   dev self 100  total 100
// (The run markers are no rows; aten::linear at [3000,3100] lies outside every run.)
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "support/analysis_queries.hpp"
#include "support/random_trace.hpp"
#include "support/test_traces.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

struct expected_row {
  const char* key;
  device_type type;
  std::uint64_t count;
  std::int64_t self_cpu;
  std::int64_t total_cpu;
  std::optional<std::int64_t> self_device;
  std::optional<std::int64_t> total_device;
};

constexpr device_type cpu = device_type::cpu;
constexpr device_type cuda = device_type::cuda;

/// The entry of `owner` (a region id, or "(residual)"), or nullptr.
const region_op_rows* ops_of(const analysis_result& result, const std::string& owner) {
  for (const region_op_rows& entry : result.region_ops) {
    const std::string id = entry.region == region_op_rows::residual ? std::string(region_op_rows::residual_id)
                                                                     : result.regions.at(entry.region).id;
    if (id == owner) return &entry;
  }
  return nullptr;
}

/// `owner`'s rows are exactly `expected`, in order.
void check_rows(const analysis_result& result, const std::string& owner, const std::vector<expected_row>& expected) {
  BOOST_TEST_CONTEXT("ops of " << owner) {
    const region_op_rows* entry = ops_of(result, owner);
    BOOST_TEST_REQUIRE(entry != nullptr);
    BOOST_TEST_REQUIRE(entry->rows.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const key_average_row& row = entry->rows[i];
      const expected_row& e = expected[i];
      BOOST_TEST_CONTEXT("row " << i << " " << e.key) {
        BOOST_TEST(row.key == e.key);
        BOOST_TEST((row.type == e.type));
        BOOST_TEST(row.count == e.count);
        BOOST_TEST(row.self_cpu_time_ns == e.self_cpu);
        BOOST_TEST(row.cpu_time_total_ns == e.total_cpu);
        BOOST_TEST((row.self_device_time_ns == e.self_device));
        BOOST_TEST((row.device_time_total_ns == e.total_device));
      }
    }
  }
}

std::vector<std::string> owners(const analysis_result& result) {
  std::vector<std::string> out;
  for (const region_op_rows& entry : result.region_ops) {
    out.push_back(entry.region == region_op_rows::residual ? std::string(region_op_rows::residual_id)
                                                           : result.regions.at(entry.region).id);
  }
  return out;
}

using ids = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(region_ops)

BOOST_AUTO_TEST_CASE(each_region_and_the_residual_by_hand) {
  named_trace t = test_trace("key_averages");
  const analysis_result r = analyze(t.value, t.options);
  BOOST_TEST(r.has_region_ops);
  BOOST_TEST(owners(r) == (ids{"aot_module:L", "(residual)"}), boost::test_tools::per_element());
  check_rows(r, "aot_module:L",
             {{"aten::linear", cpu, 1, 100, 290, 0, 220},
              {"gemm", cuda, 1, 0, 0, 200, 200},
              {"aten::addmm", cpu, 1, 170, 180, 0, 200},
              {"aten::relu", cpu, 1, 60, 70, 0, 10},
              {"cudaLaunchKernel", cpu, 3, 30, 30, 230, 230},
              {"bias", cuda, 1, 0, 0, 20, 20},
              {"relu_k", cuda, 1, 0, 0, 10, 10}});
  check_rows(r, "(residual)",
             {{"aten::linear", cpu, 1, 60, 200, 0, 100},
              {"aten::addmm", cpu, 1, 130, 140, 0, 100},
              {"gemm", cuda, 1, 0, 0, 100, 100},
              {"cudaLaunchKernel", cpu, 1, 10, 10, 100, 100}});
}

BOOST_AUTO_TEST_CASE(row_limit_keeps_the_longest_rows_of_each_owner) {
  named_trace t = test_trace("key_averages");
  t.options.row_limit = 2;
  const analysis_result r = analyze(t.value, t.options);
  check_rows(r, "aot_module:L", {{"aten::linear", cpu, 1, 100, 290, 0, 220}, {"gemm", cuda, 1, 0, 0, 200, 200}});
  check_rows(r, "(residual)", {{"aten::linear", cpu, 1, 60, 200, 0, 100}, {"aten::addmm", cpu, 1, 130, 140, 0, 100}});
  t.options.row_limit = 0;
  const analysis_result none = analyze(t.value, t.options);
  BOOST_TEST(owners(none) == (ids{"aot_module:L", "(residual)"}), boost::test_tools::per_element());
  for (const region_op_rows& entry : none.region_ops) BOOST_TEST(entry.rows.empty());
}

// marker [0,1000]
//   aot_module:outer [100,900]
//     forward [150,850]                  self 700 - 200 = 500 (the nested region is its child)
//       aot_module:inner [200,400]       nested: no row; what it holds is outer's
//         aten::mm [250,350]
//   aot_module:solo [920,980]            topmost, nothing inside: an entry without rows
BOOST_AUTO_TEST_CASE(nested_regions_are_no_rows_and_their_ops_are_the_topmost_regions) {
  const trace t = trace_builder()
                      .thread(1, "main")
                      .marker(0, 1000)
                      .range("aot_module:outer", 100, 900)
                      .cpu_op("forward", 150, 850)
                      .range("aot_module:inner", 200, 400)
                      .cpu_op("aten::mm", 250, 350)
                      .range("aot_module:solo", 920, 980)
                      .build();
  const analysis_result r = analyze(t, analysis_options{});
  BOOST_TEST(owners(r) == (ids{"aot_module:outer", "aot_module:solo", "(residual)"}), boost::test_tools::per_element());
  check_rows(r, "aot_module:outer",
             {{"forward", cpu, 1, 500, 700, std::nullopt, std::nullopt},
              {"aten::mm", cpu, 1, 100, 100, std::nullopt, std::nullopt}});
  check_rows(r, "aot_module:solo", {});
  check_rows(r, "(residual)", {});
}

// Equal totals in the two domains: by key, then CPU before CUDA (rule 10's tie-break).
//   marker [0,1000] > aot_module:r [0,500] > k [100,140] (CPU 40), launch c1 [200,210] -> k 40, a 40
BOOST_AUTO_TEST_CASE(rows_of_equal_total_go_by_key_then_cpu_first) {
  const trace t = trace_builder()
                      .thread(1, "main")
                      .marker(0, 1000)
                      .range("aot_module:r", 0, 500)
                      .cpu_op("k", 100, 140)
                      .launch(200, 210, 1)
                      .kernel("k", 300, 340, 1)
                      .kernel("a", 350, 390, 1)
                      .build();
  const analysis_result r = analyze(t, analysis_options{});
  check_rows(r, "aot_module:r",
             {{"a", cuda, 1, 0, 0, 40, 40},
              {"k", cpu, 1, 40, 40, 0, 0},
              {"k", cuda, 1, 0, 0, 40, 40},
              {"cudaLaunchKernel", cpu, 1, 10, 10, 80, 80}});
}

// The "cross_thread" test trace (test_traces.cpp): main's run [0,1000] holds aot_module:enc [100,600];
// the worker's autograd::engine [200,500] holds aot_module:bwd [250,400] > launch c1 [300,310] (k1 100)
// and launch c2 [450,460] (k2 50, outside bwd: main's enc is open at 450, rule 9); loader [700,800] >
// launch c3 (k3 30) lies outside every region; late [1100,1200] after the run.
//   enc:        k2 (the launch's CPU row stays with the worker's owner, the residual)
//   bwd:        k1 100; cudaLaunchKernel 1 self 10 total 10, dev 100
//   (residual): autograd::engine self 300-150-10=140 total 300 dev 150; loader self 90 total 100 dev 30;
//               k3 30; cudaLaunchKernel 2 self 20 total 20, dev 50+30
// With cross_thread off, the worker's work is counted in OFF_THREAD_EVENTS and is nobody's op.
BOOST_AUTO_TEST_CASE(off_thread_ops_belong_to_their_owners) {
  named_trace on = test_trace("cross_thread");
  const analysis_result r = analyze(on.value, on.options);
  BOOST_TEST(owners(r) == (ids{"aot_module:enc", "aot_module:bwd", "(residual)"}), boost::test_tools::per_element());
  check_rows(r, "aot_module:enc", {{"k2", cuda, 1, 0, 0, 50, 50}});
  check_rows(r, "aot_module:bwd", {{"k1", cuda, 1, 0, 0, 100, 100}, {"cudaLaunchKernel", cpu, 1, 10, 10, 100, 100}});
  check_rows(r, "(residual)",
             {{"autograd::engine", cpu, 1, 140, 300, 0, 150},
              {"loader", cpu, 1, 90, 100, 0, 30},
              {"k3", cuda, 1, 0, 0, 30, 30},
              {"cudaLaunchKernel", cpu, 2, 20, 20, 80, 80}});

  named_trace off = test_trace("off_thread_events");
  const analysis_result counted = analyze(off.value, off.options);
  BOOST_TEST(owners(counted) == (ids{"aot_module:enc", "(residual)"}), boost::test_tools::per_element());
  check_rows(counted, "aot_module:enc", {});
  check_rows(counted, "(residual)", {});
}

BOOST_AUTO_TEST_CASE(without_device_data_rows_have_no_device_figures) {
  named_trace t = test_trace("no_device_data");
  const analysis_result r = analyze(t.value, t.options);
  check_rows(r, "aot_module:a", {{"aten::add", cpu, 1, 50, 50, std::nullopt, std::nullopt}});
}

// No run marker: the synthetic run's intervals outside every region are the residual's (rule 2).
BOOST_AUTO_TEST_CASE(the_synthetic_run_has_a_residual_too) {
  const trace t = trace_builder()
                      .thread(1, "main")
                      .cpu_op("setup", 0, 100)
                      .range("aot_module:a", 100, 300)
                      .cpu_op("aten::add", 150, 200)
                      .build();
  const analysis_result r = analyze(t, analysis_options{});
  check_rows(r, "aot_module:a", {{"aten::add", cpu, 1, 50, 50, std::nullopt, std::nullopt}});
  check_rows(r, "(residual)", {{"setup", cpu, 1, 100, 100, std::nullopt, std::nullopt}});
}

BOOST_AUTO_TEST_CASE(a_trace_without_runs_has_no_residual_entry) {
  const trace t = trace_builder().device_tracing(true).build();
  const analysis_result r = analyze(t, analysis_options{});
  BOOST_TEST(r.runs.empty());
  BOOST_TEST(r.has_region_ops);
  BOOST_TEST(r.region_ops.empty());
}

// With cross_thread on (which the reference leaves out): every op row of the key averages is split over
// the owners without loss, each region's device rows sum to its device time and the residual's to the
// residual's; the region tree changes nothing.
BOOST_AUTO_TEST_CASE(owners_split_the_key_averages_on_random_traces_with_cross_thread) {
  random_trace_options shape;
  shape.threads = 4;
  shape.other_thread_marker_probability = 0.2;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    BOOST_TEST_CONTEXT("seed " << seed) {
      const trace t = random_trace(seed * 104729, shape);
      analysis_options options;
      options.cross_thread = true;
      options.row_limit = 1'000'000;
      const analysis_result r = analyze(t, options);
      std::map<std::pair<std::string, device_type>, key_average_row> summed;
      std::vector<std::int64_t> owner_device(r.region_ops.size(), 0);
      for (std::size_t k = 0; k < r.region_ops.size(); ++k) {
        for (const key_average_row& row : r.region_ops[k].rows) {
          key_average_row& sum = summed[{row.key, row.type}];
          sum.count += row.count;
          sum.self_cpu_time_ns += row.self_cpu_time_ns;
          sum.cpu_time_total_ns += row.cpu_time_total_ns;
          sum.self_device_time_ns = sum.self_device_time_ns.value_or(0) + row.self_device_time_ns.value_or(0);
          sum.device_time_total_ns = sum.device_time_total_ns.value_or(0) + row.device_time_total_ns.value_or(0);
          if (row.type == cuda) owner_device[k] += *row.device_time_total_ns;
        }
      }
      const auto is_op = [](const std::string& key) {
        return key != marker_name && key.rfind("aot_module:", 0) != 0 && key.rfind("untuned_module:", 0) != 0;
      };
      std::size_t ops = 0;
      for (const key_average_row& row : r.cpu_time_total.rows) {
        if (!is_op(row.key)) continue;
        ++ops;
        BOOST_TEST_CONTEXT("key " << row.key << " " << to_string(row.type)) {
          const auto found = summed.find({row.key, row.type});
          BOOST_TEST_REQUIRE((found != summed.end()));
          BOOST_TEST(found->second.count == row.count);
          BOOST_TEST(found->second.self_cpu_time_ns == row.self_cpu_time_ns);
          BOOST_TEST(found->second.cpu_time_total_ns == row.cpu_time_total_ns);
          BOOST_TEST(found->second.self_device_time_ns.value_or(0) == row.self_device_time_ns.value_or(0));
          BOOST_TEST(found->second.device_time_total_ns.value_or(0) == row.device_time_total_ns.value_or(0));
        }
      }
      std::size_t summed_ops = 0;  // a nested marker is a row of its owner (rule 20) and merges with the runs' markers
      for (const auto& [key, row] : summed) summed_ops += is_op(key.first) ? 1 : 0;
      BOOST_TEST(ops == summed_ops);
      std::vector<std::int64_t> region_device(r.regions.size(), 0);
      std::int64_t residual_device = 0;
      for (const run_result& run : r.runs) {
        for (const region_aggregate& a : run.regions) region_device[a.region] += a.device_time_ns.value_or(0);
        residual_device += run.residual_device_ns.value_or(0);
      }
      for (std::size_t k = 0; k < r.region_ops.size(); ++k) {
        const std::uint32_t region = r.region_ops[k].region;
        if (region != region_op_rows::residual) {
          BOOST_TEST(region == k);
          BOOST_TEST(owner_device[k] == region_device[region]);
        } else {
          // The residual's device time is clamped at 0 per run (rule 7); the rows are what it owned.
          BOOST_TEST(owner_device[k] >= residual_device);
        }
      }
      analysis_options no_tree = options;
      no_tree.region_tree = false;
      const analysis_result without = analyze(t, no_tree);
      BOOST_TEST_REQUIRE(without.region_ops.size() == r.region_ops.size());
      for (std::size_t k = 0; k < r.region_ops.size(); ++k) {
        BOOST_TEST(without.region_ops[k].region == r.region_ops[k].region);
        BOOST_TEST(row_keys({"", 0, without.region_ops[k].rows}) == row_keys({"", 0, r.region_ops[k].rows}),
                   boost::test_tools::per_element());
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
