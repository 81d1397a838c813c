#include "regionprof/collect/graph_capture.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include "regionprof/trace/clock.hpp"

namespace regionprof::collect {

graph_node_log& graph_node_log::instance() {
  static graph_node_log* const log = new graph_node_log();  // never destroyed: CUPTI may call back late
  return *log;
}

void graph_node_log::begin(std::size_t capacity) {
  std::vector<node_origin> fresh;
  fresh.reserve(capacity);
  std::lock_guard lock(mutex_);
  entries_ = std::move(fresh);
  lost_ = 0;
  recording_ = true;
}

std::vector<node_origin> graph_node_log::end() {
  std::lock_guard lock(mutex_);
  recording_ = false;
  return std::move(entries_);
}

std::uint64_t graph_node_log::lost() const {
  std::lock_guard lock(mutex_);
  return lost_;
}

void graph_node_log::note(const node_origin& origin) noexcept {
  std::lock_guard lock(mutex_);
  if (!recording_) return;
  try {
    entries_.push_back(origin);
  } catch (...) {
    ++lost_;  // the node will read as made before profiling: launch attribution, counted by the analysis
  }
}

namespace {

bool attributed_node_type(CUgraphNodeType type) noexcept {
  return type == CU_GRAPH_NODE_TYPE_KERNEL || type == CU_GRAPH_NODE_TYPE_MEMCPY || type == CU_GRAPH_NODE_TYPE_MEMSET;
}

std::uint64_t node_id(const cupti_library& cupti, CUgraphNode node) noexcept {
  if (node == nullptr) return 0;
  std::uint64_t id = 0;
  if (!REGIONPROF_CUPTI(cupti, cuptiGetGraphNodeId, node, &id).ok()) return 0;
  return id;
}

}  // namespace

void CUPTIAPI graph_resource_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                      const void* cbdata) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || userdata == nullptr || cbdata == nullptr) return;
  if (cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && cbid != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(cbdata);
  const auto* graph = static_cast<const CUpti_GraphData*>(resource->resourceDescriptor);
  if (graph == nullptr || !attributed_node_type(graph->nodeType)) return;
  const cupti_library& cupti = *static_cast<const cupti_library*>(userdata);
  node_origin origin;
  origin.node = node_id(cupti, graph->node);
  if (origin.node == 0) return;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    origin.original = node_id(cupti, graph->originalNode);
    if (origin.original == 0) return;  // a clone of an unknown node: made before profiling
  } else {
    origin.time_ns = monotonic_now_ns();
    origin.pid = static_cast<std::uint32_t>(getpid());
    origin.tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  }
  graph_node_log::instance().note(origin);
}

node_origins::node_origins(const std::vector<node_origin>& log) {
  by_node_.reserve(log.size());
  for (const node_origin& origin : log) by_node_[origin.node] = origin;
}

const node_origin* node_origins::creation_of(std::uint64_t node) const {
  // A clone of a clone (an instantiated child graph, a cloned executable graph) climbs back; the
  // bound stops a cycle a corrupt log could hold.
  for (int hop = 0; hop < 64 && node != 0; ++hop) {
    const auto found = by_node_.find(node);
    if (found == by_node_.end()) return nullptr;
    if (found->second.original == 0) return &found->second;
    node = found->second.original;
  }
  return nullptr;
}

}  // namespace regionprof::collect
