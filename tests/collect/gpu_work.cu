#include <vector>

#include "gpu_work.hpp"

namespace {
constexpr int elements = 1 << 18;  // 1 MiB of floats
}  // namespace

// Kernels at namespace scope, so CUPTI reports them as `rp_scale(float*, int)`.
__global__ void rp_scale(float* data, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[i] *= 2.0f;
}

__global__ void rp_offset(float* data, int count, float by) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[i] += by;
}

__global__ void rp_graph_node(float* data, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[i] = data[i] * 0.5f + 1.0f;
}

__global__ void rp_graph_tail(float* data, int count) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[i] -= 1.0f;
}

__global__ void rp_empty() {}

#define RP_TRY(call)                      \
  do {                                    \
    const cudaError_t status_ = (call);   \
    if (status_ != cudaSuccess) return static_cast<int>(status_); \
  } while (0)

extern "C" int regionprof_gpu_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

extern "C" int regionprof_gpu_pipeline() {
  std::vector<float> host(elements, 1.0f);
  float* device = nullptr;
  cudaStream_t first = nullptr;
  cudaStream_t second = nullptr;
  RP_TRY(cudaMalloc(&device, elements * sizeof(float)));
  RP_TRY(cudaStreamCreateWithFlags(&first, cudaStreamNonBlocking));
  RP_TRY(cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking));
  RP_TRY(cudaMemcpyAsync(device, host.data(), elements * sizeof(float), cudaMemcpyHostToDevice, first));
  RP_TRY(cudaMemsetAsync(device, 0, 256 << 10, first));
  rp_scale<<<elements / 256, 256, 0, first>>>(device, elements);
  RP_TRY(cudaGetLastError());
  RP_TRY(cudaStreamSynchronize(first));
  rp_offset<<<elements / 256, 256, 0, second>>>(device, elements, 3.0f);
  RP_TRY(cudaGetLastError());

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  RP_TRY(cudaStreamSynchronize(second));
  RP_TRY(cudaStreamBeginCapture(first, cudaStreamCaptureModeThreadLocal));
  rp_graph_node<<<elements / 256, 256, 0, first>>>(device, elements);
  rp_graph_node<<<elements / 256, 256, 0, first>>>(device, elements);
  rp_graph_tail<<<elements / 256, 256, 0, first>>>(device, elements);
  RP_TRY(cudaStreamEndCapture(first, &graph));
  RP_TRY(cudaGraphInstantiate(&exec, graph, 0));
  RP_TRY(cudaGraphLaunch(exec, first));
  RP_TRY(cudaDeviceSynchronize());

  RP_TRY(cudaGraphExecDestroy(exec));
  RP_TRY(cudaGraphDestroy(graph));
  RP_TRY(cudaStreamDestroy(first));
  RP_TRY(cudaStreamDestroy(second));
  RP_TRY(cudaFree(device));
  return 0;
}

extern "C" int regionprof_gpu_launch_loop(int launches) {
  for (int i = 0; i < launches; ++i) rp_empty<<<1, 1>>>();
  RP_TRY(cudaGetLastError());
  RP_TRY(cudaDeviceSynchronize());
  return 0;
}

extern "C" int regionprof_gpu_stream_sync() {
  float* device = nullptr;
  cudaStream_t stream = nullptr;
  RP_TRY(cudaMalloc(&device, elements * sizeof(float)));
  RP_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  rp_scale<<<elements / 256, 256, 0, stream>>>(device, elements);
  RP_TRY(cudaGetLastError());
  RP_TRY(cudaStreamSynchronize(stream));
  RP_TRY(cudaStreamDestroy(stream));
  RP_TRY(cudaFree(device));
  return 0;
}
