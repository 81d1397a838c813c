// The cost of regionprof::benchmark's recorder on a 10 us iteration: the same busy loop plain, with the
// recorder (automatic batch) and with one run per iteration (K = 1, the worst case). Run them interleaved
// (--benchmark_enable_random_interleaving) and compare; docs/benchmarks.md has the command and figures.
#include <chrono>
#include <cstdint>
#include <filesystem>

#include <benchmark/benchmark.h>

#include "regionprof/benchmark/benchmark.hpp"

namespace {

/// About 10 us of dependent integer work: the step count is calibrated once against steady_clock.
std::uint64_t busy(std::uint64_t steps, std::uint64_t x) {
  for (std::uint64_t i = 0; i < steps; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return x;
}

std::uint64_t steps_for_10us() {
  static const std::uint64_t steps = [] {
    constexpr std::uint64_t probe = 1'000'000;
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(busy(probe, 1));
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    return static_cast<std::uint64_t>(static_cast<double>(probe) * 10'000.0 / ns);
  }();
  return steps;
}

regionprof::benchmark::recorder_options helper_options(std::optional<std::size_t> batch) {
  regionprof::benchmark::recorder_options options;
  options.batch = batch;
  if (std::getenv("REGIONPROF_BENCHMARK_DIR") == nullptr) {
    options.directory = (std::filesystem::temp_directory_path() / "regionprof-bench-helper").string();
  }
  return options;
}

void BM_BusyLoop10us_Plain(benchmark::State& state) {
  const std::uint64_t steps = steps_for_10us();
  std::uint64_t x = 1;
  for (auto _ : state) {
    x = busy(steps, x);
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_BusyLoop10us_Plain);

void BM_BusyLoop10us_Helper(benchmark::State& state) {
  const std::uint64_t steps = steps_for_10us();
  regionprof::benchmark::recorder recorder(state, "BM_BusyLoop10us_Helper", helper_options(std::nullopt));
  std::uint64_t x = 1;
  for (auto _ : state) {
    const auto iteration = recorder.iteration();
    x = busy(steps, x);
    benchmark::DoNotOptimize(x);
  }
  state.counters["iterations_per_run"] = static_cast<double>(recorder.batch());
}
BENCHMARK(BM_BusyLoop10us_Helper);

void BM_BusyLoop10us_HelperK1(benchmark::State& state) {
  const std::uint64_t steps = steps_for_10us();
  regionprof::benchmark::recorder recorder(state, "BM_BusyLoop10us_HelperK1", helper_options(1));
  std::uint64_t x = 1;
  for (auto _ : state) {
    const auto iteration = recorder.iteration();
    x = busy(steps, x);
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_BusyLoop10us_HelperK1);

}  // namespace
