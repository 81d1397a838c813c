// CUDA graphs without a GPU (docs/design.md, rule 15; docs/gpu.md, "CUDA graphs"): graph nodes are made
// through CUPTI's resource callback (regionprof's own, fed CUpti_ResourceData / CUpti_GraphData as CUPTI
// passes them), replays arrive as real CUPTI kernel, memcpy and memset records carrying graphNodeId,
// and both go through the session, the decoder and the analysis, as on a GPU.
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "fake_backend.hpp"
#include "regionprof/analysis/analysis.hpp"
#include "regionprof/collect/collector.hpp"
#include "regionprof/collect/graph_capture.hpp"
#include "regionprof/import/import.hpp"
#include "regionprof/report/report.hpp"

using namespace regionprof;
using namespace regionprof::test;

namespace {

/// CUPTI's node ids for the test's nodes: a node handle is its id (the real cuptiGetGraphNodeId needs
/// a driver-made node; the callback calls this one through the same table and macro).
CUptiResult CUPTIAPI node_id_of(CUgraphNode node, std::uint64_t* id) {
  if (node == nullptr || id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *id = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(node));
  return CUPTI_SUCCESS;
}

CUgraphNode node_handle(std::uint64_t id) { return reinterpret_cast<CUgraphNode>(static_cast<std::uintptr_t>(id)); }

/// The real CUPTI with node ids answered by node_id_of.
const collect::cupti_library& graph_cupti() {
  static const collect::cupti_library library = [] {
    collect::cupti_library copy = loaded_cupti();
    copy.fn.cuptiGetGraphNodeId = &node_id_of;
    return copy;
  }();
  return library;
}

/// One resource callback as CUPTI issues it.
void resource_callback(CUpti_CallbackId cbid, std::uint64_t node, std::uint64_t original, CUgraphNodeType type) {
  CUpti_GraphData graph{};
  graph.node = node_handle(node);
  graph.originalNode = original != 0 ? node_handle(original) : nullptr;
  graph.nodeType = type;
  CUpti_ResourceData resource{};
  resource.resourceDescriptor = &graph;
  collect::graph_resource_callback(const_cast<collect::cupti_library*>(&graph_cupti()), CUPTI_CB_DOMAIN_RESOURCE,
                                   cbid, &resource);
}

std::uint32_t this_thread() { return static_cast<std::uint32_t>(syscall(SYS_gettid)); }

/// A program on this thread: NVTX ranges (as the capture records them) and CUPTI records, in one session.
class graph_program {
 public:
  graph_program() : pid_(static_cast<std::uint32_t>(getpid())), tid_(this_thread()) {
    main_ = t.add_thread(pid_, tid_, "main");
    auto backend = std::make_unique<fake_backend>();
    backend_ = backend.get();
    device_options options;
    options.buffer_bytes = 64 << 10;
    options.max_buffer_bytes = 256 << 10;
    session_ = collect::make_device_session(options, std::move(backend));
    session_->start();
  }

  static std::int64_t now() { return monotonic_now_ns(); }

