// Per-device run figures (report `runs[i].timing.devices`): rule 6's busy-sum, union and span per device.
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "regionprof/analysis/analysis.hpp"
#include "regionprof/report/report.hpp"
#include "support/trace_builder.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

/// Two runs; one process drives devices 0 and 1.
///   run 0 [0,1000]: launches 1..4 at 100, 200, 300, 400 (each 10 ns)
///     device 0: k1 [200,500] stream 7, k2 [400,600] stream 8   (k2 overlaps k1 by 100)
///     device 1: k3 [300,350] stream 7, k4 [700,900] stream 7
///   run 1 [2000,3000]: launch 5 at 2100 -> device 1: k5 [2200,2300]
trace two_devices() {
  return trace_builder()
      .thread(1)
      .marker(0, 1000)
      .range("aot_module:a", 50, 950)
      .launch(100, 110, 1)
      .launch(200, 210, 2)
      .launch(300, 310, 3)
      .launch(400, 410, 4)
      .marker(2000, 3000)
      .launch(2100, 2110, 5)
      .kernel("k1", 200, 500, 1, 7, 0)
      .kernel("k2", 400, 600, 2, 8, 0)
      .kernel("k3", 300, 350, 3, 7, 1)
      .kernel("k4", 700, 900, 4, 7, 1)
      .kernel("k5", 2200, 2300, 5, 7, 1)
      .build();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device_split)

BOOST_AUTO_TEST_CASE(a_process_on_two_gpus_shows_both) {
  const analysis_result r = analyze(two_devices(), analysis_options{});
  BOOST_TEST_REQUIRE(r.runs.size() == 2u);
  const run_result& run0 = r.runs[0];
  BOOST_TEST(*run0.device_time_ns == 300 + 200 + 50 + 200);  // 750
  BOOST_TEST(*run0.device_busy_ns == 600);  // [200,600] u [700,900] = 400 + 200 (k3 lies inside k1)
  BOOST_TEST(*run0.device_span_ns == 700);                   // 900 - 200
  BOOST_TEST_REQUIRE(run0.devices.size() == 2u);
  BOOST_TEST(run0.devices[0].device == 0);
  BOOST_TEST(run0.devices[0].device_time_ns == 500);  // 300 + 200
  BOOST_TEST(run0.devices[0].device_busy_ns == 400);  // [200,600]
  BOOST_TEST(run0.devices[0].device_span_ns == 400);  // 600 - 200
  BOOST_TEST(run0.devices[1].device == 1);
  BOOST_TEST(run0.devices[1].device_time_ns == 250);  // 50 + 200
  BOOST_TEST(run0.devices[1].device_busy_ns == 250);  // disjoint
  BOOST_TEST(run0.devices[1].device_span_ns == 600);  // 900 - 300
  const run_result& run1 = r.runs[1];
  BOOST_TEST_REQUIRE(run1.devices.size() == 1u);  // only device 1 ran anything of run 1
  BOOST_TEST(run1.devices[0].device == 1);
  BOOST_TEST(run1.devices[0].device_time_ns == 100);
  BOOST_TEST(run1.devices[0].device_busy_ns == 100);
  BOOST_TEST(run1.devices[0].device_span_ns == 100);
}

BOOST_AUTO_TEST_CASE(one_device_repeats_the_run_figures) {
  const trace t = trace_builder()
                      .thread(1)
                      .marker(0, 1000)
                      .launch(100, 110, 1)
                      .launch(200, 210, 2)
                      .kernel("a", 200, 600, 1, 7, 3)
                      .kernel("b", 300, 500, 2, 8, 3)
                      .build();
  const analysis_result r = analyze(t, analysis_options{});
  BOOST_TEST_REQUIRE(r.runs.at(0).devices.size() == 1u);
  const device_timing& d = r.runs[0].devices[0];
  BOOST_TEST(d.device == 3);
  BOOST_TEST(d.device_time_ns == 600);  // 400 + 200
  BOOST_TEST(d.device_busy_ns == 400);  // [200,600]
  BOOST_TEST(d.device_span_ns == 400);
}

BOOST_AUTO_TEST_CASE(the_json_report_lists_devices_iff_device_data) {
  const trace t = two_devices();
  const analysis_options options;
  const boost::json::value report = boost::json::parse(to_json(Profile(t, options, {}, analyze(t, options))));
  const boost::json::array& devices = report.at("runs").at(0).at("timing").at("devices").as_array();
  BOOST_TEST_REQUIRE(devices.size() == 2u);
  BOOST_TEST(devices[1].at("device").to_number<int>() == 1);
  BOOST_TEST(devices[1].at("device_time_us").as_double() == 0.25);
  BOOST_TEST(devices[1].at("device_busy_us").as_double() == 0.25);
  BOOST_TEST(devices[1].at("device_span_us").as_double() == 0.6);

  const trace cpu_only = trace_builder().thread(1).marker(0, 1000).build();
  const boost::json::value plain = boost::json::parse(to_json(Profile(cpu_only, options, {}, analyze(cpu_only, options))));
  BOOST_TEST(!plain.at("runs").at(0).at("timing").as_object().contains("devices"));

  const trace traced_idle = trace_builder().thread(1).marker(0, 1000).device_tracing().build();
  const boost::json::value idle = boost::json::parse(to_json(Profile(traced_idle, options, {}, analyze(traced_idle, options))));
  BOOST_TEST(idle.at("runs").at(0).at("timing").at("devices").as_array().empty());
}

BOOST_AUTO_TEST_SUITE_END()
