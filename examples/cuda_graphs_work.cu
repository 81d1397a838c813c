// The CUDA side of examples/cuda_graphs.cpp: a graph captured inside NVTX regions, replayed inside
// others. Nothing here knows regionprof: NVTX (header-only) and the CUDA runtime only.
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>

#include "cuda_graphs_work.hpp"

namespace {

/// Spins for about `nanoseconds` of device time (clock64 counts SM cycles, ~2 per ns on an H200).
__device__ void spin(long long nanoseconds) {
  const long long start = static_cast<long long>(clock64());
  while (static_cast<long long>(clock64()) - start < nanoseconds * 2) {
  }
}

}  // namespace

__global__ void layer_kernel(long long nanoseconds) { spin(nanoseconds); }
__global__ void built_kernel(long long nanoseconds) { spin(nanoseconds); }
__global__ void direct_kernel(long long nanoseconds) { spin(nanoseconds); }
__global__ void empty_graph_kernel() {}

namespace cuda_graphs {
namespace {

cudaStream_t stream = nullptr;
void* scratch = nullptr;
cudaGraph_t graph = nullptr;
cudaGraphExec_t graph_exec = nullptr;

bool check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "cuda_graphs: %s failed: %s (%s)\n", what, cudaGetErrorName(status), cudaGetErrorString(status));
  return false;
}

}  // namespace

bool init() {
  return check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate") &&
         check(cudaMalloc(&scratch, memset_bytes), "cudaMalloc");
}

bool capture() {
  release_graph();
  nvtxRangePushA("capture");
  if (!check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture")) return false;
  for (int i = 0; i < layers; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "layer_%d", i);
    nvtxRangePushA(name);
    layer_kernel<<<1, 1, 0, stream>>>(layer_ns(i));
    if (i == 2) (void)cudaMemsetAsync(scratch, 0, memset_bytes, stream);  // a memset node in layer_2
    nvtxRangePop();
  }
  bool ok = check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  // Explicit construction: one more kernel node, added inside `built`.
  nvtxRangePushA("built");
  cudaKernelNodeParams params{};
  long long built = built_ns;
  void* arguments[] = {&built};
  params.func = reinterpret_cast<void*>(&built_kernel);
  params.gridDim = dim3(1);
  params.blockDim = dim3(1);
  params.kernelParams = arguments;
  cudaGraphNode_t node = nullptr;
  ok = ok && check(cudaGraphAddKernelNode(&node, graph, nullptr, 0, &params), "cudaGraphAddKernelNode");
  nvtxRangePop();
  ok = ok && check(cudaGraphInstantiate(&graph_exec, graph, 0), "cudaGraphInstantiate");  // clones the nodes
  nvtxRangePop();
  return ok;
}

bool replay_step() {
  nvtxRangePushA("replay");
  bool ok = check(cudaGraphLaunch(graph_exec, stream), "cudaGraphLaunch");
  direct_kernel<<<1, 1, 0, stream>>>(direct_ns);  // an ordinary launch: the replay region's own
  ok = ok && check(cudaGetLastError(), "direct_kernel launch");
  nvtxRangePop();
  return check(cudaStreamSynchronize(stream), "cudaStreamSynchronize") && ok;
}

void release_graph() {
  if (graph_exec != nullptr) (void)cudaGraphExecDestroy(graph_exec);
  if (graph != nullptr) (void)cudaGraphDestroy(graph);
  graph_exec = nullptr;
  graph = nullptr;
}

double launch_loop_ns(int launches) {
  for (int i = 0; i < 1000; ++i) empty_graph_kernel<<<1, 1, 0, stream>>>();
  if (!check(cudaStreamSynchronize(stream), "warm-up")) return -1.0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; ++i) empty_graph_kernel<<<1, 1, 0, stream>>>();
  const auto launched = std::chrono::steady_clock::now();
  if (!check(cudaStreamSynchronize(stream), "launch loop")) return -1.0;
  return std::chrono::duration<double, std::nano>(launched - start).count() / launches;
}

}  // namespace cuda_graphs
