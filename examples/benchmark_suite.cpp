// benchmark_suite: Google Benchmark suites profiled with regionprof::benchmark. Each timed iteration (or
// batch) is a regionprof run; each benchmark writes $REGIONPROF_BENCHMARK_DIR/<name>.json (default
// ./regionprof-benchmarks) and reports per-region counters <region_id>_cpu_us (time per iteration).
//
// Usage: benchmark_suite [Google Benchmark flags], e.g.
//   build/bin/benchmark_suite --benchmark_format=json --benchmark_min_time=0.01
//
// Benchmarks (two regions each):
//   BM_ParseAndSum   aot_module:parse (text -> numbers), aot_module:sum
//   BM_SortAndDedup  untuned_module:sort, untuned_module:dedup
//   BM_HashAndCount  aot_module:hash, untuned_module:count
//   BM_SortUntilSteady (register_until_steady: stops on noise, docs/design.md rule 16)
//                    untuned_module:sort, untuned_module:dedup; counters regionprof_runs,
//                    regionprof_iterations_per_run, regionprof_noise
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>

#include "regionprof/benchmark/benchmark.hpp"
#include "regionprof/regions/regions.hpp"

namespace {

using regionprof::region_kind;
using regionprof::registered_region;
using regionprof::scoped_region;

const registered_region parse_region{region_kind::aot_module, "parse"};
const registered_region sum_region{region_kind::aot_module, "sum"};
const registered_region sort_region{region_kind::untuned_module, "sort"};
const registered_region dedup_region{region_kind::untuned_module, "dedup"};
const registered_region hash_region{region_kind::aot_module, "hash"};
const registered_region count_region{region_kind::untuned_module, "count"};

std::vector<std::uint64_t> random_values(std::size_t count, std::uint64_t seed) {
  std::vector<std::uint64_t> values(count);
  std::uint64_t x = seed;
  for (auto& v : values) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v = (x >> 33) % 10'000;
  }
  return values;
}

std::string as_text(const std::vector<std::uint64_t>& values) {
  std::string text;
  for (std::uint64_t v : values) text += std::to_string(v) + ';';
  return text;
}

void BM_ParseAndSum(benchmark::State& state) {
  const std::string text = as_text(random_values(2'000, 1));
  regionprof::benchmark::recorder recorder(state, "BM_ParseAndSum");
  for (auto _ : state) {
    const auto iteration = recorder.iteration();
    std::vector<std::uint64_t> values;
    {
      // Declared work (docs/design.md, rule 18): counters aot_module:parse_bytes_per_second, _items_per_second.
      const scoped_region region{parse_region, {.bytes = text.size(), .items = 2'000}};
      std::string_view rest = text;
      while (!rest.empty()) {
        const std::size_t end = rest.find(';');
        std::uint64_t v = 0;
        std::from_chars(rest.data(), rest.data() + end, v);
        values.push_back(v);
        rest.remove_prefix(end + 1);
      }
    }
    const scoped_region region{sum_region};
    std::uint64_t sum = 0;
    for (std::uint64_t v : values) sum += v * v;
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_ParseAndSum);

/// BM_SortAndDedup's and BM_SortUntilSteady's one iteration: sort a copy of `input`, then drop repeats.
void sort_and_dedup(const std::vector<std::uint64_t>& input) {
  std::vector<std::uint64_t> values = input;
  {
    const scoped_region region{sort_region};
    std::sort(values.begin(), values.end());
  }
  const scoped_region region{dedup_region};
  values.erase(std::unique(values.begin(), values.end()), values.end());
  benchmark::DoNotOptimize(values.data());
}

void BM_SortAndDedup(benchmark::State& state) {
  const std::vector<std::uint64_t> input = random_values(4'000, 2);
  regionprof::benchmark::recorder recorder(state, "BM_SortAndDedup");
  for (auto _ : state) {
    const auto iteration = recorder.iteration();
    sort_and_dedup(input);
  }
}
BENCHMARK(BM_SortAndDedup);

void BM_HashAndCount(benchmark::State& state) {
  const std::vector<std::uint64_t> input = random_values(3'000, 3);
  regionprof::benchmark::recorder recorder(state, "BM_HashAndCount");
  for (auto _ : state) {
    const auto iteration = recorder.iteration();
    std::vector<std::uint64_t> hashes(input.size());
    {
      const scoped_region region{hash_region};
      for (std::size_t i = 0; i < input.size(); ++i) hashes[i] = (input[i] * 0x9E3779B97F4A7C15ull) >> 52;
    }
    const scoped_region region{count_region};
    std::unordered_map<std::uint64_t, std::uint32_t> counts;
    for (std::uint64_t h : hashes) ++counts[h];
    benchmark::DoNotOptimize(counts.size());
  }
}
BENCHMARK(BM_HashAndCount);

// The same work as BM_SortAndDedup, measured until the noise of its runs (K calls each) is at most 2 %,
// for at most 1 s: one Google Benchmark iteration whose time is the median run's over K.
[[maybe_unused]] const auto* const sort_until_steady = [] {
  regionprof::benchmark::recorder_options options;
  options.stopping.max_noise = 0.02;
  options.stopping.max_time_s = 1.0;
  return regionprof::benchmark::register_until_steady(
      "BM_SortUntilSteady", [input = random_values(4'000, 2)] { sort_and_dedup(input); }, options);
}();

}  // namespace

BENCHMARK_MAIN();
