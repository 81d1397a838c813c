// LibTorch adapter budgets (DESIGN.md): a model with every module a region is <= 2 % slower than
// uninstrumented and has less overhead than LibTorch's own profiler; a region costs <= 250 ns per call.
//
// All on one intra-op thread, the same input, TorchScript with graph optimisation on (the default),
// under c10::InferenceMode, each after warm-up forwards (the profiling executor optimises after its
// first runs). Times are ns per forward. BM_TorchMLP_Interleaved and BM_TorchMLP_RegionCost alternate
// the plain and instrumented model in blocks inside one loop and compare their best blocks in thread
// CPU time, which other processes' load cannot bias the way it biases separate runs.
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <algorithm>
#include <ctime>
#include <limits>
#include <set>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "regionprof/capture.hpp"
#include "regionprof/torch.hpp"
#include "torch_mlp_models.hpp"

namespace {

constexpr int warmup_forwards = 20;

struct models {
  torch::jit::Module mlp;
  std::vector<torch::jit::IValue> mlp_input;
  torch::jit::Module tiny;
  std::vector<torch::jit::IValue> tiny_input;
};

models& shared_models() {
  static models m = [] {
    at::set_num_threads(1);
    if (!torch::jit::getGraphExecutorOptimize()) throw std::logic_error("graph optimisation is off");
    torch::manual_seed(0);
    models built;
    built.mlp = regionprof_bench::scripted_mlp();
    built.mlp_input = {torch::randint(0, 1000, {32}, torch::kLong)};
    built.tiny = regionprof_bench::scripted_tiny();
    built.tiny_input = {torch::randn({1, 8})};
    return built;
  }();
  return m;
}

void warm_up(torch::jit::Module& module, const std::vector<torch::jit::IValue>& input) {
  for (int i = 0; i < warmup_forwards; ++i) benchmark::DoNotOptimize(module.forward(input));
}

/// This thread's CPU time (ns): what other processes' load cannot inflate, unlike the wall clock.
std::int64_t thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

/// Plain and instrumented forwards alternate in blocks of `block` calls, one block of each per
/// iteration; each variant's cost is its best block (thread CPU time per call): the minimum is the
/// estimate of the intrinsic cost that interference from other processes can only inflate.
void run_interleaved(benchmark::State& state, torch::jit::Module& plain, torch::jit::Module& instrumented,
                     const std::vector<torch::jit::IValue>& input, int block, double regions_per_forward) {
  warm_up(plain, input);
  warm_up(instrumented, input);
  regionprof::capture_session capture;
  double best_plain = std::numeric_limits<double>::infinity();
  double best_regions = std::numeric_limits<double>::infinity();
  for (auto _ : state) {
    std::int64_t start = thread_cpu_ns();
    for (int i = 0; i < block; ++i) benchmark::DoNotOptimize(plain.forward(input));
    const std::int64_t plain_ns = thread_cpu_ns() - start;
    start = thread_cpu_ns();
    for (int i = 0; i < block; ++i) benchmark::DoNotOptimize(instrumented.forward(input));
    const std::int64_t regions_ns = thread_cpu_ns() - start;
    best_plain = std::min(best_plain, static_cast<double>(plain_ns) / block);
    best_regions = std::min(best_regions, static_cast<double>(regions_ns) / block);
  }
  const regionprof::capture_result recorded = capture.stop();
  state.counters["plain_ns"] = best_plain;
  state.counters["regions_ns"] = best_regions;
  state.counters["regions_over_plain"] = best_regions / best_plain;
  state.counters["ns_per_region"] = (best_regions - best_plain) / regions_per_forward;
  state.counters["ranges_recorded_per_forward"] =
      static_cast<double>(recorded.data.intervals.size()) / static_cast<double>(state.iterations() * block);
}

void BM_TorchMLP_Plain(benchmark::State& state) {
  models& m = shared_models();
  const c10::InferenceMode inference;
  warm_up(m.mlp, m.mlp_input);
  for (auto _ : state) benchmark::DoNotOptimize(m.mlp.forward(m.mlp_input));
}
BENCHMARK(BM_TorchMLP_Plain)->Unit(benchmark::kNanosecond);

// Every module a region (every_level: 18 per forward), the NVTX capture recording.
void BM_TorchMLP_Regions(benchmark::State& state) {
  models& m = shared_models();
  const c10::InferenceMode inference;
  auto handle = regionprof::torch::instrument(m.mlp, {.tuned = {}, .every_level = true});
  warm_up(handle.module(), m.mlp_input);
  regionprof::capture_session capture;
  for (auto _ : state) benchmark::DoNotOptimize(handle.module().forward(m.mlp_input));
  const regionprof::capture_result recorded = capture.stop();
  state.counters["regions_per_forward"] = static_cast<double>(handle.regions().size());
  state.counters["ranges_recorded_per_forward"] =
      static_cast<double>(recorded.data.intervals.size()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_TorchMLP_Regions)->Unit(benchmark::kNanosecond);

// LibTorch's own profiler (Kineto, CPU activity: what torch.profiler records on a CPU) on the same model.
void BM_TorchMLP_LibTorchProfiler(benchmark::State& state) {
  namespace profiler = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  using torch::profiler::impl::ProfilerConfig;
  using torch::profiler::impl::ProfilerState;
  models& m = shared_models();
  const c10::InferenceMode inference;
  warm_up(m.mlp, m.mlp_input);
  const ProfilerConfig config(ProfilerState::KINETO);
  const std::set<ActivityType> activities{ActivityType::CPU};
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
  for (auto _ : state) benchmark::DoNotOptimize(m.mlp.forward(m.mlp_input));
  const auto result = profiler::disableProfiler();
  state.counters["events_per_forward"] =
      static_cast<double>(result->events().size()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_TorchMLP_LibTorchProfiler)->Unit(benchmark::kNanosecond);

// The budget ratio within one run: 18 regions per forward, capture on; see run_interleaved.
void BM_TorchMLP_Interleaved(benchmark::State& state) {
  models& m = shared_models();
  const c10::InferenceMode inference;
  auto handle = regionprof::torch::instrument(m.mlp, {.tuned = {}, .every_level = true});
  run_interleaved(state, m.mlp, handle.module(), m.mlp_input, 4, static_cast<double>(handle.regions().size()));
}
BENCHMARK(BM_TorchMLP_Interleaved)->Unit(benchmark::kMicrosecond);

// The cost of one region: three Linear(8, 8) layers (each a region) against the same model plain;
// `ns_per_region` = (instrumented - plain) / 3, capture on.
void BM_TorchMLP_RegionCost(benchmark::State& state) {
  models& m = shared_models();
  const c10::InferenceMode inference;
  auto handle = regionprof::torch::instrument(m.tiny);
  run_interleaved(state, m.tiny, handle.module(), m.tiny_input, 100, static_cast<double>(handle.regions().size()));
}
BENCHMARK(BM_TorchMLP_RegionCost)->Unit(benchmark::kMicrosecond);

}  // namespace
