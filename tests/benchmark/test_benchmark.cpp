// regionprof::benchmark: the rule for K, file names, and build/bin/benchmark_suite end to end.
#include <cstdint>
#include <filesystem>
#include <string>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>
#include <unistd.h>

#include "regionprof/benchmark.hpp"
#include "regionprof/profile_reader.hpp"
#include "support/child_process.hpp"

namespace json = boost::json;
using regionprof::benchmark::batch_size;
using regionprof::benchmark::profile_path;
using regionprof::benchmark::sanitize_file_name;

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
  BOOST_TEST_REQUIRE(benchmarks.size() == 3u);
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
      BOOST_TEST(saved.source().target_type == "google_benchmark");
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
  std::size_t files = 0;
  for (const auto& file : std::filesystem::directory_iterator(dir)) files += file.path().extension() == ".json";
  BOOST_TEST(files == 3u);

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
  ::benchmark::RunSpecifiedBenchmarks(&reporter);
  BOOST_TEST(flushes == 3u);
  BOOST_TEST(flushes_at_run_start == 1u + 2u + 3u);
  const regionprof::Profile saved = regionprof::read_profile((dir / "BM_Cold.json").string());
  BOOST_TEST(saved.result().runs.size() == 3u);
  BOOST_TEST(saved.context().environment.has_value());
  std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_SUITE_END()
