// cuda_pipeline: a CUDA program with NVTX regions whose device work regionprof attributes from outside:
//
//   build/bin/regionprof run --run-marker step --region '(upload|compute|graph|late_kernel)=stage'
//                            --warmup-runs 1 -- build/bin/cuda_pipeline
//
// Each of 6 `step` ranges holds four regions:
//   upload       a 4 MiB pinned host-to-device copy and a 4 MiB memset            (2 device ops)
//   compute      `spin_kernel` on two streams at once, ~0.5 ms each               (2 device ops)
//   graph        one launch of a CUDA graph of `graph_node` x2 and `graph_tail`   (3 kernels, one launch)
//   late_kernel  launches `late_kernel` (~2 ms) and closes at once: the kernel runs after its region
//                closed and still belongs to it (its launch does)                  (1 device op)
// then waits for the device outside every region. Prints one line to stdout; exits 0, or 2 without a
// usable CUDA device. Nothing here knows regionprof: NVTX (header-only) and the CUDA runtime only.
// `cuda_pipeline --launch-loop N` instead times N launches of an empty kernel and prints ns per launch.
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int steps = 6;
constexpr size_t copy_bytes = 4u << 20;

/// Spins for about `nanoseconds` of device time (one thread: the duration is what matters).
__device__ void spin(long long nanoseconds) {
  const long long start = static_cast<long long>(clock64());
  // clock64 counts SM cycles; ~1.5-2 GHz on current GPUs. The exact length does not matter.
  const long long cycles = nanoseconds * 2;
  while (static_cast<long long>(clock64()) - start < cycles) {
  }
}

}  // namespace

__global__ void spin_kernel(long long nanoseconds) { spin(nanoseconds); }
__global__ void graph_node(float* data, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[i] = data[i] * 0.5f + 1.0f;
}
__global__ void graph_tail(float* data, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[i] -= 1.0f;
}
__global__ void late_kernel(long long nanoseconds) { spin(nanoseconds); }
__global__ void empty_kernel() {}

namespace {

bool check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "cuda_pipeline: %s failed: %s (%s)\n", what, cudaGetErrorName(status),
               cudaGetErrorString(status));
  return false;
}

int launch_loop(int launches) {
  if (!check(cudaFree(nullptr), "CUDA initialisation")) return 2;
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 1>>>();  // warm-up (module load, queues)
  if (!check(cudaDeviceSynchronize(), "warm-up")) return 2;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1>>>();
  const auto launched = std::chrono::steady_clock::now();
  if (!check(cudaDeviceSynchronize(), "launch loop")) return 2;
  const double ns = std::chrono::duration<double, std::nano>(launched - start).count();
  std::printf("cuda_pipeline: %d launches, %.1f ns per launch\n", launches, ns / launches);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--launch-loop") == 0) return launch_loop(std::atoi(argv[2]));

  const int count = static_cast<int>(copy_bytes / sizeof(float));
  float* host = nullptr;
  float* device = nullptr;
  float* scratch = nullptr;
  cudaStream_t first = nullptr;
  cudaStream_t second = nullptr;
  if (!check(cudaMallocHost(&host, copy_bytes), "cudaMallocHost") || !check(cudaMalloc(&device, copy_bytes), "cudaMalloc") ||
      !check(cudaMalloc(&scratch, copy_bytes), "cudaMalloc") ||
      !check(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking), "cudaStreamCreate") ||
      !check(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking), "cudaStreamCreate")) {
    return 2;
  }
  for (int i = 0; i < count; ++i) host[i] = static_cast<float>(i % 100);

  // The graph: captured once, launched once per step.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t graph_exec = nullptr;
  if (!check(cudaStreamBeginCapture(first, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture")) return 2;
  graph_node<<<count / 256, 256, 0, first>>>(scratch, count);
  graph_node<<<count / 256, 256, 0, first>>>(scratch, count);
  graph_tail<<<count / 256, 256, 0, first>>>(scratch, count);
  if (!check(cudaStreamEndCapture(first, &graph), "cudaStreamEndCapture") ||
      !check(cudaGraphInstantiate(&graph_exec, graph, 0), "cudaGraphInstantiate")) {
    return 2;
  }

  for (int step = 0; step < steps; ++step) {
    nvtxRangePushA("step");

    nvtxRangePushA("upload");
    check(cudaMemcpyAsync(device, host, copy_bytes, cudaMemcpyHostToDevice, first), "cudaMemcpyAsync");
    check(cudaMemsetAsync(scratch, 0, copy_bytes, second), "cudaMemsetAsync");
    nvtxRangePop();

    nvtxRangePushA("compute");
    spin_kernel<<<1, 1, 0, first>>>(500'000);
    spin_kernel<<<1, 1, 0, second>>>(500'000);
    check(cudaGetLastError(), "spin_kernel launch");
    check(cudaStreamSynchronize(second), "cudaStreamSynchronize");
    nvtxRangePop();

    nvtxRangePushA("graph");
    check(cudaGraphLaunch(graph_exec, first), "cudaGraphLaunch");
    nvtxRangePop();

    nvtxRangePushA("late_kernel");
    late_kernel<<<1, 1, 0, first>>>(2'000'000);  // runs on after the region closes
    check(cudaGetLastError(), "late_kernel launch");
    nvtxRangePop();

    check(cudaStreamSynchronize(first), "cudaStreamSynchronize");  // outside every region
    nvtxRangePop();
  }

  const bool ok = check(cudaGraphExecDestroy(graph_exec), "cudaGraphExecDestroy") &&
                  check(cudaGraphDestroy(graph), "cudaGraphDestroy") && check(cudaStreamDestroy(first), "cudaStreamDestroy") &&
                  check(cudaStreamDestroy(second), "cudaStreamDestroy") && check(cudaFree(device), "cudaFree") &&
                  check(cudaFree(scratch), "cudaFree") && check(cudaFreeHost(host), "cudaFreeHost");
  std::printf("cuda_pipeline: %d steps done\n", steps);
  return ok ? 0 : 2;
}
