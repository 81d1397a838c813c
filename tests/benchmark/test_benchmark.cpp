// regionprof::benchmark: the rule for K, file names, build/bin/benchmark_suite end to end, and
// register_until_steady on a clock the body advances (run times given, the stop computed by hand).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <unistd.h>

#include "regionprof/benchmark/benchmark.hpp"
#include "regionprof/saved/profile_reader.hpp"
#include "support/child_process.hpp"

namespace json = boost::json;
using regionprof::benchmark::batch_size;
using regionprof::benchmark::profile_path;
using regionprof::benchmark::sanitize_file_name;

namespace {

/// Google Benchmark's results of the benchmarks matching `filter` (run in this process).
struct collecting_reporter final : ::benchmark::BenchmarkReporter {
  std::vector<Run> runs;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& reported) override { runs.insert(runs.end(), reported.begin(), reported.end()); }
};

std::vector<::benchmark::BenchmarkReporter::Run> run_benchmarks(const std::string& filter) {
  collecting_reporter reporter;
  ::benchmark::RunSpecifiedBenchmarks(&reporter, filter);
  return reporter.runs;
}

std::filesystem::path temp_dir(const std::string& what) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("regionprof_benchmark_" + what + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

/// A wall clock that only the body moves: call c (0-based, calibration first) takes durations(c) ns.
struct scripted_clock {
  std::int64_t now = 0;
  std::size_t calls = 0;
};

const regionprof::registered_region steady_region{regionprof::region_kind::aot_module, "steady"};

}  // namespace

BOOST_AUTO_TEST_SUITE(benchmark_helper)

