// Rule 10 on the "key_averages" test trace:
//
//   run 0  marker [0,1000]                        run 1  marker [2000,2600]
//            L [100,500]                                   aten::linear [2100,2300]
//              aten::linear [110,400]                        aten::addmm [2110,2250]
//                aten::addmm [120,300]                         launch c4 [2120,2130] -> gemm 100
//                  launch c1 [130,140] -> gemm 200
//                launch c2 [310,320] -> bias 20       outside: aten::linear [3000,3100] (no run)
//              aten::relu [410,480]
//                launch c3 [420,430] -> relu_k 10
//
// Hand-computed rows (self = total - direct children; device total = launched from the subtree):
//   regionprof.profiled_run  count 2  total 1000+600=1600  self (1000-400)+(600-200)=1000  dev 230+100=330
//   aot_module:L             count 1  total 400   self 400-290-70=40                      dev 200+20+10=230
//   aten::linear             count 2  total 290+200=490  self (290-180-10)+(200-140)=160  dev 220+100=320
//   aten::addmm              count 2  total 180+140=320  self (180-10)+(140-10)=300       dev 200+100=300
//   aten::relu               count 1  total 70    self 70-10=60                            dev 10
//   cudaLaunchKernel         count 4  total 40    self 40   self dev 330                   dev 330
//   CUDA gemm 2 / 300, bias 1 / 20, relu_k 1 / 10
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "support/analysis_queries.hpp"
#include "support/test_traces.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

analysis_result key_average_result(std::size_t row_limit = 20) {
  named_trace t = test_trace("key_averages");
  t.options.row_limit = row_limit;
  return analyze(t.value, t.options);
}

struct expected_row {
  const char* key;
  device_type type;
  std::uint64_t count;
  std::int64_t self_cpu;
  std::int64_t total_cpu;
  std::int64_t self_device;
  std::int64_t total_device;
};

using ids = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(key_averages)

BOOST_AUTO_TEST_CASE(counts_and_self_total_times) {
  const analysis_result r = key_average_result();
  const expected_row expected[] = {
      {"regionprof.profiled_run", device_type::cpu, 2, 1000, 1600, 0, 330},
      {"aot_module:L", device_type::cpu, 1, 40, 400, 0, 230},
      {"aten::linear", device_type::cpu, 2, 160, 490, 0, 320},
      {"aten::addmm", device_type::cpu, 2, 300, 320, 0, 300},
      {"aten::relu", device_type::cpu, 1, 60, 70, 0, 10},
      {"cudaLaunchKernel", device_type::cpu, 4, 40, 40, 330, 330},
      {"gemm", device_type::cuda, 2, 0, 0, 300, 300},
      {"bias", device_type::cuda, 1, 0, 0, 20, 20},
      {"relu_k", device_type::cuda, 1, 0, 0, 10, 10},
  };
  BOOST_TEST(r.cpu_time_total.rows.size() == 9u);
  for (const expected_row& e : expected) {
    BOOST_TEST_CONTEXT(e.key) {
      const key_average_row* row = find_row(r.cpu_time_total, e.key, e.type);
      BOOST_TEST_REQUIRE(row != nullptr);
      BOOST_TEST(row->count == e.count);
      BOOST_TEST(row->self_cpu_time_ns == e.self_cpu);
      BOOST_TEST(row->cpu_time_total_ns == e.total_cpu);
      BOOST_TEST(*row->self_device_time_ns == e.self_device);
      BOOST_TEST(*row->device_time_total_ns == e.total_device);
    }
  }
}

BOOST_AUTO_TEST_CASE(cpu_view_sorted_by_total_cpu) {
  const analysis_result r = key_average_result();
  BOOST_TEST(r.cpu_time_total.sort_by == "cpu_time_total");
  BOOST_TEST(r.cpu_time_total.row_limit == 20u);
  // 1600, 490, 400, 320, 70, 40, then the CUDA rows at 0 ordered by key.
  BOOST_TEST(row_keys(r.cpu_time_total) ==
                 (ids{"regionprof.profiled_run", "aten::linear", "aot_module:L", "aten::addmm", "aten::relu",
                      "cudaLaunchKernel", "bias", "gemm", "relu_k"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(device_view_sorted_by_total_device) {
  const analysis_result r = key_average_result();
  BOOST_TEST_REQUIRE(r.device_time_total.has_value());
  BOOST_TEST(r.device_time_total->sort_by == "device_time_total");
  // 330 (tie: by key), 320, 300 (tie), 230, 20, 10 (tie).
  BOOST_TEST(row_keys(*r.device_time_total) ==
                 (ids{"cudaLaunchKernel", "regionprof.profiled_run", "aten::linear", "aten::addmm", "gemm",
                      "aot_module:L", "bias", "aten::relu", "relu_k"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(row_limit_cuts_both_views) {
  const analysis_result r = key_average_result(3);
  BOOST_TEST(r.cpu_time_total.row_limit == 3u);
  BOOST_TEST(row_keys(r.cpu_time_total) == (ids{"regionprof.profiled_run", "aten::linear", "aot_module:L"}),
             boost::test_tools::per_element());
  BOOST_TEST(row_keys(*r.device_time_total) == (ids{"cudaLaunchKernel", "regionprof.profiled_run", "aten::linear"}),
             boost::test_tools::per_element());
  BOOST_TEST(key_average_result(0).cpu_time_total.rows.empty());
}

BOOST_AUTO_TEST_CASE(same_name_on_cpu_and_device_gives_two_rows) {
  trace_builder b;
  b.thread(1).marker(0, 100).cpu_op("fused", 10, 50).launch(20, 30, 1).kernel("fused", 40, 70, 1);
  const analysis_result r = analyze(b.get(), analysis_options{});
  const key_average_row* cpu = find_row(r.cpu_time_total, "fused", device_type::cpu);
  const key_average_row* gpu = find_row(r.cpu_time_total, "fused", device_type::cuda);
  BOOST_TEST_REQUIRE(cpu != nullptr);
  BOOST_TEST_REQUIRE(gpu != nullptr);
  BOOST_TEST(cpu->cpu_time_total_ns == 40);
  BOOST_TEST(cpu->self_cpu_time_ns == 30);      // 40 - launch 10
  BOOST_TEST(*cpu->device_time_total_ns == 30);  // the kernel it launched
  BOOST_TEST(*cpu->self_device_time_ns == 0);    // not an API call
  BOOST_TEST(gpu->count == 1u);
  BOOST_TEST(gpu->cpu_time_total_ns == 0);
  BOOST_TEST(*gpu->device_time_total_ns == 30);
}

BOOST_AUTO_TEST_CASE(events_outside_runs_are_not_counted) {
  const analysis_result r = key_average_result();
  // The third aten::linear [3000,3100] is outside every run: count stays 2, total 490.
  BOOST_TEST(find_row(r.cpu_time_total, "aten::linear", device_type::cpu)->count == 2u);
  // A kernel launched outside every run is no row either.
  trace_builder b;
  b.thread(1).marker(0, 100).launch(200, 210, 1).kernel("outside", 220, 230, 1);
  const analysis_result outside = analyze(b.get(), analysis_options{});
  BOOST_TEST(!find_row(outside.cpu_time_total, "outside", device_type::cuda));
  BOOST_TEST(*outside.runs.at(0).device_time_ns == 0);
}

BOOST_AUTO_TEST_SUITE_END()
