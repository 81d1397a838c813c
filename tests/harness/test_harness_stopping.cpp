// The harness's stopping rule (docs/design.md, rule 16), cold runs and report `environment`: run counts,
// stop reasons, flush ranges and the machine's state, never timings.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "harness_support.hpp"
#include "regionprof/harness/harness.hpp"

using namespace regionprof;
using regionprof::testing::has_warning;
using regionprof::testing::quick;
namespace fs = std::filesystem;

namespace {

/// A fake /proc and /sys: a loaded 2-CPU machine on powersave with a 64 KiB last-level cache.
class fake_machine {
 public:
  fake_machine() {
    root_ = fs::temp_directory_path() / ("regionprof-harness-machine-" + std::to_string(::getpid()));
    const std::map<std::string, std::string> files{
        {"proc/cpuinfo", "model name\t: Fake CPU\n"},
        {"proc/loadavg", "3.50 1.00 0.50 1/1 1\n"},
        {"proc/meminfo", "MemTotal: 1024 kB\nMemAvailable: 512 kB\n"},
        {"sys/devices/system/cpu/online", "0-1\n"},
        {"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n"},
        {"sys/devices/system/cpu/cpu0/cache/index0/level", "3\n"},
        {"sys/devices/system/cpu/cpu0/cache/index0/size", "64K\n"}};
    for (const auto& [relative, content] : files) {
      fs::create_directories((root_ / relative).parent_path());
      std::ofstream(root_ / relative) << content;
    }
  }
  ~fake_machine() { fs::remove_all(root_); }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

profile_options noise_options(double max_noise) {
  profile_options options = quick(0, 10);
  options.device_tracing = false;
  options.stopping.max_noise = max_noise;
  return options;
}

std::vector<const cpu_interval*> intervals_named(const trace& t, std::string_view name) {
  std::vector<const cpu_interval*> out;
  for (const cpu_interval& interval : t.intervals) {
    if (t.strings.view(interval.name) == name) out.push_back(&interval);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(harness_stopping)

// The noise is defined from 6 runs on and is finite, so a huge max_noise is met as soon as min_runs is.
BOOST_AUTO_TEST_CASE(stops_on_noise_once_the_minimum_is_met) {
  int calls = 0;
  profile_options options = noise_options(1e9);
  options.stopping.min_runs = 7;
  const Profile profile = regionprof::profile([&] { ++calls; }, options);
  BOOST_TEST(calls == 1 + 7);  // the internal warm-up and 7 measured runs
  BOOST_TEST(profile.result().runs.size() == 7u);
  BOOST_TEST(profile.context().measured_runs == 7u);
  BOOST_REQUIRE(profile.context().stopping.has_value());
  const stopping_summary& stopping = *profile.context().stopping;
  BOOST_TEST((stopping.reason == stop_reason::noise_reached));
  BOOST_TEST(stopping.runs == 7u);
  BOOST_TEST(stopping.noise.has_value());
  BOOST_TEST(!has_warning(profile.result().warnings, warning_code::noise_target_not_met));
  const boost::json::object report = boost::json::parse(to_json(profile)).as_object();
  BOOST_TEST(report.at("stopping").at("reason").as_string() == "noise_reached");
  BOOST_TEST(report.at("config").at("measured_runs").to_number<int>() == 7);
}

// Every other run sleeps 1 ms: the six runs' range is never 0, so a max_noise of 0 is never met.
BOOST_AUTO_TEST_CASE(max_runs_stops_a_noisy_workload_with_a_warning) {
  int calls = 0;
  profile_options options = noise_options(0.0);
  options.stopping.min_runs = 6;
  options.stopping.max_runs = 6;
  const Profile profile = regionprof::profile(
      [&] {
        if (++calls % 2 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      options);
  BOOST_TEST(profile.result().runs.size() == 6u);
  BOOST_TEST((profile.context().stopping->reason == stop_reason::max_runs));
  BOOST_TEST(*profile.context().stopping->noise > 0.0);
  BOOST_TEST(has_warning(profile.result().warnings, warning_code::noise_target_not_met));
}

// Any run takes more than 1 ns, so the first measured run already passes max_time_s.
BOOST_AUTO_TEST_CASE(max_time_stops_after_the_first_run) {
  profile_options options = noise_options(0.0);
  options.stopping.max_time_s = 1e-9;
  options.stopping.min_runs = 1;
  options.stopping.min_time_s = 0.0;
  const Profile profile = regionprof::profile([] {}, options);
  BOOST_TEST(profile.result().runs.size() == 1u);
  BOOST_TEST((profile.context().stopping->reason == stop_reason::max_time));
  BOOST_TEST(!profile.context().stopping->noise.has_value());  // undefined below 6 runs
  BOOST_TEST(has_warning(profile.result().warnings, warning_code::noise_target_not_met));
}

BOOST_AUTO_TEST_CASE(measured_runs_alone_stays_a_fixed_count) {
  profile_options options = quick(0, 4);
  options.device_tracing = false;
  const Profile profile = regionprof::profile([] {}, options);
  BOOST_TEST(profile.result().runs.size() == 4u);
  BOOST_TEST(!profile.context().stopping.has_value());
  BOOST_TEST(!boost::json::parse(to_json(profile)).as_object().contains("stopping"));
}

BOOST_AUTO_TEST_CASE(stopping_options_without_max_noise_are_refused_before_any_run) {
  int calls = 0;
  profile_options options = quick(1, 4);
  options.stopping.max_runs = 100;
  BOOST_CHECK_EXCEPTION(regionprof::profile([&] { ++calls; }, options), std::invalid_argument,
                        [](const std::invalid_argument& e) {
                          return std::string(e.what()).find("regionprof::profile: min_runs, max_runs") == 0;
                        });
  BOOST_TEST(calls == 0);
}

// Each flush is a `regionprof.cache_flush` range before its run's marker and after the previous run's:
// outside every timed interval, once per run (the internal warm-up's included).
BOOST_AUTO_TEST_CASE(cold_runs_flush_once_per_run_outside_its_time) {
  const fake_machine machine;
  profile_options options = quick(2, 5);
  options.device_tracing = false;
  options.flush_cache = true;
  options.system_root = machine.root();
  const Profile profile = regionprof::profile([] {}, options);
  const trace& t = profile.source();
  const auto flushes = intervals_named(t, "regionprof.cache_flush");
  const auto markers = intervals_named(t, "regionprof.profiled_run");
  BOOST_REQUIRE_EQUAL(markers.size(), 1u + 5u);
  BOOST_REQUIRE_EQUAL(flushes.size(), markers.size());
  for (std::size_t i = 0; i < markers.size(); ++i) {
    BOOST_TEST(flushes[i]->end_ns <= markers[i]->start_ns);
    if (i > 0) BOOST_TEST(flushes[i]->start_ns >= markers[i - 1]->end_ns);
  }
  BOOST_TEST(profile.result().runs.size() == 5u);
  BOOST_TEST(*profile.context().environment->cpu_last_level_cache_bytes == 65536u);
  BOOST_TEST(!has_warning(profile.result().warnings, warning_code::unmapped_region_events));
}

BOOST_AUTO_TEST_CASE(without_flush_cache_nothing_is_flushed) {
  profile_options options = quick(0, 3);
  options.device_tracing = false;
  const Profile profile = regionprof::profile([] {}, options);
  BOOST_TEST(intervals_named(profile.source(), "regionprof.cache_flush").empty());
}

BOOST_AUTO_TEST_CASE(the_report_records_the_machine_and_warns_about_it) {
  const fake_machine machine;
  profile_options options = quick(0, 3);
  options.device_tracing = false;
  options.system_root = machine.root();
  const Profile profile = regionprof::profile([] {}, options);
  const auto& warnings = profile.result().warnings;
  BOOST_TEST(has_warning(warnings, warning_code::machine_loaded));       // 3.5 > 2 CPUs
  BOOST_TEST(has_warning(warnings, warning_code::cpu_scaling_enabled));  // powersave
  const boost::json::object env = boost::json::parse(to_json(profile)).at("environment").as_object();
  BOOST_TEST(env.at("cpu_model").as_string() == "Fake CPU");
  BOOST_TEST(env.at("cpu_count").to_number<int>() == 2);
  BOOST_TEST(env.at("load_average").as_array()[0].as_double() == 3.5);
  BOOST_TEST(env.at("memory_available_bytes").to_number<int>() == 512 * 1024);
  BOOST_TEST(env.at("cpu_governor").as_string() == "powersave");
}

// The fake machine is idle at start here (0.50 on 2 CPUs); from the third call on (the internal warm-up is
// call 0) its /proc/loadavg shows 9 runnable tasks. Each call lasts 110 ms, so the load is sampled after
// every run (at most every 100 ms) and after the last: 1, 1, 9, 9, 9 and 9 runnable: 4 of 6 above 2 CPUs.
BOOST_AUTO_TEST_CASE(a_load_spike_during_the_runs_is_sampled_and_warned) {
  const fake_machine machine;
  std::ofstream(fs::path(machine.root()) / "proc/loadavg") << "0.50 0.50 0.50 1/100 1\n";
  profile_options options = quick(0, 4);
  options.device_tracing = false;
  options.system_root = machine.root();
  int call = 0;
  const Profile profile = regionprof::profile(
      [&] {
        if (call++ == 2) std::ofstream(fs::path(machine.root()) / "proc/loadavg") << "0.50 0.50 0.50 9/100 1\n";
        std::this_thread::sleep_for(std::chrono::milliseconds(110));
      },
      options);
  BOOST_TEST(call == 5);
  const machine_environment& env = *profile.context().environment;
  BOOST_REQUIRE(env.runs_load.has_value());
  BOOST_TEST(env.runs_load->samples == 6u);
  BOOST_TEST(env.runs_load->above_cpu_count == 4u);
  BOOST_TEST(env.runs_load->max_runnable == 9u);
  const auto& warnings = profile.result().warnings;
  const auto loaded = std::find_if(warnings.begin(), warnings.end(),
                                   [](const warning& w) { return w.code == warning_code::machine_loaded; });
  BOOST_REQUIRE(loaded != warnings.end());
  BOOST_TEST(loaded->message.starts_with("4 of 6 load samples taken through the runs found more runnable tasks than "
                                         "the 2 online CPUs (up to 9)"));
  const boost::json::object json_env = boost::json::parse(to_json(profile)).at("environment").as_object();
  BOOST_TEST(boost::json::serialize(json_env.at("runs_load")) == R"({"samples":6,"above_cpu_count":4,"max_runnable":9})");
}

BOOST_AUTO_TEST_CASE(this_machine_is_recorded_too) {
  profile_options options = quick(0, 2);
  options.device_tracing = false;
  const Profile profile = regionprof::profile([] {}, options);
  BOOST_REQUIRE(profile.context().environment.has_value());
  const machine_environment& env = *profile.context().environment;
  BOOST_TEST(env.cpu_count == static_cast<std::size_t>(::sysconf(_SC_NPROCESSORS_ONLN)));
  BOOST_TEST(env.load_average.has_value());
  BOOST_TEST(env.memory_total_bytes.has_value());
}

BOOST_AUTO_TEST_SUITE_END()
