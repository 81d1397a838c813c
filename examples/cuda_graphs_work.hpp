// The CUDA work of examples/cuda_graphs (cuda_graphs_work.cu), callable from plain C++.
#pragma once

#include <cstddef>

namespace cuda_graphs {

inline constexpr int layers = 4;
/// Device time of layer_i's kernel: (i + 1) x 100 us.
constexpr long long layer_ns(int i) { return (i + 1) * 100'000LL; }
inline constexpr long long built_ns = 50'000;    ///< the explicitly built node's kernel
inline constexpr long long direct_ns = 30'000;   ///< the replay region's own kernel, launched directly
inline constexpr std::size_t memset_bytes = 1u << 20;  ///< layer_2's memset node

/// Stream and buffer; false (with a message on stderr) without a usable device.
bool init();
/// Captures the graph: in range `capture`, layer_i's kernel inside range `layer_i` (layer_2 also a
/// memset), then a kernel node added explicitly inside `built`; instantiates it (a previous graph is
/// destroyed first).
bool capture();
/// In range `replay`: one graph launch and one direct kernel; then waits for the stream.
bool replay_step();
/// Destroys the graph and its executable graph.
void release_graph();
/// ns per launch of an empty kernel over `launches` launches (after a warm-up); < 0 on failure.
double launch_loop_ns(int launches);

}  // namespace cuda_graphs
