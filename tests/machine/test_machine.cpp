// The machine's state (regionprof/machine/machine.hpp) from fake /proc and /sys trees and a fake GPU monitor,
// with hand-computed expectations, and the CPU cache flusher's size.
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "regionprof/machine/machine.hpp"

using namespace regionprof;
namespace fs = std::filesystem;

namespace {

/// A fresh folder under the temporary directory holding `files` (path relative to the root -> content).
class fake_root {
 public:
  explicit fake_root(const std::map<std::string, std::string>& files) {
    static int counter = 0;
    path_ = fs::temp_directory_path() / ("regionprof-machine-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    fs::remove_all(path_);
    for (const auto& [relative, content] : files) {
      const fs::path file = path_ / relative;
      fs::create_directories(file.parent_path());
      std::ofstream(file) << content;
    }
    fs::create_directories(path_);
  }
  ~fake_root() { fs::remove_all(path_); }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

const std::string cache = "sys/devices/system/cpu/cpu0/cache/";

std::map<std::string, std::string> loaded_machine() {
  return {{"proc/cpuinfo", "processor\t: 0\nvendor_id\t: Fake\nmodel name\t: Fake CPU @ 3.00GHz\n\nprocessor\t: 1\n"
                           "model name\t: Fake CPU @ 3.00GHz\n"},
          {"sys/devices/system/cpu/online", "0-3,6\n"},
          {"proc/loadavg", "6.50 4.00 2.25 3/456 789\n"},
          {"proc/meminfo", "MemTotal:       16384 kB\nMemFree:         1024 kB\nMemAvailable:    8192 kB\n"},
          {"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave\n"},
          {cache + "index0/level", "1\n"}, {cache + "index0/size", "32K\n"},
          {cache + "index1/level", "1\n"}, {cache + "index1/size", "32K\n"},
          {cache + "index2/level", "2\n"}, {cache + "index2/size", "1024K\n"},
          {cache + "index3/level", "3\n"}, {cache + "index3/size", "32M\n"}};
}

class fake_gpus final : public gpu_monitor {
 public:
  std::vector<gpu_clock_state> answers;  // consumed in order by clocks()
  std::optional<gpu_memory_interface> memory;  // memory_interface()'s answer, for every GPU
  std::vector<gpu_environment> devices() override { return {{0, "Fake GPU", std::nullopt, std::nullopt}}; }
  std::optional<gpu_memory_interface> memory_interface(std::uint32_t) override { return memory; }
  std::optional<gpu_clock_state> clocks(std::uint32_t) override {
    if (next_ >= answers.size()) return std::nullopt;
    return answers[next_++];
  }

 private:
  std::size_t next_ = 0;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(machine)

BOOST_AUTO_TEST_CASE(reads_proc_and_sys_under_a_root) {
  const fake_root root(loaded_machine());
  const machine_environment env = read_machine_environment(root.path());
  BOOST_TEST(env.cpu_model == "Fake CPU @ 3.00GHz");
  BOOST_TEST(env.cpu_count == 5u);  // 0-3 and 6
  BOOST_REQUIRE(env.load_average.has_value());
  BOOST_TEST((*env.load_average)[0] == 6.5);
  BOOST_TEST((*env.load_average)[1] == 4.0);
  BOOST_TEST((*env.load_average)[2] == 2.25);
  BOOST_TEST(*env.memory_total_bytes == 16384u * 1024u);
  BOOST_TEST(*env.memory_available_bytes == 8192u * 1024u);
  BOOST_TEST(env.cpu_governor == "powersave");
  BOOST_TEST(*env.cpu_last_level_cache_bytes == 32u << 20);  // level 3 is the highest
  BOOST_TEST(env.gpus.empty());
}

BOOST_AUTO_TEST_CASE(a_loaded_machine_on_powersave_warns_twice) {
  const fake_root root(loaded_machine());
  const std::vector<warning> warnings = machine_warnings(read_machine_environment(root.path()));
  BOOST_REQUIRE(warnings.size() == 2u);
  BOOST_TEST((warnings[0].code == warning_code::machine_loaded));
  BOOST_TEST(warnings[0].message.find("load average was 6.50 on 5 online CPUs") != std::string::npos);
  BOOST_TEST((warnings[1].code == warning_code::cpu_scaling_enabled));
  BOOST_TEST(warnings[1].message.find("'powersave'") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_idle_machine_on_performance_does_not_warn) {
  auto files = loaded_machine();
  files["proc/loadavg"] = "5.00 1.00 1.00 1/1 1\n";  // equal to the CPU count: not above it
  files["sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"] = "performance\n";
  const fake_root root(files);
  BOOST_TEST(machine_warnings(read_machine_environment(root.path())).empty());
}

// The loaded machine has 5 online CPUs. Each sample is /proc/loadavg's runnable tasks as the file
// holds them when sample() runs.
BOOST_AUTO_TEST_CASE(a_load_spike_through_the_runs_is_machine_loaded) {
  auto files = loaded_machine();
  files["proc/loadavg"] = "0.50 0.50 0.50 1/456 789\n";  // idle at start: no warning from the start
  files["sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"] = "performance\n";
  const fake_root root(files);
  const auto runnable = [&](int tasks) {
    std::ofstream(fs::path(root.path()) / "proc/loadavg") << "0.50 0.50 0.50 " << tasks << "/456 789\n";
  };
  machine_probe probe(root.path(), std::make_unique<fake_gpus>());
  probe.begin();
  BOOST_TEST(!probe.environment().runs_load.has_value());
  BOOST_TEST(probe.warnings().empty());
  // 1, 5, 9, 12 runnable, then 2 at the end: 9 and 12 are above 5 CPUs (5 is not): 2 of 5, max 12.
  for (int tasks : {1, 5, 9, 12}) {
    runnable(tasks);
    probe.sample();
  }
  runnable(2);
  probe.end();
  BOOST_REQUIRE(probe.environment().runs_load.has_value());
  const load_samples& load = *probe.environment().runs_load;
  BOOST_TEST(load.samples == 5u);
  BOOST_TEST(load.above_cpu_count == 2u);
  BOOST_TEST(load.max_runnable == 12u);
  const std::vector<warning> warnings = probe.warnings();
  BOOST_REQUIRE_EQUAL(warnings.size(), 1u);
  BOOST_TEST((warnings[0].code == warning_code::machine_loaded));
  BOOST_TEST(warnings[0].message ==
             "2 of 5 load samples taken through the runs found more runnable tasks than the 5 online CPUs (up to 12): "
             "other work competed for the CPUs; profile on an idle machine and compare profiles taken under the same "
             "load");
  // begin() starts over: the samples are the next window's.
  probe.begin();
  BOOST_TEST(!probe.environment().runs_load.has_value());
}

BOOST_AUTO_TEST_CASE(one_loaded_sample_or_fewer_than_a_quarter_is_no_spike) {
  machine_environment env;
  env.cpu_count = 2;
  env.runs_load = load_samples{1, 1, 9};  // one reading: too few to call a spike
  BOOST_TEST(machine_warnings(env).empty());
  env.runs_load = load_samples{9, 2, 9};  // 2 of 9: below a quarter
  BOOST_TEST(machine_warnings(env).empty());
  env.runs_load = load_samples{8, 2, 3};  // 2 of 8: a quarter
  BOOST_TEST(machine_warnings(env).size() == 1u);
  env.cpu_count = 0;  // CPUs unknown: nothing to compare with
  BOOST_TEST(machine_warnings(env).empty());
  // Loaded at start and through the runs: one warning saying both.
  env.cpu_count = 2;
  env.load_average = std::array<double, 3>{3.25, 1.0, 1.0};
  const std::vector<warning> both = machine_warnings(env);
  BOOST_REQUIRE_EQUAL(both.size(), 1u);
  BOOST_TEST(both[0].message.starts_with("the 1-minute load average was 3.25 on 2 online CPUs when profiling started, "
                                         "and 2 of 8 load samples taken through the runs found more runnable tasks "
                                         "than the 2 online CPUs (up to 3): "));
}

BOOST_AUTO_TEST_CASE(a_sample_of_an_unreadable_loadavg_is_skipped) {
  const fake_root root({{"sys/devices/system/cpu/online", "0-1\n"}, {"proc/loadavg", "0.1 0.1 0.1 garbled\n"}});
  machine_probe probe(root.path(), std::make_unique<fake_gpus>());
  probe.begin();
  probe.sample();
  probe.end();
  BOOST_TEST(!probe.environment().runs_load.has_value());
}

BOOST_AUTO_TEST_CASE(what_is_missing_stays_unset) {
  const fake_root root({});
  const machine_environment env = read_machine_environment(root.path());
  BOOST_TEST(env.cpu_model.empty());
  BOOST_TEST(env.cpu_count == 0u);
  BOOST_TEST(!env.load_average.has_value());
  BOOST_TEST(!env.memory_total_bytes.has_value());
  BOOST_TEST(env.cpu_governor.empty());
  BOOST_TEST(!env.cpu_last_level_cache_bytes.has_value());
  BOOST_TEST(machine_warnings(env).empty());
  const fake_root garbled({{"proc/loadavg", "high\n"}, {"sys/devices/system/cpu/online", "3-1\n"},
                           {"proc/meminfo", "MemTotal: lots kB\n"}});
  const machine_environment bad = read_machine_environment(garbled.path());
  BOOST_TEST(!bad.load_average.has_value());
  BOOST_TEST(bad.cpu_count == 0u);
  BOOST_TEST(!bad.memory_total_bytes.has_value());
}

BOOST_AUTO_TEST_CASE(the_last_level_cache_is_the_largest_of_the_highest_level) {
  const fake_root two_l3({{cache + "index0/level", "1\n"}, {cache + "index0/size", "48K\n"},
                          {cache + "index1/level", "3\n"}, {cache + "index1/size", "16M\n"},
                          {cache + "index2/level", "3\n"}, {cache + "index2/size", "32768K\n"}});
  BOOST_TEST(*read_last_level_cache_bytes(two_l3.path()) == 32u << 20);
  const fake_root l2_only({{cache + "index0/level", "2\n"}, {cache + "index0/size", "65536\n"}});
  BOOST_TEST(*read_last_level_cache_bytes(l2_only.path()) == 65536u);
}

BOOST_AUTO_TEST_CASE(the_flusher_writes_a_buffer_of_the_cache_size) {
  const fake_root small({{cache + "index0/level", "3\n"}, {cache + "index0/size", "64K\n"}});
  cpu_cache_flusher flusher(small.path());
  BOOST_TEST(flusher.bytes() == 65536u);
  BOOST_TEST(flusher.flushes() == 0u);
  flusher.flush();
  flusher.flush();
  BOOST_TEST(flusher.flushes() == 2u);
  const fake_root none({});
  BOOST_TEST(cpu_cache_flusher(none.path()).bytes() == fallback_cache_flush_bytes);
}

BOOST_AUTO_TEST_CASE(throttle_reason_bits_have_names) {
  BOOST_TEST((gpu_throttle_reason_names(0x5) == std::vector<std::string>{"gpu_idle", "sw_power_cap"}));
  BOOST_TEST((gpu_throttle_reason_names(0x140) == std::vector<std::string>{"hw_thermal_slowdown", "display_clock_setting"}));
  BOOST_TEST((gpu_throttle_reason_names(0x1000) == std::vector<std::string>{"bit_12"}));
  BOOST_TEST(gpu_throttle_reason_names(0).empty());
}

BOOST_AUTO_TEST_CASE(the_probe_reads_gpu_clocks_before_and_after) {
  auto files = loaded_machine();
  files["proc/loadavg"] = "0.50 0.50 0.50 1/1 1\n";
  files["sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"] = "performance\n";
  const fake_root root(files);
  auto gpus = std::make_unique<fake_gpus>();
  gpus->answers = {{1980, 3201, {"gpu_idle"}}, {1755, 3201, {"gpu_idle", "hw_thermal_slowdown"}}};
  machine_probe probe(root.path(), std::move(gpus));
  probe.begin();
  BOOST_REQUIRE(probe.environment().gpus.size() == 1u);
  BOOST_TEST(probe.environment().gpus[0].before->sm_clock_mhz == 1980u);
  BOOST_TEST(!probe.environment().gpus[0].after.has_value());
  BOOST_TEST(probe.warnings().empty());  // idle is not throttling
  probe.end();
  BOOST_TEST(probe.environment().gpus[0].after->sm_clock_mhz == 1755u);
  const std::vector<warning> warnings = probe.warnings();
  BOOST_REQUIRE(warnings.size() == 1u);
  BOOST_TEST((warnings[0].code == warning_code::gpu_throttled));
  BOOST_TEST((warnings[0].source == warning_source::cupti));
  BOOST_TEST(warnings[0].message.find("GPU 0 (Fake GPU) was throttled around the measured runs: hw_thermal_slowdown") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_peak_memory_bandwidth_is_two_transfers_per_clock_over_the_bus) {
  // An H200's NVML figures: 2619 MHz maximum memory clock, 5120-bit bus: 2 x 2619e6 x 5120 / 8 B/s.
  BOOST_TEST(*peak_memory_bandwidth({2619, 5120}) == 3352320000000u);  // 2 x 2619e6 x 640
  BOOST_TEST(*peak_memory_bandwidth({1, 8}) == 2000000u);
  BOOST_TEST(!peak_memory_bandwidth({0, 5120}).has_value());
  BOOST_TEST(!peak_memory_bandwidth({2619, 0}).has_value());
  BOOST_TEST(!peak_memory_bandwidth({4000000000u, 4000000000u}).has_value());  // 3.2e25: above 2^64

  const fake_root root({});
  auto gpus = std::make_unique<fake_gpus>();
  gpus->memory = gpu_memory_interface{2619, 5120};
  machine_probe probe(root.path(), std::move(gpus));
  probe.begin();
  BOOST_REQUIRE(probe.environment().gpus.size() == 1u);
  BOOST_TEST(*probe.environment().gpus[0].peak_memory_bandwidth_bytes_per_second == 3352320000000u);
  BOOST_TEST(*shared_peak_memory_bandwidth(probe.environment()) == 3.35232e12);

  machine_probe unknown(root.path(), std::make_unique<fake_gpus>());  // NVML cannot say
  unknown.begin();
  BOOST_TEST(!unknown.environment().gpus[0].peak_memory_bandwidth_bytes_per_second.has_value());
  BOOST_TEST(!shared_peak_memory_bandwidth(unknown.environment()).has_value());
}

BOOST_AUTO_TEST_CASE(a_peak_is_shared_only_when_every_gpu_has_the_same_one) {
  machine_environment env;
  BOOST_TEST(!shared_peak_memory_bandwidth(env).has_value());  // no GPU
  env.gpus.push_back({0, "A", std::nullopt, std::nullopt, 3352320000000u});
  env.gpus.push_back({1, "A", std::nullopt, std::nullopt, 3352320000000u});
  BOOST_TEST(*shared_peak_memory_bandwidth(env) == 3.35232e12);
  env.gpus.push_back({2, "B", std::nullopt, std::nullopt, 2039000000000u});
  BOOST_TEST(!shared_peak_memory_bandwidth(env).has_value());  // two different peaks
  env.gpus.back().peak_memory_bandwidth_bytes_per_second.reset();
  BOOST_TEST(!shared_peak_memory_bandwidth(env).has_value());  // one GPU without a peak
}

BOOST_AUTO_TEST_SUITE_END()
