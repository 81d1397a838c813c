// Where CUDA graph nodes were made: CUPTI's resource callbacks during a session (docs/gpu.md, "CUDA
// graphs"; docs/design.md, rule 15).
//
// GRAPHNODE_CREATED runs inside the API call that makes a node (a launch on a capturing stream, or
// cudaGraphAdd*Node), on the calling thread: the callback notes the node's id, the thread and the time.
// GRAPHNODE_CLONED (cudaGraphInstantiate, cudaGraphClone, a child graph) notes which node a clone copies,
// so an executable graph's nodes, the ones replay records name, inherit the original's creation point.
// At decode the point becomes the correlation id of the API call around it on that thread (the call
// record that encloses it), which the trace carries as plain data (trace::graph_ops).
//
// Node ids are unique in the process and never reused, so DESTROY_STARTING needs no handling: a
// destroyed node's entry stays until the session ends (its replays' records may still be in buffers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "regionprof/collect/cupti_library.hpp"

namespace regionprof::collect {

/// One node made or cloned while a session recorded.
struct node_origin {
  std::uint64_t node = 0;      ///< CUPTI's graph node id (cuptiGetGraphNodeId)
  std::uint64_t original = 0;  ///< a clone: the node it copies; 0 for a node created here
  std::int64_t time_ns = 0;    ///< created nodes: monotonic_now_ns() inside the creating API call
  std::uint32_t pid = 0;       ///< created nodes: getpid(), as CUPTI's API records carry it
  std::uint32_t tid = 0;       ///< created nodes: gettid() of the creating thread
};

/// The process's node log, filled by the resource callback while a session records. Never destroyed
/// (CUPTI may call back late). Lock order: a leaf mutex, never held while calling CUPTI.
class graph_node_log {
 public:
  static graph_node_log& instance();

  /// Starts recording (a session starts): forgets what an earlier session left, reserves `capacity`.
  void begin(std::size_t capacity);
  /// Stops recording and hands over what was noted, in callback order.
  std::vector<node_origin> end();
  /// Entries the callback could not keep (out of memory); their nodes read as made before profiling.
  std::uint64_t lost() const;

  /// From the callback: never throws. Appends while recording; allocates only past the reserve.
  void note(const node_origin& origin) noexcept;

 private:
  graph_node_log() = default;
  mutable std::mutex mutex_;
  bool recording_ = false;
  std::vector<node_origin> entries_;
  std::uint64_t lost_ = 0;
};

/// The subscriber's callback. For CUPTI_CB_DOMAIN_RESOURCE GRAPHNODE_CREATED (kernel, memcpy and memset
/// nodes) and GRAPHNODE_CLONED, notes the node in graph_node_log; `userdata` is the cupti_library whose
/// cuptiGetGraphNodeId names nodes. Everything else is ignored. Never throws.
void CUPTIAPI graph_resource_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                      const void* cbdata);

/// Node id -> where it was created (following clones back to the created node).
class node_origins {
 public:
  explicit node_origins(const std::vector<node_origin>& log);
  /// The created node `node` descends from, or null when it was made before the session (or unknown).
  const node_origin* creation_of(std::uint64_t node) const;
  bool empty() const noexcept { return by_node_.empty(); }

 private:
  std::unordered_map<std::uint64_t, node_origin> by_node_;
};

}  // namespace regionprof::collect
