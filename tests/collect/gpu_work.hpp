// Device work for the `gpu` tests, compiled by nvcc (gpu_work.cu); plain C entry points so the Boost.Test
// program stays a host C++ program. Each returns a cudaError_t value (0: success).
#pragma once

extern "C" {
/// Devices the runtime sees (0 without a driver or device).
int regionprof_gpu_device_count();
/// On two streams: a 1 MiB pageable HtoD copy, a 256 KiB memset and `rp_scale` on the first, `rp_offset`
/// on the second; then a CUDA graph of `rp_graph_node` x2 and `rp_graph_tail` launched once; then waits.
int regionprof_gpu_pipeline();
/// `launches` launches of the empty kernel `rp_empty`, then waits.
int regionprof_gpu_launch_loop(int launches);
/// One `rp_scale` launch followed by cudaStreamSynchronize on its stream.
int regionprof_gpu_stream_sync();
}
