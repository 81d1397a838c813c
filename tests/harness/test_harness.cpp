// regionprof::profile: what runs when, what is reported, and how it fails.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <latch>
#include <map>
#include <semaphore>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "harness_support.hpp"
#include "regionprof/harness/harness.hpp"
#include "regionprof/regions/regions.h"
#include "regionprof/regions/regions.hpp"

using namespace regionprof;
using regionprof::testing::has_warning;
using regionprof::testing::quick;
using regionprof::test::warning_text;

namespace {

std::set<std::string> region_ids(const analysis_result& result) {
  std::set<std::string> ids;
  for (const region_info& r : result.regions) ids.insert(r.id);
  return ids;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(harness)

// 3 user warm-ups (unrecorded) + 1 internal warm-up (recorded, discarded) + 5 measured runs. Call k opens
// region aot_module:call_k, so the report names exactly the calls it measured.
BOOST_AUTO_TEST_CASE(warmups_are_not_reported_and_every_measured_run_is) {
  int calls = 0;
  const Profile profile = regionprof::profile(
      [&] {
        ++calls;
        regionprof_region_push_name("aot_module", ("call_" + std::to_string(calls)).c_str());
        regionprof_region_pop();
      },
      quick(3, 5));
  BOOST_TEST(calls == 3 + 1 + 5);
  const analysis_result& result = profile.result();
  BOOST_REQUIRE_EQUAL(result.runs.size(), 5u);
  BOOST_TEST(region_ids(result) ==
             (std::set<std::string>{"aot_module:call_5", "aot_module:call_6", "aot_module:call_7",
                                    "aot_module:call_8", "aot_module:call_9"}));
  for (std::size_t i = 0; i < 5; ++i) {
    const run_result& run = result.runs[i];
    BOOST_TEST(run.run_index == i);
    BOOST_REQUIRE_EQUAL(run.regions.size(), 1u);
    BOOST_TEST(result.regions.at(run.regions[0].region).id == "aot_module:call_" + std::to_string(5 + i));
    BOOST_TEST(run.regions[0].calls == 1u);
  }
  BOOST_TEST(profile.context().warmup_runs == 3u);
  BOOST_TEST(profile.context().measured_runs == 5u);
  BOOST_TEST(profile.context().uses_inference_function);
  BOOST_TEST(profile.options().skip_runs == 1u);
}

// Wall time (device syncs included) encloses the run marker, which encloses the call.
BOOST_AUTO_TEST_CASE(wall_times_cover_the_run_markers) {
  const Profile profile = regionprof::profile(
      [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, quick(0, 4));
  const trace& t = profile.source();
  BOOST_REQUIRE_EQUAL(t.run_wall_times_ns.size(), 4u);
  BOOST_REQUIRE_EQUAL(profile.result().runs.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const run_result& run = profile.result().runs[i];
    BOOST_TEST(run.wall_time_ns == t.run_wall_times_ns[i]);
    BOOST_TEST(run.cpu_time_ns >= 2'000'000);
    BOOST_TEST(run.wall_time_ns >= run.cpu_time_ns);
    BOOST_TEST(run.residual_cpu_ns == run.cpu_time_ns);  // no region: everything is residual
  }
}

BOOST_AUTO_TEST_CASE(an_exception_from_the_workload_propagates_after_a_clean_stop) {
  int calls = 0;
  BOOST_CHECK_EXCEPTION(regionprof::profile(
                            [&] {
                              if (++calls == 6) throw std::runtime_error("workload failed on call 6");
                            },
                            quick(2, 10)),
                        std::runtime_error, [](const std::runtime_error& e) {
                          return std::string(e.what()) == "workload failed on call 6";
                        });
  BOOST_TEST(calls == 6);
  BOOST_TEST(!capture_session_active());
  const Profile again = regionprof::profile([] {}, quick(0, 2));  // the session was stopped cleanly
  BOOST_TEST(again.result().runs.size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_profile_inside_a_profile_is_refused) {
  BOOST_CHECK_EXCEPTION(regionprof::profile([] { regionprof::profile([] {}, quick(0, 1)); }, quick(0, 2)),
                        std::logic_error, [](const std::logic_error& e) {
                          return std::string(e.what()).find("already active") != std::string::npos;
                        });
  BOOST_TEST(!capture_session_active());
}

// Two threads profile at once. The second call comes while the first is in its unrecorded warm-up, and
// the first's recorded runs go on only once the second call has returned (or, were it let run, once its
// workload has run across the first's capture start): the second is refused before it runs or records
// anything, and the first profile holds exactly its own 3 recorded calls (internal warm-up + 2 measured),
// each a run marker around region aot_module:first, all on its thread, balanced.
BOOST_AUTO_TEST_CASE(a_profile_refused_on_another_thread_leaves_no_trace_in_the_active_one) {
  static const registered_region first_region{region_kind::aot_module, "first"};
  static const registered_region second_region{region_kind::aot_module, "second"};
  std::latch second_may_call(1);
  std::counting_semaphore<2> second_reached(0);  // released in the second's workload, and when its call returns
  std::latch first_recording(1);
  std::latch second_returned(1);
  std::atomic<int> second_calls{0};
  std::string refusal;
  std::thread second([&] {
    second_may_call.wait();
    try {
      (void)regionprof::profile(
          [&] {
            const scoped_region region{second_region};
            if (second_calls.fetch_add(1) != 0) return;
            second_reached.release();
            first_recording.wait();
          },
          quick(1, 1));
    } catch (const std::logic_error& e) {
      refusal = e.what();
    }
    second_reached.release();
    second_returned.count_down();
  });
  int first_calls = 0;
  const Profile profile = regionprof::profile(
      [&] {
        const scoped_region region{first_region};
        switch (++first_calls) {
          case 1:  // the user warm-up, unrecorded
            second_may_call.count_down();
            second_reached.acquire();
            break;
          case 2:  // the internal warm-up run, recorded
            first_recording.count_down();
            second_returned.wait();
            break;
          default: break;
        }
      },
      quick(1, 2));
  second.join();

  BOOST_TEST(refusal.find("already active") != std::string::npos, refusal);
  BOOST_TEST(second_calls.load() == 0);
  BOOST_TEST(first_calls == 1 + 1 + 2);
  BOOST_TEST(!has_warning(profile.result(), warning_code::unbalanced_ranges),
             warning_text(profile.result().warnings, warning_code::unbalanced_ranges));
  BOOST_TEST(profile.result().runs.size() == 2u);
  const trace& t = profile.source();
  const std::int64_t tid = static_cast<std::int64_t>(::syscall(SYS_gettid));
  std::map<std::string, int> ranges;
  for (const cpu_interval& i : t.intervals) {
    BOOST_TEST(t.threads.at(i.thread).tid == tid);
    ++ranges[std::string(t.strings.view(i.name))];
  }
  BOOST_TEST((ranges == std::map<std::string, int>{{"aot_module:first", 3}, {std::string(run_marker_name), 3}}));
  BOOST_TEST(!capture_session_active());
}

// 6 recorded calls (1 internal warm-up + 5 measured) x 2 markers, the first skipped: 11 runs, not 5.
BOOST_AUTO_TEST_CASE(a_run_marker_rule_matching_twice_per_call_is_a_run_count_mismatch) {
  profile_options options = quick(0, 5);
  options.analysis.run_marker = {match_kind::exact, "step", "run", ""};
  BOOST_CHECK_EXCEPTION(regionprof::profile(
                            [] {
                              for (int i = 0; i < 2; ++i) {
                                nvtxRangePushA("step");
                                nvtxRangePop();
                              }
                            },
                            options),
                        std::runtime_error, [](const std::runtime_error& e) {
                          const std::string what = e.what();
                          return what.find("RUN_COUNT_MISMATCH") != std::string::npos &&
                                 what.find("found 11 measured run(s)") != std::string::npos &&
                                 what.find("measured_runs is 5") != std::string::npos;
                        });
  BOOST_TEST(!capture_session_active());
}

BOOST_AUTO_TEST_CASE(a_custom_run_marker_matching_once_per_call_works) {
  profile_options options = quick(1, 3);
  options.analysis.run_marker = {match_kind::regex, "step#\\d+", "run", ""};
  int step = 0;
  const Profile profile = regionprof::profile(
      [&] {
        nvtxRangePushA(("step#" + std::to_string(step++)).c_str());
        nvtxRangePop();
      },
      options);
  BOOST_TEST(profile.result().runs.size() == 3u);
}

// With the capture's memory cap hit, run markers are lost: a counted loss, so a warning, not an error.
BOOST_AUTO_TEST_CASE(run_markers_lost_to_the_memory_cap_are_a_warning) {
  profile_options options = quick(0, 3);
  options.capture.memory_cap_bytes = 64 * 1024;  // one chunk (5458 records): less than one run's 6002
  const Profile profile = regionprof::profile(
      [] {
        for (int i = 0; i < 3000; ++i) {
          nvtxRangePushA("busy");
          nvtxRangePop();
        }
      },
      options);
  const analysis_result& result = profile.result();
  BOOST_TEST(has_warning(result, warning_code::dropped_host_records));
  BOOST_TEST(has_warning(result, warning_code::run_count_mismatch));
}

BOOST_AUTO_TEST_CASE(invalid_options_are_refused_before_the_workload_runs) {
  int calls = 0;
  auto workload = [&] { ++calls; };
  BOOST_CHECK_THROW(regionprof::profile(workload, quick(1, 0)), std::invalid_argument);
  profile_options bad_rule = quick(1, 1);
  bad_rule.analysis.region_rules.push_back({match_kind::regex, "layer_(", "layer", ""});
  BOOST_CHECK_EXCEPTION(regionprof::profile(workload, bad_rule), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).find("'layer_('") != std::string::npos;
                        });
  BOOST_CHECK_THROW(regionprof::profile(std::function<void()>{}, quick(1, 1)), std::invalid_argument);
  BOOST_TEST(calls == 0);
}

// No GPU here: CPU data, no device data, and the reason in DEVICE_TRACING_UNAVAILABLE.
BOOST_AUTO_TEST_CASE(cpu_only_profile_says_why) {
  static const registered_region work{region_kind::aot_module, "work"};
  const Profile profile = regionprof::profile(
      [] {
        const scoped_region region{work};
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      },
      quick(1, 3));
  const analysis_result& result = profile.result();
  BOOST_TEST(!result.has_device_data);
  BOOST_TEST(!profile.source().has_device_data());
  BOOST_TEST(has_warning(result, warning_code::device_tracing_unavailable));
  BOOST_TEST(!result.device_time_total.has_value());
  BOOST_REQUIRE_EQUAL(result.runs.size(), 3u);
  for (const run_result& run : result.runs) {
    BOOST_TEST(!run.device_time_ns.has_value());
    BOOST_REQUIRE_EQUAL(run.regions.size(), 1u);
    BOOST_TEST(!run.regions[0].device_time_ns.has_value());
    BOOST_TEST(run.regions[0].cpu_time_ns >= 200'000);
    BOOST_TEST(run.regions[0].cpu_time_ns + run.residual_cpu_ns == run.cpu_time_ns);
  }
}

// Rule 18 through the real capture (CPU only): two instances of a region per run declare 4096 + 1024
// bytes and 3 items; the report's cpu_bytes_per_second is 5120 B over the region's CPU time in that run,
// as the report itself gives it, and the items likewise. The nested range's work (bytes 7) stays its own.
// docs/design.md, rule 20, through the capture: NVTX ranges no rule matches are the ops of the topmost
// region around them, keyed as the key averages key them (torch's op ranges by op, their per-call
// ', seq = N, op_id = M' cut, rule 10); a nested region is no op, its ranges are the topmost region's;
// a range between regions is the residual's.
BOOST_AUTO_TEST_CASE(nvtx_ranges_inside_a_region_are_its_ops) {
  const Profile profile = regionprof::profile(
      [] {
        regionprof_region_push_name("aot_module", "layer");
        nvtxRangePushA("aten::linear, seq = 7, op_id = 12");
        nvtxRangePushA("aten::addmm");
        nvtxRangePop();
        nvtxRangePop();
        regionprof_region_push_name("aot_module", "nested");
        nvtxRangePushA("aten::relu");
        nvtxRangePop();
        regionprof_region_pop();
        regionprof_region_pop();
        nvtxRangePushA("between");
        nvtxRangePop();
      },
      quick(0, 3));
  const analysis_result& result = profile.result();
  BOOST_TEST_REQUIRE(result.region_ops.size() == 2u);
  BOOST_TEST(result.regions.at(result.region_ops[0].region).id == "aot_module:layer");
  BOOST_TEST(result.region_ops[1].region == region_op_rows::residual);
  std::map<std::string, key_average_row> layer;
  for (const key_average_row& row : result.region_ops[0].rows) layer[row.key] = row;
  BOOST_TEST_REQUIRE(layer.size() == 3u);
  for (const char* key : {"aten::linear", "aten::addmm", "aten::relu"}) {
    BOOST_TEST_REQUIRE(layer.count(key) == 1u, key);
    BOOST_TEST(layer[key].count == 3u, key);
    BOOST_TEST((layer[key].type == device_type::cpu), key);
  }
  const key_average_row& linear = layer["aten::linear"];
  const key_average_row& addmm = layer["aten::addmm"];
  BOOST_TEST(linear.self_cpu_time_ns == linear.cpu_time_total_ns - addmm.cpu_time_total_ns);
  BOOST_TEST(addmm.self_cpu_time_ns == addmm.cpu_time_total_ns);
  BOOST_TEST_REQUIRE(result.region_ops[1].rows.size() == 1u);
  BOOST_TEST(result.region_ops[1].rows[0].key == "between");
  BOOST_TEST(result.region_ops[1].rows[0].count == 3u);
}

BOOST_AUTO_TEST_CASE(declared_bytes_give_bytes_over_the_regions_cpu_time) {
  static const registered_region copy{region_kind::aot_module, "copy"};
  static const registered_region inner{"detail", "inner"};  // no rule: not a region
  std::vector<char> buffer(1 << 16);
  const Profile profile = regionprof::profile(
      [&] {
        {
          scoped_region scope{copy, {.bytes = 4096, .items = 3}};
          scoped_region nested{inner, {.bytes = 7}};
          std::fill(buffer.begin(), buffer.end(), 1);
        }
        {
          scoped_region scope{copy, {.bytes = 1024}};
          std::fill(buffer.begin(), buffer.end(), 2);
        }
      },
      quick(0, 4));
  const boost::json::object report = boost::json::parse(to_json(profile)).as_object();
  const boost::json::array& runs = report.at("runs").as_array();
  BOOST_TEST_REQUIRE(runs.size() == 4u);
  for (const boost::json::value& run : runs) {
    const boost::json::array& regions = run.at("regions").as_array();
    BOOST_TEST_REQUIRE(regions.size() == 1u);
    const boost::json::object& entry = regions[0].as_object();
    BOOST_TEST(entry.at("region_id").as_string() == "aot_module:copy");
    BOOST_TEST(entry.at("calls").to_number<std::uint64_t>() == 2u);
    BOOST_TEST(entry.at("work").at("bytes").to_number<std::uint64_t>() == 5120u);
    BOOST_TEST(entry.at("work").at("items").to_number<std::uint64_t>() == 3u);
    BOOST_TEST(!entry.at("work").as_object().contains("flops"));
    const double cpu_s = entry.at("cpu_time_us").to_number<double>() / 1e6;
    BOOST_TEST_REQUIRE(cpu_s > 0.0);
    const boost::json::object& rate = entry.at("throughput").as_object();
    BOOST_TEST(rate.at("cpu_bytes_per_second").to_number<double>() == 5120.0 / cpu_s,
               boost::test_tools::tolerance(1e-12));
    BOOST_TEST(rate.at("cpu_items_per_second").to_number<double>() == 3.0 / cpu_s, boost::test_tools::tolerance(1e-12));
    BOOST_TEST(!rate.contains("device_bytes_per_second"));  // CPU only: no device data
  }
}

BOOST_AUTO_TEST_SUITE_END()