  void range(std::int64_t start, std::int64_t end, const char* name) {
    t.intervals.push_back({start, end, t.strings.intern(name), main_, 0, 0, interval_kind::range, 0});
  }
  /// A runtime call `cbid` during which CUPTI reports `nodes` created (a launch on a capturing stream,
  /// cudaGraphAddKernelNode, ...): the callbacks run inside the call's [start, end].
  void make_nodes(std::uint32_t correlation, std::initializer_list<std::uint64_t> nodes,
                  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_KERNEL,
                  std::uint32_t cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    const std::int64_t start = now();
    for (std::uint64_t node : nodes) resource_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, node, 0, type);
    const std::int64_t end = now();
    call(correlation, cbid, start, end);
  }
  /// cudaGraphInstantiate: each (clone, original) pair reported cloned.
  void instantiate(std::uint32_t correlation, std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> clones,
                   CUgraphNodeType type = CU_GRAPH_NODE_TYPE_KERNEL) {
    const std::int64_t start = now();
    for (const auto& [clone, original] : clones) {
      resource_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, clone, original, type);
    }
    call(correlation, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v10000, start, now());
  }
  template <class Record>
  void add(const Record& record) {
    buffer_.add(record);
  }
  void call(std::uint32_t correlation, std::uint32_t cbid, std::int64_t start, std::int64_t end) {
    buffer_.add(api_call(CUPTI_ACTIVITY_KIND_RUNTIME, cbid, correlation, static_cast<std::uint64_t>(start),
                         static_cast<std::uint64_t>(end), pid_, tid_));
  }
  void graph_launch(std::uint32_t correlation, std::int64_t start, std::int64_t end) {
    call(correlation, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, start, end);
  }
  /// A kernel a replay ran: graph node `node` of the executable graph.
  void replayed_kernel(std::uint32_t correlation, std::int64_t start, std::int64_t end, std::uint64_t node,
                       const char* name = "_Z4nodev") {
    collect::kernel_record record = kernel(correlation, static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(end), name);
    record.graphNodeId = node;
    buffer_.add(record);
  }
  void replayed_copy(std::uint32_t correlation, std::int64_t start, std::int64_t end, std::uint64_t node) {
    collect::memcpy_record record = memcpy_op(correlation, static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(end), 4096);
    record.graphNodeId = node;
    buffer_.add(record);
  }
  void replayed_set(std::uint32_t correlation, std::int64_t start, std::int64_t end, std::uint64_t node) {
    collect::memset_record record = memset_op(correlation, static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(end), 512);
    record.graphNodeId = node;
    buffer_.add(record);
  }
  /// Stops the session; the trace then holds the ranges, the calls, the ops and trace::graph_ops.
  trace& stop() {
    backend_->add(buffer_);
    session_->stop(t);
    return t;
  }

  trace t;

 private:
  std::uint32_t pid_;
  std::uint32_t tid_;
  thread_index main_ = 0;
  fake_backend* backend_ = nullptr;
  std::unique_ptr<device_session> session_;
  record_buffer buffer_;
};

analysis_options step_runs(std::vector<std::string> regions, graph_attribution mode = graph_attribution::capture) {
  analysis_options options;
  options.run_marker = {match_kind::regex, "step", "run", ""};
  for (const std::string& region : regions) options.region_rules.push_back(parse_region_arg(region));
  options.graph_attribution = mode;
  return options;
}

const region_aggregate* region_of(const analysis_result& result, const run_result& run, const std::string& id) {
  for (const region_aggregate& aggregate : run.regions) {
    if (result.regions.at(aggregate.region).id == id) return &aggregate;
  }
  return nullptr;
}

std::vector<const warning*> warnings_with(const std::vector<warning>& warnings, warning_code code) {
  std::vector<const warning*> found;
  for (const warning& w : warnings) {
    if (w.code == code) found.push_back(&w);
  }
  return found;
}

