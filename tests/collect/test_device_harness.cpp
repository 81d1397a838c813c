// The in-process harness (regionprof::profile) on a machine without a driver: a complete CPU profile,
// and a DEVICE_TRACING_UNAVAILABLE warning that says why.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <boost/test/unit_test.hpp>

#include "regionprof/collect/cupti_library.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/regions/regions.hpp"

using namespace regionprof;

BOOST_AUTO_TEST_SUITE(collect_harness)

BOOST_AUTO_TEST_CASE(without_a_driver_the_harness_gives_a_complete_cpu_profile) {
  if (collect::process_driver().loaded()) {
    std::printf("skipped: this machine has a CUDA driver; the no-driver path is tested where there is none\n");
    std::exit(77);
  }
  static const registered_region encode{region_kind::aot_module, "encode"};
  static const registered_region decode{region_kind::aot_module, "decode"};
  const auto busy = [](int n) {
    volatile double sum = 0;
    for (int i = 0; i < n; ++i) sum = sum + i;
  };
  profile_options options;
  options.warmup_runs = 1;
  options.measured_runs = 3;
  const Profile profile = regionprof::profile(
      [&] {
        {
          const scoped_region r{encode};
          busy(20'000);
        }
        {
          const scoped_region r{decode};
          busy(10'000);
        }
      },
      options);
  const analysis_result& result = profile.result();
  BOOST_TEST(!result.has_device_data);
  BOOST_REQUIRE_EQUAL(result.runs.size(), 3u);
  for (const run_result& run : result.runs) {
    BOOST_REQUIRE_EQUAL(run.regions.size(), 2u);
    std::int64_t owned = 0;
    for (const region_aggregate& region : run.regions) {
      BOOST_TEST(region.calls == 1u);
      BOOST_TEST(region.cpu_time_ns > 0);
      BOOST_TEST(!region.device_time_ns.has_value());
      owned += region.cpu_time_ns;
    }
    BOOST_TEST(owned + run.residual_cpu_ns == run.cpu_time_ns);
    BOOST_TEST(!run.device_time_ns.has_value());
  }
  bool said_why = false;
  for (const warning& w : result.warnings) {
    if (w.code == warning_code::device_tracing_unavailable) {
      said_why = w.message.find("no CUDA driver") != std::string::npos;
    }
  }
  BOOST_TEST(said_why);
}

BOOST_AUTO_TEST_SUITE_END()