BOOST_AUTO_TEST_CASE(batch_rule) {
  BOOST_TEST(batch_size(std::nullopt, 100'000) == 1u);      // first invocation: one iteration per run
  BOOST_TEST(batch_size(10'000.0, 100'000) == 10u);         // 10 us iterations: ceil(100 / 10)
  BOOST_TEST(batch_size(30'000.0, 100'000) == 4u);          // ceil(3.33)
  BOOST_TEST(batch_size(250'000.0, 100'000) == 1u);         // longer than a run: 1
  BOOST_TEST(batch_size(0.01, 100'000) == 1'000'000u);      // capped
  BOOST_TEST(batch_size(0.0, 100'000) == 1u);               // no usable estimate
}

BOOST_AUTO_TEST_CASE(file_names) {
  BOOST_TEST(sanitize_file_name("BM_Parse/64/threads:1") == "BM_Parse_64_threads_1");
  BOOST_TEST(sanitize_file_name("BM_a.b-c") == "BM_a.b-c");
  BOOST_TEST(sanitize_file_name("") == "benchmark");
  BOOST_TEST(sanitize_file_name("..") == "benchmark");
  BOOST_TEST(sanitize_file_name("a b\xc3\xa9") == "a_b__");
}

BOOST_AUTO_TEST_CASE(profile_paths) {
  BOOST_TEST(profile_path("base", "BM_Parse/64", std::nullopt) == "base/BM_Parse_64.json");
  BOOST_TEST(profile_path("base", "BM_Parse/64", 2) == "base/BM_Parse_64/prof-2.json");  // a diff side
}

BOOST_AUTO_TEST_CASE(process_indices_make_a_side_per_benchmark) {
  // REGIONPROF_BENCHMARK_PROCESS=i for run i of the suite: <dir>/<benchmark>/prof-i.json, one side.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("regionprof_benchmark_sides_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  for (const char* index : {"0", "1"}) {
    const regionprof::test::child_result run = regionprof::test::run_child(
        {BENCHMARK_SUITE, "--benchmark_filter=BM_SortAndDedup", "--benchmark_min_time=0.01"},
        {.env = {"REGIONPROF_BENCHMARK_DIR=" + dir.string(), std::string("REGIONPROF_BENCHMARK_PROCESS=") + index}});
    BOOST_TEST_REQUIRE(run.status == 0, run.err);
  }
  for (const char* name : {"prof-0.json", "prof-1.json"}) {
    const std::filesystem::path profile = dir / "BM_SortAndDedup" / name;
    BOOST_TEST_REQUIRE(std::filesystem::exists(profile), profile);
    BOOST_TEST(regionprof::read_profile(profile.string()).result().regions.size() == 2u);
  }
  BOOST_TEST(!std::filesystem::exists(dir / "BM_SortAndDedup.json"));
  // Not a number: the benchmark is skipped with a line naming the variable.
  const regionprof::test::child_result bad = regionprof::test::run_child(
      {BENCHMARK_SUITE, "--benchmark_filter=BM_SortAndDedup", "--benchmark_min_time=0.01"},
      {.env = {"REGIONPROF_BENCHMARK_DIR=" + dir.string(), "REGIONPROF_BENCHMARK_PROCESS=x"}});
  BOOST_TEST((bad.out + bad.err).find("REGIONPROF_BENCHMARK_PROCESS='x' is not a whole number") != std::string::npos,
             bad.out << bad.err);
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(suite_writes_counters_and_one_profile_per_benchmark) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("regionprof_benchmark_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const regionprof::test::child_options in_dir{.env = {"REGIONPROF_BENCHMARK_DIR=" + dir.string()}};
  const regionprof::test::child_result run = regionprof::test::run_child(
      {BENCHMARK_SUITE, "--benchmark_format=json", "--benchmark_min_time=0.01"}, in_dir);
  BOOST_TEST_REQUIRE(run.status == 0, run.err);

  const json::value report = json::parse(run.out);
  const json::array& benchmarks = report.at("benchmarks").as_array();
  BOOST_TEST_REQUIRE(benchmarks.size() == 4u);  // the three plain loops, then BM_SortUntilSteady
  const std::pair<const char*, std::pair<const char*, const char*>> expected[] = {
      {"BM_ParseAndSum", {"aot_module:parse", "aot_module:sum"}},
      {"BM_SortAndDedup", {"untuned_module:sort", "untuned_module:dedup"}},
      {"BM_HashAndCount", {"aot_module:hash", "untuned_module:count"}}};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& [name, regions] = expected[i];
    BOOST_TEST_CONTEXT(name) {
      const json::object& entry = benchmarks[i].as_object();
      BOOST_TEST(entry.at("name").as_string() == name);
      // The counters are time per iteration in us, at most the iteration's own real time.
      const double iteration_us = entry.at("real_time").to_number<double>() / 1000.0;  // time_unit ns
      BOOST_TEST(entry.at("time_unit").as_string() == "ns");
      for (const char* region : {regions.first, regions.second}) {
        const std::string counter = std::string(region) + "_cpu_us";
        BOOST_TEST_REQUIRE(entry.contains(counter), counter);
        const double value = entry.at(counter).to_number<double>();
        BOOST_TEST(value > 0.0, counter);
        BOOST_TEST(value < iteration_us * 1.5, counter << " " << value << " vs " << iteration_us);
        BOOST_TEST(!entry.contains(std::string(region) + "_device_us"));  // no device data without a GPU
      }
      // One profile per benchmark, named after it, readable as a regionprof profile.
      const std::filesystem::path profile = dir / (std::string(name) + ".json");
      BOOST_TEST_REQUIRE(std::filesystem::exists(profile), profile);
      const regionprof::Profile saved = regionprof::read_profile(profile.string());
      BOOST_TEST(saved.source().target.type == "google_benchmark");
      BOOST_TEST(!saved.result().runs.empty());
      BOOST_TEST(saved.result().regions.size() == 2u);
      // Rule 18: a region that declares work (only aot_module:parse, bytes and items) gets
      // <region>_bytes_per_second = its declared bytes summed over the profile's runs over its CPU time
      // summed over them, the items likewise; no other region and no other quantity gets one.
      std::uint64_t bytes = 0, items = 0;
      std::int64_t cpu_ns = 0;
      for (const regionprof::run_result& profiled : saved.result().runs) {
        for (const regionprof::region_aggregate& a : profiled.regions) {
          if (saved.result().regions[a.region].id != "aot_module:parse") {
            BOOST_TEST(regionprof::work_of(saved.result(), a) == nullptr);
            continue;
          }
          const regionprof::declared_work* work = regionprof::work_of(saved.result(), a);
          BOOST_TEST_REQUIRE(work != nullptr);
          bytes += work->bytes.value_or(0);
          items += work->items.value_or(0);
          cpu_ns += a.cpu_time_ns;
        }
      }
      for (const char* region : {regions.first, regions.second}) {
        const bool declares = std::string(region) == "aot_module:parse";
        for (const char* quantity : {"_bytes_per_second", "_items_per_second"}) {
          BOOST_TEST(entry.contains(std::string(region) + quantity) == declares, region << quantity);
        }
        BOOST_TEST(!entry.contains(std::string(region) + "_flops_per_second"));
      }
      if (std::string(name) == "BM_ParseAndSum") {
        BOOST_TEST_REQUIRE(cpu_ns > 0);
        // Each iteration declares 2,000 items and the text's size in bytes: whole iterations of both.
        BOOST_TEST_REQUIRE(items > 0u);
        BOOST_TEST(items % 2'000u == 0u);
        BOOST_TEST(bytes % (items / 2'000u) == 0u);
        const double seconds = static_cast<double>(cpu_ns) / 1e9;
        BOOST_TEST(entry.at("aot_module:parse_bytes_per_second").to_number<double>() == static_cast<double>(bytes) / seconds,
                   boost::test_tools::tolerance(1e-6));
        BOOST_TEST(entry.at("aot_module:parse_items_per_second").to_number<double>() == static_cast<double>(items) / seconds,
                   boost::test_tools::tolerance(1e-6));
      }
    }
  }
  // BM_SortUntilSteady (register_until_steady): one iteration of manual time, the runs and K as counters,
  // equal to the profile's stopping block and runs.
  {
    const json::object& entry = benchmarks[3].as_object();
    BOOST_TEST(entry.at("name").as_string() == "BM_SortUntilSteady/iterations:1/manual_time");
    BOOST_TEST(entry.at("iterations").to_number<int>() == 1);
    const double runs = entry.at("regionprof_runs").to_number<double>();
    const double per_run = entry.at("regionprof_iterations_per_run").to_number<double>();
    BOOST_TEST(per_run >= 1.0);
    BOOST_TEST(entry.contains("untuned_module:sort_cpu_us"));
    const regionprof::Profile saved = regionprof::read_profile((dir / "BM_SortUntilSteady.json").string());
    BOOST_TEST_REQUIRE(saved.context().stopping.has_value());
    BOOST_TEST(static_cast<double>(saved.context().stopping->runs) == runs);
    BOOST_TEST(static_cast<double>(saved.result().runs.size()) == runs);
    BOOST_TEST(saved.context().stopping->target == 0.02);
    BOOST_TEST(entry.contains("regionprof_noise") == saved.context().stopping->noise.has_value());
  }
  std::size_t files = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir)) files += file.path().extension() == ".json";
  BOOST_TEST(files == 4u);

  // Google Benchmark's console output shows the counters too.
  const regionprof::test::child_result console = regionprof::test::run_child(
      {BENCHMARK_SUITE, "--benchmark_filter=BM_SortAndDedup", "--benchmark_min_time=0.01"}, in_dir);
  BOOST_TEST_REQUIRE(console.status == 0);
  const std::string& text = console.out;
  BOOST_TEST(text.find("untuned_module:sort_cpu_us=") != std::string::npos, text);
  std::filesystem::remove_all(dir);
}

// Cold runs in a Google Benchmark loop run in this process: 6 iterations in batches of 2 are 3 runs, so
// 3 flushes, each before its run opened; the profile records the machine.
BOOST_AUTO_TEST_CASE(flush_cache_flushes_once_per_run) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("regionprof_benchmark_cold_" + std::to_string(::getpid()));
  std::uint64_t flushes = 0;
  std::uint64_t flushes_at_run_start = 0;  // summed over runs: 1 + 2 + 3 when each flush precedes its run
  ::benchmark::RegisterBenchmark("BM_Cold", [&](::benchmark::State& state) {
    regionprof::benchmark::recorder_options options;
    options.batch = 2;
    options.flush_cache = true;
    options.device_tracing = false;
    options.directory = dir.string();
    regionprof::benchmark::recorder recorder(state, "BM_Cold", options);
    std::size_t iteration = 0;
    for (auto _ : state) {
      const auto scope = recorder.iteration();
      if (iteration++ % 2 == 0) flushes_at_run_start += recorder.flushes();
    }
    flushes = recorder.flushes();
  })->Iterations(6);
  struct quiet final : ::benchmark::BenchmarkReporter {
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>&) override {}
  } reporter;
  ::benchmark::RunSpecifiedBenchmarks(&reporter, "^BM_Cold");
  BOOST_TEST(flushes == 3u);
  BOOST_TEST(flushes_at_run_start == 1u + 2u + 3u);
  const regionprof::Profile saved = regionprof::read_profile((dir / "BM_Cold.json").string());
  BOOST_TEST(saved.result().runs.size() == 3u);
  BOOST_TEST(saved.context().environment.has_value());
  std::filesystem::remove_all(dir);
}

// register_until_steady on a scripted clock, min_run_ns 100,000. Calibration: the cold call (not counted);
// pass 1, one slow call (120,000 ns: alone it would make K 1); pass 2, calls of 25,000 ns until they have
// lasted 100,000 ns: 4 calls, 25,000 ns a call, more than 10 % faster than pass 1, so pass 3: 2 calls of
// 50,000 ns (preempted, say), not faster: calibration ends, and K comes from the fastest, pass 2:
// ceil(100,000 / 25,000) = 4 (the last pass's would be 2). The measured runs then take
// {100, 130, 70, 100, 101, 99, 100, 100, 102, 98} us (each call a quarter). max_noise 0.05, min_runs 6:
// runs 6-8 have k = 1 and the whole range 70..130 around a median of 100: 60 / 200 = 0.3; run 9: sorted
// {70, 99, 100, 100, 100, 100, 101, 102, 130}, k = 2: [99, 102], 3 / (2 * 100) = 0.015 <= 0.05: the stop.
// Google Benchmark's time is the median run (100 us) over K: 25,000 ns.
BOOST_AUTO_TEST_CASE(until_steady_stops_at_the_hand_computed_run) {
  const std::filesystem::path dir = temp_dir("steady");
  const std::vector<std::int64_t> runs_us{100, 130, 70, 100, 101, 99, 100, 100, 102, 98};
  auto clock = std::make_shared<scripted_clock>();
  regionprof::benchmark::recorder_options options;
  options.directory = dir.string();
  options.device_tracing = false;
  options.stopping.max_noise = 0.05;
  options.stopping.min_runs = 6;
  options.clock = [clock] { return clock->now; };
  regionprof::benchmark::register_until_steady("BM_SteadyHand", [clock, runs_us] {
    const regionprof::scoped_region region{steady_region};
    const std::size_t c = clock->calls++;
    const std::size_t run = c < 8 ? 0 : (c - 8) / 4;
    clock->now += c == 0 ? 1'000'000 : c == 1 ? 120'000 : c < 6 ? 25'000 : c < 8 ? 50'000 : runs_us.at(run) * 250;
  }, options);
  const auto results = run_benchmarks("^BM_SteadyHand/");
  BOOST_TEST_REQUIRE(results.size() == 1u);
  const auto& result = results.front();
  BOOST_TEST_REQUIRE(!result.error_occurred, result.error_message);
  BOOST_TEST(result.benchmark_name() == "BM_SteadyHand/iterations:1/manual_time");
  BOOST_TEST(result.iterations == 1);
  BOOST_TEST(result.GetAdjustedRealTime() == 25'000.0, boost::test_tools::tolerance(1e-9));  // ns
  BOOST_TEST(clock->calls == 8u + 9u * 4u);  // calibration, then 9 runs of K
  BOOST_TEST(result.counters.at("regionprof_runs").value == 9.0);
  BOOST_TEST(result.counters.at("regionprof_iterations_per_run").value == 4.0);
  BOOST_TEST(result.counters.at("regionprof_noise").value == 0.015, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(result.counters.count("aot_module:steady_cpu_us") == 1u);

  const regionprof::Profile saved = regionprof::read_profile((dir / "BM_SteadyHand.json").string());
  BOOST_TEST_REQUIRE(saved.context().stopping.has_value());
  const regionprof::stopping_summary& stopping = *saved.context().stopping;
  BOOST_TEST(stopping.criterion == "median_ci95");
  BOOST_TEST(stopping.runs == 9u);
  BOOST_TEST_REQUIRE(stopping.noise.has_value());
  BOOST_TEST(*stopping.noise == 0.015, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(stopping.target == 0.05);
  BOOST_TEST((stopping.reason == regionprof::stop_reason::noise_reached));
  // The calibration run is skipped; the measured runs' wall times are the scripted ones.
  BOOST_TEST_REQUIRE(saved.result().runs.size() == 9u);
  for (std::size_t r = 0; r < 9; ++r) BOOST_TEST(saved.result().runs[r].wall_time_ns == runs_us[r] * 1000, r);
  for (const regionprof::warning& w : saved.result().warnings) {
    BOOST_TEST((w.code != regionprof::warning_code::noise_target_not_met), w.message);
  }
  // The file itself, as report-schema.md has it.
  std::ifstream file(dir / "BM_SteadyHand.json");
  const json::value report = json::parse(std::string(std::istreambuf_iterator<char>(file), {}));
  const json::object& block = report.at("stopping").as_object();
  BOOST_TEST(block.at("criterion").as_string() == "median_ci95");
  BOOST_TEST(block.at("runs").to_number<int>() == 9);
  BOOST_TEST(block.at("noise").to_number<double>() == 0.015, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(block.at("target").to_number<double>() == 0.05);
  BOOST_TEST(block.at("reason").as_string() == "noise_reached");
  BOOST_TEST(report.at("config").at("measured_runs").to_number<int>() == 9);
  BOOST_TEST(report.at("target").at("iterations_per_run").to_number<int>() == 4);
  BOOST_TEST(report.at("target").at("iterations").to_number<int>() == 36);
  std::filesystem::remove_all(dir);
}

// At a maximum the profile warns. K = 1 in both (three calibration calls of 100,000 ns: the cold one, then
// one a pass; the second pass is as fast as the first, so calibration ends).
// max_runs 8 over runs alternating 50 and 150 us: noise (150 - 50) / (2 * 100) = 0.5 > 0.01, stop at run 8
// (max_runs). max_time_s 1 ms over runs of 300 us: elapsed 300, 600, 900, 1,200 us after runs 1-4 (counted
// from the first measured run's start), so run 4 stops (max_time) with the noise undefined (4 < 6 runs):
// no regionprof_noise counter, no `noise` in the profile.
BOOST_AUTO_TEST_CASE(until_steady_stops_at_a_maximum_with_a_warning) {
  const std::filesystem::path dir = temp_dir("steady_max");
  const auto register_scripted = [&](const char* name, regionprof::stopping_options stopping,
                                     std::function<std::int64_t(std::size_t)> run_ns) {
    auto clock = std::make_shared<scripted_clock>();
    regionprof::benchmark::recorder_options options;
    options.directory = dir.string();
    options.device_tracing = false;
    options.stopping = stopping;
    options.clock = [clock] { return clock->now; };
    regionprof::benchmark::register_until_steady(name, [clock, run_ns] {
      const std::size_t c = clock->calls++;
      clock->now += c < 3 ? 100'000 : run_ns(c - 3);  // K = 1: call c is measured run c - 3
    }, options);
    return clock;
  };
  regionprof::stopping_options noisy;
  noisy.max_noise = 0.01;
  noisy.min_runs = 6;
  noisy.max_runs = 8;
  const auto noisy_clock = register_scripted("BM_SteadyNoisy", noisy, [](std::size_t r) {
    return std::int64_t{r % 2 == 0 ? 50'000 : 150'000};
  });
  regionprof::stopping_options slow;
  slow.max_noise = 0.01;
  slow.max_time_s = 1e-3;
  const auto slow_clock = register_scripted("BM_SteadySlow", slow, [](std::size_t) { return std::int64_t{300'000}; });

  const auto results = run_benchmarks("^BM_Steady(Noisy|Slow)/");
  BOOST_TEST_REQUIRE(results.size() == 2u);
  const auto& noisy_result = results[0];
  const auto& slow_result = results[1];
  BOOST_TEST(noisy_clock->calls == 3u + 8u);
  BOOST_TEST(noisy_result.counters.at("regionprof_runs").value == 8.0);
  BOOST_TEST(noisy_result.counters.at("regionprof_iterations_per_run").value == 1.0);
  BOOST_TEST(noisy_result.counters.at("regionprof_noise").value == 0.5, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(noisy_result.GetAdjustedRealTime() == 100'000.0, boost::test_tools::tolerance(1e-9));  // median
  BOOST_TEST(slow_clock->calls == 3u + 4u);
  BOOST_TEST(slow_result.counters.at("regionprof_runs").value == 4.0);
  BOOST_TEST(slow_result.counters.count("regionprof_noise") == 0u);
  BOOST_TEST(slow_result.GetAdjustedRealTime() == 300'000.0, boost::test_tools::tolerance(1e-9));

  const auto warned = [](const regionprof::Profile& p) {
    for (const regionprof::warning& w : p.result().warnings) {
      if (w.code == regionprof::warning_code::noise_target_not_met) return true;
    }
    return false;
  };
  const regionprof::Profile noisy_profile = regionprof::read_profile((dir / "BM_SteadyNoisy.json").string());
  BOOST_TEST_REQUIRE(noisy_profile.context().stopping.has_value());
  BOOST_TEST((noisy_profile.context().stopping->reason == regionprof::stop_reason::max_runs));
  BOOST_TEST(noisy_profile.context().stopping->runs == 8u);
  BOOST_TEST(*noisy_profile.context().stopping->noise == 0.5, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(warned(noisy_profile));
  const regionprof::Profile slow_profile = regionprof::read_profile((dir / "BM_SteadySlow.json").string());
  BOOST_TEST_REQUIRE(slow_profile.context().stopping.has_value());
  BOOST_TEST((slow_profile.context().stopping->reason == regionprof::stop_reason::max_time));
  BOOST_TEST(slow_profile.context().stopping->runs == 4u);
  BOOST_TEST(!slow_profile.context().stopping->noise.has_value());
  BOOST_TEST(slow_profile.result().runs.size() == 4u);
  BOOST_TEST(warned(slow_profile));
  std::filesystem::remove_all(dir);
}

// In a plain loop Google Benchmark decides the iterations: stopping options there (max_noise, or only a
// bound) are an error naming register_until_steady, and the loop runs no iteration.
BOOST_AUTO_TEST_CASE(a_plain_recorder_refuses_stopping_on_noise) {
  const std::filesystem::path dir = temp_dir("plain_noise");
  std::size_t iterations = 0;
  const auto register_plain = [&](const char* name, regionprof::stopping_options stopping) {
    ::benchmark::RegisterBenchmark(name, [&, name, stopping](::benchmark::State& state) {
      regionprof::benchmark::recorder_options options;
      options.directory = dir.string();
      options.device_tracing = false;
      options.stopping = stopping;
      regionprof::benchmark::recorder recorder(state, name, options);
      for (auto _ : state) {
        const auto scope = recorder.iteration();
        ++iterations;
      }
    })->Iterations(3);
  };
  regionprof::stopping_options noise;
  noise.max_noise = 0.01;
  register_plain("BM_PlainNoise", noise);
  regionprof::stopping_options bound;
  bound.max_runs = 5;
  register_plain("BM_PlainMaxRuns", bound);
  const auto results = run_benchmarks("^BM_Plain(Noise|MaxRuns)/");
  BOOST_TEST_REQUIRE(results.size() == 2u);
  for (const auto& result : results) {
    BOOST_TEST(result.error_occurred, result.benchmark_name());
    BOOST_TEST(result.error_message.find("register_until_steady") != std::string::npos, result.error_message);
  }
  BOOST_TEST(iterations == 0u);
  BOOST_TEST(!std::filesystem::exists(dir / "BM_PlainNoise.json"));
  BOOST_TEST(!std::filesystem::exists(dir / "BM_PlainMaxRuns.json"));
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(until_steady_refuses_bad_options_at_registration) {
  const auto refused = [](const std::function<void()>& body, const regionprof::benchmark::recorder_options& options,
                          const std::string& part) {
    try {
      regionprof::benchmark::register_until_steady("BM_Refused", body, options);
    } catch (const std::invalid_argument& e) {
      BOOST_TEST(std::string(e.what()).find(part) != std::string::npos, e.what());
      return;
    }
    BOOST_ERROR("not refused: " << part);
  };
  const std::function<void()> body = [] {};
  regionprof::benchmark::recorder_options options;
  refused(body, options, "stopping.max_noise");  // no target: nothing to stop at
  options.stopping.max_noise = 0.01;
  refused({}, options, "body");
  options.stopping.max_runs = 0;
  refused(body, options, "max_runs must be at least 1");  // validate_stopping_options
  options.stopping.max_runs.reset();
  options.analysis.skip_runs = 1;
  refused(body, options, "skip_runs");
}

// An exception from the body skips the benchmark with an error naming it and writes no profile.
BOOST_AUTO_TEST_CASE(until_steady_reports_a_throwing_body) {
  const std::filesystem::path dir = temp_dir("steady_throw");
  regionprof::benchmark::recorder_options options;
  options.directory = dir.string();
  options.device_tracing = false;
  options.stopping.max_noise = 0.01;
  regionprof::benchmark::register_until_steady("BM_SteadyThrows", [] { throw std::runtime_error("no input"); },
                                               options);
  const auto results = run_benchmarks("^BM_SteadyThrows/");
  BOOST_TEST_REQUIRE(results.size() == 1u);
  BOOST_TEST(results.front().error_occurred);
  BOOST_TEST(results.front().error_message.find("BM_SteadyThrows: the body threw: no input") != std::string::npos,
             results.front().error_message);
  BOOST_TEST(!std::filesystem::exists(dir / "BM_SteadyThrows.json"));
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