/// The standard scene: kernels captured inside layer_0 and layer_1 before any run (warm-up), the graph
/// instantiated (exec nodes 101, 102 clone 1, 2), then replayed twice inside `replay` in runs `step`.
graph_program captured_in_two_layers() {
  graph_program p;
  const std::int64_t begin0 = graph_program::now();
  p.make_nodes(10, {1});
  p.range(begin0, graph_program::now(), "layer_0");
  const std::int64_t begin1 = graph_program::now();
  p.make_nodes(11, {2});
  p.range(begin1, graph_program::now(), "layer_1");
  p.instantiate(12, {{101, 1}, {102, 2}});
  for (int run = 0; run < 2; ++run) {
    const std::int64_t base = graph_program::now() + 10'000'000 + run * 1'000'000;
    p.range(base, base + 100'000, "step");
    p.range(base + 1'000, base + 50'000, "replay");
    const auto launch = static_cast<std::uint32_t>(50 + run);
    p.graph_launch(launch, base + 2'000, base + 3'000);
    p.replayed_kernel(launch, base + 10'000, base + 14'000, 101, "_Z6layer0v");
    p.replayed_kernel(launch, base + 14'000, base + 20'000, 102, "_Z6layer1v");
  }
  return p;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(collect_cuda_graph)

BOOST_AUTO_TEST_CASE(cuda_graph_replayed_kernels_go_to_the_region_that_captured_them) {
  graph_program p = captured_in_two_layers();
  const trace& t = p.stop();
  // The collector's plain data: each replayed op with its exec node and the call that made its original.
  BOOST_REQUIRE_EQUAL(t.device_ops.size(), 4u);
  BOOST_REQUIRE_EQUAL(t.graph_ops.size(), 4u);
  const std::uint64_t nodes[] = {101, 102, 101, 102};
  const std::uint32_t captures[] = {10, 11, 10, 11};
  for (std::uint32_t i = 0; i < 4; ++i) {
    BOOST_TEST(t.graph_ops[i].op == i);
    BOOST_TEST(t.graph_ops[i].graph_node_id == nodes[i]);
    BOOST_TEST(t.graph_ops[i].capture_correlation_id == captures[i]);
  }

  const analysis_result result = analyze(t, step_runs({"layer_(.*)=layer", "replay"}));
  BOOST_REQUIRE_EQUAL(result.runs.size(), 2u);
  for (const run_result& run : result.runs) {
    BOOST_TEST(*run.device_time_ns == 10'000);
    const region_aggregate* replay = region_of(result, run, "region:replay");
    const region_aggregate* layer0 = region_of(result, run, "layer:0");
    const region_aggregate* layer1 = region_of(result, run, "layer:1");
    BOOST_REQUIRE(replay && layer0 && layer1);
    BOOST_TEST(replay->cpu_time_ns == 49'000);  // the launch's CPU time stays with the launching region
    BOOST_TEST(replay->calls == 1u);
    BOOST_TEST(*replay->device_time_ns == 0);
    BOOST_TEST(*layer0->device_time_ns == 4'000);  // owned by the capture-time region, in the replay's run
    BOOST_TEST(*layer1->device_time_ns == 6'000);
    BOOST_TEST(layer0->calls == 0u);  // not called in this run: only its captured work ran here
    BOOST_TEST(layer0->cpu_time_ns == 0);
    BOOST_TEST(*run.residual_device_ns == 0);
  }
  BOOST_TEST(warnings_with(result.warnings, warning_code::graph_captured_before_profiling).empty());

  // Launch attribution: the whole graph is the launching region's (rule 6), as before.
  const analysis_result by_launch = analyze(t, step_runs({"layer_(.*)=layer", "replay"}, graph_attribution::launch));
  for (const run_result& run : by_launch.runs) {
    BOOST_TEST(*region_of(by_launch, run, "region:replay")->device_time_ns == 10'000);
    BOOST_TEST(region_of(by_launch, run, "layer:0") == nullptr);
  }
}

// docs/design.md, rule 20 with rule 15: a replayed kernel is an op of the region its device time goes
// to, the capturing one; the launch's CPU row stays with the launching region and keeps what it launched
// (its device times go by launch, as the key averages'). By launch, every row is the launching region's.
BOOST_AUTO_TEST_CASE(cuda_graph_replayed_kernels_are_ops_of_the_region_that_captured_them) {
  graph_program p = captured_in_two_layers();
  const trace& t = p.stop();
  const auto ops_of = [](const analysis_result& result, const std::string& id) {
    std::vector<std::tuple<std::string, device_type, std::uint64_t, std::int64_t, std::int64_t>> rows;
    for (const region_op_rows& entry : result.region_ops) {
      const bool match = entry.region == region_op_rows::residual ? id == region_op_rows::residual_id
                                                                  : result.regions.at(entry.region).id == id;
      if (!match) continue;
      for (const key_average_row& row : entry.rows) {
        rows.emplace_back(row.key, row.type, row.count, row.cpu_time_total_ns, row.device_time_total_ns.value_or(-1));
      }
    }
    return rows;
  };
  using rows = std::vector<std::tuple<std::string, device_type, std::uint64_t, std::int64_t, std::int64_t>>;
  const analysis_result by_capture = analyze(t, step_runs({"layer_(.*)=layer", "replay"}));
  BOOST_TEST((ops_of(by_capture, "layer:0") == rows{{"layer0()", device_type::cuda, 2, 0, 8'000}}));
  BOOST_TEST((ops_of(by_capture, "layer:1") == rows{{"layer1()", device_type::cuda, 2, 0, 12'000}}));
  BOOST_TEST((ops_of(by_capture, "region:replay") == rows{{"cudaGraphLaunch", device_type::cpu, 2, 2'000, 20'000}}));
  BOOST_TEST(ops_of(by_capture, "(residual)").empty());

  const analysis_result by_launch = analyze(t, step_runs({"layer_(.*)=layer", "replay"}, graph_attribution::launch));
  BOOST_TEST((ops_of(by_launch, "region:replay") == rows{{"layer1()", device_type::cuda, 2, 0, 12'000},
                                                         {"layer0()", device_type::cuda, 2, 0, 8'000},
                                                         {"cudaGraphLaunch", device_type::cpu, 2, 2'000, 20'000}}));
}

BOOST_AUTO_TEST_CASE(cuda_graph_capture_time_nesting_shows_in_the_region_tree) {
  graph_program p;
  const std::int64_t outer = graph_program::now();
  const std::int64_t inner = graph_program::now();
  p.make_nodes(20, {7});
  p.range(inner, graph_program::now(), "layer_0");
  p.make_nodes(21, {8});  // inside block, outside layer_0
  p.range(outer, graph_program::now(), "block");
  p.instantiate(22, {{207, 7}, {208, 8}});
  const std::int64_t base = graph_program::now() + 10'000'000;
  p.range(base, base + 100'000, "step");
  p.graph_launch(60, base + 2'000, base + 3'000);  // outside every region of the run
  p.replayed_kernel(60, base + 10'000, base + 13'000, 207);
  p.replayed_kernel(60, base + 13'000, base + 18'000, 208);
  const trace& t = p.stop();

  const analysis_result result = analyze(t, step_runs({"block", "layer_(.*)=layer"}));
  BOOST_REQUIRE_EQUAL(result.runs.size(), 1u);
  const run_result& run = result.runs[0];
  const region_aggregate* block = region_of(result, run, "region:block");
  BOOST_REQUIRE(block != nullptr);
  BOOST_TEST(*block->device_time_ns == 8'000);  // the topmost capture-time region owns both
  BOOST_TEST(region_of(result, run, "layer:0") == nullptr);  // nested: topmost-owner rule
  BOOST_TEST(*run.residual_device_ns == 0);
  BOOST_REQUIRE_EQUAL(run.tree.size(), 2u);
  const tree_node& top = run.tree[0];
  const tree_node& nested = run.tree[1];
  BOOST_TEST(result.tree_regions[top.region].id == "region:block");
  BOOST_TEST(*top.device_time_ns == 8'000);  // equals its region's
  BOOST_TEST(*top.self_device_time_ns == 5'000);
  BOOST_TEST(result.tree_regions[nested.region].id == "layer:0");
  BOOST_TEST(nested.parent == 0u);
  BOOST_TEST(*nested.device_time_ns == 3'000);
  BOOST_TEST(*nested.self_device_time_ns == 3'000);
  BOOST_TEST(nested.calls == 0u);
}

BOOST_AUTO_TEST_CASE(cuda_graph_captured_before_profiling_goes_by_launch_and_is_counted) {
  graph_program p;
  const std::int64_t base = graph_program::now() + 10'000'000;
  p.range(base, base + 100'000, "step");
  p.range(base + 1'000, base + 50'000, "replay");
  p.graph_launch(70, base + 2'000, base + 3'000);
  p.replayed_kernel(70, base + 10'000, base + 12'500, 901);  // node 901 was never seen made
  p.replayed_kernel(70, base + 12'500, base + 13'000, 902);
  const trace& t = p.stop();
  BOOST_REQUIRE_EQUAL(t.graph_ops.size(), 2u);
  BOOST_TEST(t.graph_ops[0].capture_correlation_id == 0u);

  const analysis_result result = analyze(t, step_runs({"replay"}));
  BOOST_TEST(*region_of(result, result.runs[0], "region:replay")->device_time_ns == 3'000);
  const auto counted = warnings_with(result.warnings, warning_code::graph_captured_before_profiling);
  BOOST_REQUIRE_EQUAL(counted.size(), 1u);
  BOOST_TEST(counted[0]->source == warning_source::core);
  BOOST_TEST(counted[0]->message.rfind("2 device op(s) of CUDA graph replays (3000 ns of device time) have no "
                                       "capture-time region",
                                       0) == 0);
  // Asked for launch attribution, nothing is missing: no warning.
  const analysis_result by_launch = analyze(t, step_runs({"replay"}, graph_attribution::launch));
  BOOST_TEST(warnings_with(by_launch.warnings, warning_code::graph_captured_before_profiling).empty());
}

BOOST_AUTO_TEST_CASE(cuda_graph_memcpy_and_memset_nodes_of_explicit_construction_are_attributed) {
  graph_program p;
  const std::int64_t upload = graph_program::now();
  p.make_nodes(30, {3}, CU_GRAPH_NODE_TYPE_MEMCPY, CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddMemcpyNode_v10000);
  p.range(upload, graph_program::now(), "upload");
  const std::int64_t clear = graph_program::now();
  p.make_nodes(31, {4}, CU_GRAPH_NODE_TYPE_MEMSET, CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddMemsetNode_v10000);
  // An event node made in the same region: not a kernel, copy or memset, so not noted.
  p.make_nodes(32, {5}, CU_GRAPH_NODE_TYPE_EVENT_RECORD, CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddEventRecordNode_v11010);
  p.range(clear, graph_program::now(), "clear");
  p.instantiate(33, {{303, 3}}, CU_GRAPH_NODE_TYPE_MEMCPY);
  p.instantiate(34, {{304, 4}}, CU_GRAPH_NODE_TYPE_MEMSET);
  const std::int64_t base = graph_program::now() + 10'000'000;
  p.range(base, base + 100'000, "step");
  p.graph_launch(80, base + 2'000, base + 3'000);
  p.replayed_copy(80, base + 10'000, base + 11'000, 303);
  p.replayed_set(80, base + 11'000, base + 11'250, 304);
  p.replayed_kernel(80, base + 12'000, base + 12'100, 5);  // as if node 5 ran: it was never noted
  const trace& t = p.stop();
  BOOST_REQUIRE_EQUAL(t.graph_ops.size(), 3u);
  BOOST_TEST(t.graph_ops[0].capture_correlation_id == 30u);
  BOOST_TEST(t.graph_ops[1].capture_correlation_id == 31u);
  BOOST_TEST(t.graph_ops[2].capture_correlation_id == 0u);

  const analysis_result result = analyze(t, step_runs({"upload", "clear"}));
  const run_result& run = result.runs[0];
  BOOST_TEST(*region_of(result, run, "region:upload")->device_time_ns == 1'000);
  BOOST_TEST(*region_of(result, run, "region:clear")->device_time_ns == 250);
  BOOST_TEST(*run.residual_device_ns == 100);  // the unnoted node went by launch: outside every region
  BOOST_TEST(warnings_with(result.warnings, warning_code::graph_captured_before_profiling).size() == 1u);
}

BOOST_AUTO_TEST_CASE(cuda_graph_nodes_captured_outside_every_region_keep_the_launch_region) {
  graph_program p;
  p.make_nodes(35, {6});  // no region open: nothing better than the launch's region is known
  const std::int64_t begin = graph_program::now();
  p.make_nodes(36, {7});
  p.range(begin, graph_program::now(), "layer_0");
  p.instantiate(37, {{306, 6}, {307, 7}});
  const std::int64_t base = graph_program::now() + 10'000'000;
  p.range(base, base + 100'000, "step");
  p.range(base + 1'000, base + 50'000, "replay");
  p.graph_launch(85, base + 2'000, base + 3'000);
  p.replayed_kernel(85, base + 10'000, base + 10'700, 306);
  p.replayed_kernel(85, base + 10'700, base + 11'000, 307);
  const trace& t = p.stop();
  const analysis_result result = analyze(t, step_runs({"layer_(.*)=layer", "replay"}));
  const run_result& run = result.runs[0];
  BOOST_TEST(*region_of(result, run, "region:replay")->device_time_ns == 700);
  BOOST_TEST(*region_of(result, run, "layer:0")->device_time_ns == 300);
  BOOST_TEST(warnings_with(result.warnings, warning_code::graph_captured_before_profiling).empty());
}

BOOST_AUTO_TEST_CASE(cuda_graph_nodes_of_another_session_do_not_leak_into_the_next) {
  // Session 1 captures node 1; session 2 replays its clone: the capture is not in session 2's trace.
  {
    graph_program first;
    first.make_nodes(40, {1});
    (void)first.stop();
  }
  // Between sessions the callback notes nothing.
  resource_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 2, 0, CU_GRAPH_NODE_TYPE_KERNEL);
  graph_program second;
  second.instantiate(41, {{101, 1}, {102, 2}});
  const std::int64_t base = graph_program::now() + 10'000'000;
  second.range(base, base + 100'000, "step");
  second.graph_launch(42, base + 2'000, base + 3'000);
  second.replayed_kernel(42, base + 10'000, base + 11'000, 101);
  second.replayed_kernel(42, base + 11'000, base + 12'000, 102);
  const trace& t = second.stop();
  BOOST_REQUIRE_EQUAL(t.graph_ops.size(), 2u);
  BOOST_TEST(t.graph_ops[0].capture_correlation_id == 0u);
  BOOST_TEST(t.graph_ops[1].capture_correlation_id == 0u);
  // After the session the callback notes nothing either.
  resource_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 3, 0, CU_GRAPH_NODE_TYPE_KERNEL);
  BOOST_TEST(collect::graph_node_log::instance().end().empty());
}

BOOST_AUTO_TEST_CASE(cuda_graph_capture_call_is_the_innermost_api_call_around_the_callback) {
  // The node is made inside cuLaunchKernel, itself inside cudaLaunchKernel (one correlation id for both);
  // the calls just before and after it on the thread made nothing.
  graph_program p;
  const std::int64_t before = graph_program::now();
  const std::int64_t outer_start = graph_program::now();
  const std::int64_t inner_start = graph_program::now();
  resource_callback(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, 9, 0, CU_GRAPH_NODE_TYPE_KERNEL);
  const std::int64_t inner_end = graph_program::now();
  const std::int64_t outer_end = graph_program::now();
  p.call(90, CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v10010, before, before);
  p.call(91, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, outer_start, outer_end);
  p.add(api_call(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 91,
                 static_cast<std::uint64_t>(inner_start), static_cast<std::uint64_t>(inner_end),
                 static_cast<std::uint32_t>(getpid()), this_thread()));
  p.call(92, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, outer_end + 1, outer_end + 2);
  p.graph_launch(93, outer_end + 40'000'000, outer_end + 40'001'000);
  p.replayed_kernel(93, outer_end + 50'000'000, outer_end + 50'001'000, 9);
  const trace& t = p.stop();
  BOOST_REQUIRE_EQUAL(t.graph_ops.size(), 1u);
  BOOST_TEST(t.graph_ops[0].capture_correlation_id == 91u);
  BOOST_TEST(t.graph_ops[0].graph_node_id == 9u);
  BOOST_TEST(t.graph_ops[0].op == 0u);
}

BOOST_AUTO_TEST_CASE(cuda_graph_replays_in_an_imported_trace_are_counted_and_go_by_launch) {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "step", "ts": 0, "dur": 100, "pid": 1, "tid": 1},
    {"ph": "X", "cat": "user_annotation", "name": "replay", "ts": 1, "dur": 50, "pid": 1, "tid": 1},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "ts": 2, "dur": 1, "pid": 1, "tid": 1,
     "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "k0", "ts": 10, "dur": 4, "pid": 0, "tid": 7,
     "args": {"correlation": 5, "device": 0, "stream": 7, "graph node id": 101, "graph id": 3}},
    {"ph": "X", "cat": "kernel", "name": "k1", "ts": 14, "dur": 6, "pid": 0, "tid": 7,
     "args": {"correlation": 5, "device": 0, "stream": 7, "graph node id": 102}},
    {"ph": "X", "cat": "kernel", "name": "plain", "ts": 30, "dur": 1, "pid": 0, "tid": 7,
     "args": {"correlation": 5, "device": 0, "stream": 7, "graph node id": 0}}
  ]})";
  const trace t = import_kineto_trace_text(text, "graphs.json");
  BOOST_TEST(t.graph_ops.empty());  // a trace holds no capture map
  const auto counted = warnings_with(t.warnings, warning_code::graph_replay_kernels);
  BOOST_REQUIRE_EQUAL(counted.size(), 1u);
  BOOST_TEST(counted[0]->source == warning_source::import);
  BOOST_TEST(counted[0]->message.rfind("2 device ops of CUDA graph replays", 0) == 0);
  const analysis_result result = analyze(t, step_runs({"replay"}));
  BOOST_TEST(*region_of(result, result.runs[0], "region:replay")->device_time_ns == 11'000);
}

BOOST_AUTO_TEST_CASE(cuda_graph_replays_round_trip_through_the_chrome_trace_by_launch) {
  graph_program p = captured_in_two_layers();
  const trace& t = p.stop();
  std::ostringstream chrome;
  write_chrome_trace(t, chrome);
  const trace back = import_kineto_trace_text(chrome.str(), "graphs_trace.json");
  BOOST_TEST(back.graph_ops.empty());
  const auto counted = warnings_with(back.warnings, warning_code::graph_replay_kernels);
  BOOST_REQUIRE_EQUAL(counted.size(), 1u);
  BOOST_TEST(counted[0]->message.rfind("4 device ops of CUDA graph replays", 0) == 0);
  const analysis_result result = analyze(back, step_runs({"layer_(.*)=layer", "replay"}));
  for (const run_result& run : result.runs) {
    BOOST_TEST(*region_of(result, run, "region:replay")->device_time_ns == 10'000);  // by launch
  }
}

BOOST_AUTO_TEST_CASE(cuda_graph_attribution_names_parse_and_print) {
  BOOST_TEST((parse_graph_attribution("capture") == graph_attribution::capture));
  BOOST_TEST((parse_graph_attribution("launch") == graph_attribution::launch));
  BOOST_TEST(!parse_graph_attribution("Capture").has_value());
  BOOST_TEST(!parse_graph_attribution("").has_value());
  BOOST_TEST(to_string(graph_attribution::capture) == "capture");
  BOOST_TEST(to_string(graph_attribution::launch) == "launch");
  BOOST_TEST((analysis_options{}.graph_attribution == graph_attribution::capture));
}

BOOST_AUTO_TEST_SUITE_END()
