// LibTorch adapter budgets (docs/design.md, Budgets): a model with every module a region is <= 2 % slower than
// uninstrumented and has less overhead than LibTorch's own profiler; a region costs <= 250 ns per call.
//
// All on one intra-op thread, the same input, TorchScript with graph optimisation on (the default),
// under c10::InferenceMode, each after warm-up forwards (the profiling executor optimises after its
// first runs). Times are ns per forward. BM_TorchMLP_Interleaved and BM_TorchMLP_RegionCost alternate
// the plain and instrumented model in blocks inside one loop and compare each adjacent pair of blocks in
// thread CPU time (see run_interleaved), which the load and drift of a shared machine cannot bias the way
// they bias separate runs.
#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <caffe2/serialize/inline_container.h>
#include <benchmark/benchmark.h>
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>
#include <torch/script.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <string>
#include <string_view>
#include <limits>
#include <set>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "regionprof/capture/capture.hpp"
#include "regionprof/torch/torch.hpp"
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

/// The median of `values` (reordered); NaN when there are none.
double median(std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

/// Plain and instrumented forwards alternate in blocks of `block` calls, one block of each per
/// iteration, in ABBA order (which variant runs first swaps every iteration). Each pair is timed in
/// thread CPU time and compared within itself: its two blocks ran under the same machine state, so the
/// pair cancels the slow drifts of a shared machine that separate runs cannot. The first block of a
/// pair runs on the other variant's caches, so the medians are taken per order and combined (geometric
/// mean of the ratios, mean of the differences), which cancels that order effect.
/// Reported: `regions_over_plain`, `ns_per_region` (difference per forward / regions per forward) and
/// the medians `plain_ns`, `regions_ns`; and, as `*_best`, the same from each variant's fastest block
/// (the machine at its best: the minimum is what interference can only inflate). ns figures follow the
/// machine's speed at the time, so read them beside `plain_ns` and `plain_ns_best`.
void run_interleaved(benchmark::State& state, torch::jit::Module& plain, torch::jit::Module& instrumented,
                     const std::vector<torch::jit::IValue>& input, int block, double regions_per_forward) {
  warm_up(plain, input);
  warm_up(instrumented, input);
  auto time_block = [&](torch::jit::Module& module) {
    const std::int64_t start = thread_cpu_ns();
    for (int i = 0; i < block; ++i) benchmark::DoNotOptimize(module.forward(input));
    return static_cast<double>(thread_cpu_ns() - start) / block;
  };
  regionprof::capture_session capture;
  std::vector<double> plain_ns;
  std::vector<double> regions_ns;
  std::vector<double> ratios[2];       // [0]: plain ran first in the pair, [1]: instrumented first
  std::vector<double> differences[2];  // ns per forward, same split
  bool plain_first = true;
  for (auto _ : state) {
    double p = 0;
    double r = 0;
    if (plain_first) {
      p = time_block(plain);
      r = time_block(instrumented);
    } else {
      r = time_block(instrumented);
      p = time_block(plain);
    }
    const int order = plain_first ? 0 : 1;
    ratios[order].push_back(r / p);
    differences[order].push_back(r - p);
    plain_ns.push_back(p);
    regions_ns.push_back(r);
    plain_first = !plain_first;
  }
  const regionprof::capture_result recorded = capture.stop();
  const double plain_best = *std::min_element(plain_ns.begin(), plain_ns.end());
  const double regions_best = *std::min_element(regions_ns.begin(), regions_ns.end());
  state.counters["regions_over_plain"] = std::sqrt(median(ratios[0]) * median(ratios[1]));
  state.counters["ns_per_region"] = (median(differences[0]) + median(differences[1])) / 2 / regions_per_forward;
  state.counters["plain_ns"] = median(plain_ns);
  state.counters["regions_ns"] = median(regions_ns);
  state.counters["regions_over_plain_best"] = regions_best / plain_best;
  state.counters["ns_per_region_best"] = (regions_best - plain_best) / regions_per_forward;
  state.counters["plain_ns_best"] = plain_best;
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

// BM_TorchMLP_Regions with instrument_options::memory (docs/design.md, rule 21): c10's allocators report
// each allocation and free, and each is a memory event of the capture. Compare with BM_TorchMLP_Regions
// of the same invocation (--benchmark_enable_random_interleaving).
void BM_TorchMLP_RegionsMemory(benchmark::State& state) {
  models& m = shared_models();
  const c10::InferenceMode inference;
  auto handle = regionprof::torch::instrument(m.mlp, {.tuned = {}, .every_level = true, .ops = false, .memory = true});
  warm_up(handle.module(), m.mlp_input);
  regionprof::capture_session capture;
  for (auto _ : state) benchmark::DoNotOptimize(handle.module().forward(m.mlp_input));
  const regionprof::capture_result recorded = capture.stop();
  state.counters["memory_events_per_forward"] =
      static_cast<double>(recorded.data.memory_events.size()) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_TorchMLP_RegionsMemory)->Unit(benchmark::kNanosecond);

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

// A training step (forward, MSE loss, backward, SGD step, zero_grad) of an eager Sequential of five
// Linear(256, 256) + ReLU pairs and a Linear(256, 10) head (11 regions), batch 32, one thread, the
// capture recording. Per iteration three blocks of `block` steps in a rotating order: plain, instrumented
// (module regions), instrumented with backward regions (docs/design.md, rule 19; instrument_options::
// backward); each instrumentation is made before its block and removed after it (eager modules are
// instrumented in place, and the backward callback is global). Reported: the medians of each block's
// thread CPU time per step over the plain block of its iteration, `regions_over_plain` and
// `backward_over_plain`, and `plain_us`.
void BM_TorchTrain_Interleaved(benchmark::State& state) {
  at::set_num_threads(1);
  torch::manual_seed(0);
  torch::nn::Sequential net;
  for (int i = 0; i < 5; ++i) {
    net->push_back(torch::nn::Linear(256, 256));
    net->push_back(torch::nn::ReLU());
  }
  net->push_back(torch::nn::Linear(256, 10));
  torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(1e-3));
  const torch::Tensor x = torch::randn({32, 256});
  const torch::Tensor y = torch::randn({32, 10});
  constexpr int block = 20;
  const auto time_block = [&] {
    const std::int64_t start = thread_cpu_ns();
    for (int i = 0; i < block; ++i) {
      const torch::Tensor loss = (net->forward(x) - y).pow(2).mean();
      loss.backward();
      optimizer.step();
      optimizer.zero_grad();
    }
    return static_cast<double>(thread_cpu_ns() - start) / block;
  };
  const auto instrumented_block = [&](bool backward) {
    auto handle = regionprof::torch::instrument(*net, {.backward = backward});
    const double ns = time_block();
    handle.remove();
    return ns;
  };
  for (int i = 0; i < 3; ++i) {  // warm-up: allocator, first-touch
    time_block();
    instrumented_block(false);
    instrumented_block(true);
  }
  regionprof::capture_session capture;
  std::vector<double> plain_ns;
  std::vector<double> regions_ratio;
  std::vector<double> backward_ratio;
  int rotation = 0;
  for (auto _ : state) {
    double ns[3] = {};
    for (int k = 0; k < 3; ++k) {
      const int mode = (rotation + k) % 3;
      ns[mode] = mode == 0 ? time_block() : instrumented_block(mode == 2);
    }
    rotation = (rotation + 1) % 3;
    plain_ns.push_back(ns[0]);
    regions_ratio.push_back(ns[1] / ns[0]);
    backward_ratio.push_back(ns[2] / ns[0]);
  }
  (void)capture.stop();
  state.counters["regions_over_plain"] = median(regions_ratio);
  state.counters["backward_over_plain"] = median(backward_ratio);
  state.counters["plain_us"] = median(plain_ns) / 1000.0;
}
BENCHMARK(BM_TorchTrain_Interleaved)->Unit(benchmark::kMillisecond)->Iterations(30);

// An AOTInductor package's modules as regions (instrument_package): the cost per kernel call. The package
// holds only regionprof's record, the two-block model's (tests/torch/test_torch_package.cpp); its four
// kernels a run are emulated by RecordFunctions of their names inside the runner's, as the generated code
// runs them (a kernel's own work does not change what the adapter adds). Blocks of runs alternate,
// uninstrumented and instrumented (made before its block, removed after), the capture recording.
// Reported: `ns_per_kernel`, the median over iterations of (instrumented - plain) per kernel call, and
// `plain_ns_per_run` (RecordFunctions with no callback: torch's own floor).
void BM_TorchPackage_KernelCost(benchmark::State& state) {
  const std::string path = (std::filesystem::temp_directory_path() / "regionprof_bench_two_blocks.pt2").string();
  {
    const std::string record = R"({"format": "regionprof kernel modules", "version": 1, "models": {"model": {
      "modules": [{"path": "", "type": "Net"}, {"path": "a", "type": "Block"}, {"path": "a.l", "type": "Linear"},
                  {"path": "b", "type": "Block"}, {"path": "b.l", "type": "Linear"}],
      "kernels": [{"name": "aoti_torch_cpu_addmm_out", "module": "a.l"},
                  {"name": "graph_0_cpp_fused_native_layer_norm_relu_0", "module": "a"},
                  {"name": "aoti_torch_cpu_addmm_out", "module": "b.l"},
                  {"name": "graph_0_cpp_fused_mul_native_layer_norm_relu_1", "module": ""}]}}})";
    caffe2::serialize::PyTorchStreamWriter writer(path);
    writer.writeRecord("extra/regionprof_kernel_modules.json", record.data(), record.size());
    writer.writeEndOfFile();
  }
  constexpr std::string_view kernels[] = {"aoti_torch_cpu_addmm_out", "graph_0_cpp_fused_native_layer_norm_relu_0",
                                          "aoti_torch_cpu_addmm_out", "graph_0_cpp_fused_mul_native_layer_norm_relu_1"};
  constexpr int block = 2000;
  const auto time_block = [&] {
    const std::int64_t start = thread_cpu_ns();
    for (int i = 0; i < block; ++i) {
      at::RecordFunction run(at::RecordScope::USER_SCOPE);
      if (run.isActive()) run.before(std::string_view("AOTIModelContainerRunner::run"));
      for (const std::string_view name : kernels) {
        at::RecordFunction kernel(at::RecordScope::FUNCTION);
        if (kernel.isActive()) kernel.before(name);
      }
    }
    return static_cast<double>(thread_cpu_ns() - start) / block;
  };
  const auto instrumented_block = [&] {
    auto handle = regionprof::torch::instrument_package(path);
    const double ns = time_block();
    handle.remove();
    return ns;
  };
  time_block();
  instrumented_block();
  regionprof::capture_session capture;
  std::vector<double> plain_ns;
  std::vector<double> added_ns[2];  // per kernel call; [0]: plain block first, [1]: instrumented first
  bool plain_first = true;
  for (auto _ : state) {
    double plain = 0;
    double instrumented = 0;
    if (plain_first) {
      plain = time_block();
      instrumented = instrumented_block();
    } else {
      instrumented = instrumented_block();
      plain = time_block();
    }
    added_ns[plain_first ? 0 : 1].push_back((instrumented - plain) / std::size(kernels));
    plain_ns.push_back(plain);
    plain_first = !plain_first;
  }
  (void)capture.stop();
  state.counters["ns_per_kernel"] = (median(added_ns[0]) + median(added_ns[1])) / 2;
  state.counters["plain_ns_per_run"] = median(plain_ns);
}
BENCHMARK(BM_TorchPackage_KernelCost)->Unit(benchmark::kMillisecond)->Iterations(40);

}  // namespace
